// The arithmetic of the path-tracer-shaped control-flow benchmark (bench/control_bench.cpp),
// written once as templates over the lane type, so that Kiln (V = kiln::Float, V3 =
// kiln::Array3f, inside while_loop and dispatch) and the hand-written baseline (V = float,
// one lane at a time, bench/baselines.cpp) compute the same thing bit for bit. Like
// workloads.h this header does not include Kiln.
//
// A "path" per lane: up to kMaxBounces bounces, each at a material drawn at random (diffuse,
// glossy or emitter), then Russian roulette on the throughput. Only +, -, *, /, sqrt, abs,
// comparisons and selects are used (no std::sin/std::exp, whose results differ from Kiln's
// math library), so both sides round identically; sin and exp are approximated here.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

namespace bench::path {

inline constexpr uint32_t kMaxBounces = 16;
/// Registry ids, in registration order.
inline constexpr uint32_t kDiffuse = 1, kGlossy = 2, kEmitter = 3;

/// The materials' scalar parameters (literals in Kiln's kernels).
struct Parameters {
  float albedo = 0.7f;     ///< diffuse reflectance
  float roughness = 0.3f;  ///< glossy lobe width
  float strength = 4.0f;   ///< emitted radiance
};

/// One lane's vector for the baseline (Kiln uses kiln::Array3f).
struct Float3 {
  float x, y, z;
};

/// Scalar counterparts of kiln::select(), so the templates read the same for both.
inline float select(bool mask, float if_true, float if_false) { return mask ? if_true : if_false; }
inline uint32_t select(bool mask, uint32_t if_true, uint32_t if_false) { return mask ? if_true : if_false; }

/// min/max written as selects (Kiln's and std::'s differ on ties between zeros).
template <typename V> V min_of(const V& a, const V& b) { return select(a < b, a, b); }
template <typename V> V max_of(const V& a, const V& b) { return select(a > b, a, b); }

template <typename V, typename V3> V dot3(const V3& a, const V3& b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
template <typename V, typename V3> V3 normalize3(const V3& a) {
  using std::sqrt;
  V inverse = 1.f / sqrt(dot3<V>(a, a));
  return V3{a.x * inverse, a.y * inverse, a.z * inverse};
}

/// sin(x) for x in [-pi, pi]: a parabola with one correction step (error below 1e-3).
template <typename V> V sin_approx(const V& x) {
  using std::abs;
  V y = x * 1.27323954f - x * abs(x) * 0.405284735f;
  return (y * abs(y) - y) * 0.225f + y;
}
/// cos(x) for x in [-pi, pi], as sin(x + pi/2) wrapped back into [-pi, pi].
template <typename V> V cos_approx(const V& x) {
  V shifted = x + 1.57079633f;
  return sin_approx(select(shifted > 3.14159265f, shifted - 6.28318531f, shifted));
}
/// exp(x) as (1 + x/256)^256: eight squarings.
template <typename V> V exp_approx(const V& x) {
  V y = x * 0.00390625f + 1.f;
  for (int i = 0; i < 8; ++i) y = y * y;
  return y;
}

/// Lambertian: a cosine-weighted direction around -direction (an orthonormal basis after
/// Duff et al. 2017), throughput scaled by the albedo and a tint.
template <typename V, typename V3, typename P>
void diffuse_bounce(V3& direction, V3& throughput, const P& albedo, const V& u1, const V& u2) {
  using std::sqrt;
  V3 n{-direction.x, -direction.y, -direction.z};
  V sign = select(n.z >= 0.f, V(1.f), V(-1.f));
  V a = -1.f / (sign + n.z);
  V b = n.x * n.y * a;
  V3 tangent{1.f + sign * n.x * n.x * a, sign * b, -sign * n.x};
  V3 bitangent{b, sign + n.y * n.y * a, -n.y};
  V r = sqrt(u1);
  V phi = u2 * 6.28318531f - 3.14159265f;
  V lx = r * cos_approx(phi), ly = r * sin_approx(phi), lz = sqrt(max_of(1.f - u1, V(0.f)));
  direction =
      normalize3<V>(V3{tangent.x * lx + bitangent.x * ly + n.x * lz, tangent.y * lx + bitangent.y * ly + n.y * lz,
                       tangent.z * lx + bitangent.z * ly + n.z * lz});
  throughput = V3{throughput.x * albedo * 0.9f, throughput.y * albedo * 0.7f, throughput.z * albedo * 0.5f};
}

/// Glossy: the mirror direction (about the xy plane) jittered by the roughness, weighted
/// by Schlick's Fresnel term ((1 - cos)^5) and an exponential falloff.
template <typename V, typename V3, typename P>
void glossy_bounce(V3& direction, V3& throughput, const P& roughness, const V& u1, const V& u2, const V& u3) {
  using std::abs;
  V3 jittered{direction.x + (u1 * 2.f - 1.f) * roughness, direction.y + (u2 * 2.f - 1.f) * roughness,
              -direction.z + (u3 * 2.f - 1.f) * roughness};
  direction = normalize3<V>(jittered);
  V c = abs(direction.z);
  V k = 1.f - c;
  V k2 = k * k;
  V fresnel = k2 * k2 * k * 0.96f + 0.04f;
  V weight = (fresnel * 0.5f + 0.5f) * exp_approx((c - 1.f) * 2.f);
  throughput = V3{throughput.x * weight * 0.8f, throughput.y * weight * 0.85f, throughput.z * weight * 0.95f};
}

/// Emitter: adds throughput * strength * tint to the radiance (the path then ends).
template <typename V, typename V3, typename P> void emit(V3& radiance, const V3& throughput, const P& strength) {
  radiance = V3{radiance.x + throughput.x * strength * 1.0f, radiance.y + throughput.y * strength * 0.85f,
                radiance.z + throughput.z * strength * 0.6f};
}

/// The next material from a uniform draw: 10% emitter, 45% diffuse, 45% glossy.
template <typename V, typename U> U draw_material(const V& u) {
  return select(u < 0.1f, U(kEmitter), select(u < 0.55f, U(kDiffuse), U(kGlossy)));
}

/// Russian roulette from bounce kRouletteStart on: the path survives with probability
/// min(max component, 0.95) and the throughput is divided by it (before that, p = 1: every
/// draw in [0, 1) survives and the division is exact). `depth` counts the bounces before
/// this one. Returns the survival mask.
inline constexpr uint32_t kRouletteStart = 3;
template <typename V, typename V3, typename U> auto roulette(V3& throughput, const V& u, const U& depth) {
  V p = select(depth < kRouletteStart, V(1.f),
               min_of(max_of(max_of(throughput.x, throughput.y), throughput.z), V(0.95f)));
  throughput = V3{throughput.x / p, throughput.y / p, throughput.z / p};
  return u < p;
}

/// The scalar PCG32 of the reference C implementation (pcg32_srandom_r, pcg32_random_r),
/// with kiln::PCG32's float conversion.
struct Pcg32 {
  static constexpr uint64_t kDefaultState = 0x853c49e6748fea9bULL;
  static constexpr uint64_t kDefaultStream = 0xda3e39cb94b95bdbULL;
  static constexpr uint64_t kMult = 0x5851f42d4c957f2dULL;
  /// Lane i of kiln::PCG32(size): stream kDefaultStream + i.
  explicit Pcg32(uint64_t lane) {
    state = 0;
    inc = ((kDefaultStream + lane) << 1u) | 1u;
    next_uint32();
    state += kDefaultState;
    next_uint32();
  }
  uint32_t next_uint32() {
    uint64_t old = state;
    state = old * kMult + inc;
    uint32_t xorshifted = uint32_t(((old >> 18u) ^ old) >> 27u);
    uint32_t rotation = uint32_t(old >> 59u);
    return (xorshifted >> rotation) | (xorshifted << ((0u - rotation) & 31u));
  }
  float next_float32() { return std::bit_cast<float>((next_uint32() >> 9u) | 0x3f800000u) - 1.f; }
  uint64_t state, inc;
};

/// The camera direction of lane i: pixel (i % 1024, i / 1024) of a 90-degree view.
/// (Kiln's side writes the same operations on arrays in control_bench.cpp.)
inline float pixel_coordinate(uint32_t p) { return (float(p) + 0.5f) * 0.001953125f - 1.f; }

}  // namespace bench::path
