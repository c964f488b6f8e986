// What the accel tests share: rays and hits on the host, a brute-force reference tracer in
// double precision over the same shape descriptions make_accel takes (the textbook sphere
// quadratic, the disk in local space through the inverse of to_world, Möller–Trumbore for
// triangles), and the three ways of tracing: the raw host functions, and Kiln kernels on
// the LLVM backend or the reference interpreter.
#pragma once

#include <kiln/render/accel.h>
#include <kiln/runtime.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace kiln::render::testing {

inline constexpr float kInf = std::numeric_limits<float>::infinity();

/// One ray on the host.
struct HostRay {
  std::array<float, 3> o, d;
  float maxt = kInf;
};

/// One lane of a host function's outputs, or of a PreliminaryIntersection.
struct HostHit {
  float t, u, v;
  uint32_t prim, shape;
};

/// A hit as the reference computes it.
struct ReferenceHit {
  double t, u, v;
  uint32_t prim, shape;
};

using Vec3 = std::array<double, 3>;

inline Vec3 to_double(const std::array<float, 3>& v) { return {v[0], v[1], v[2]}; }
inline Vec3 sub(const Vec3& a, const Vec3& b) { return {a[0] - b[0], a[1] - b[1], a[2] - b[2]}; }
inline double dot(const Vec3& a, const Vec3& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
inline Vec3 cross(const Vec3& a, const Vec3& b) {
  return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}

/// A hit of one shape and how close the ray came to deciding otherwise (0: on an edge).
struct Candidate {
  ReferenceHit hit;
  double margin;
};

/// The first t in [0, maxt] where the ray meets the sphere, from the quadratic
/// |o + t·d - c|² = r² solved in double (the cancellation-free form of the roots). A sphere
/// of radius 0 is never hit (accel.h).
inline std::optional<Candidate> reference_sphere(const HostRay& ray, const AccelSphere& sphere) {
  if (sphere.radius == 0) return std::nullopt;
  Vec3 oc = sub(to_double(ray.o), sphere.center), d = to_double(ray.d);
  double a = dot(d, d), b = 2 * dot(oc, d), c = dot(oc, oc) - sphere.radius * sphere.radius;
  double discriminant = b * b - 4 * a * c;
  if (discriminant < 0) return std::nullopt;
  double q = -0.5 * (b + std::copysign(std::sqrt(discriminant), b));
  double t0 = std::min(q / a, c / q), t1 = std::max(q / a, c / q);
  double margin = discriminant / (b * b + 4 * a * std::fabs(c) + 1e-300);
  for (double t : {t0, t1}) {
    if (t >= 0 && t <= ray.maxt) return Candidate{{t, 0, 0, 0, 0}, margin};
  }
  return std::nullopt;
}

/// The ray in the disk's local space (through the inverse of to_world's 3×3 part), where
/// the disk is x² + y² <= 1 at z = 0.
inline std::optional<Candidate> reference_disk(const HostRay& ray, const AccelDisk& disk) {
  const std::array<double, 16>& m = disk.to_world;
  Vec3 rows[3] = {{m[0], m[1], m[2]}, {m[4], m[5], m[6]}, {m[8], m[9], m[10]}};
  Vec3 columns[3] = {cross(rows[1], rows[2]), cross(rows[2], rows[0]), cross(rows[0], rows[1])};
  double determinant = dot(rows[0], columns[0]);
  auto to_local = [&](const Vec3& v) {
    return Vec3{(columns[0][0] * v[0] + columns[1][0] * v[1] + columns[2][0] * v[2]) / determinant,
                (columns[0][1] * v[0] + columns[1][1] * v[1] + columns[2][1] * v[2]) / determinant,
                (columns[0][2] * v[0] + columns[1][2] * v[1] + columns[2][2] * v[2]) / determinant};
  };
  Vec3 o = to_local(sub(to_double(ray.o), {m[3], m[7], m[11]})), d = to_local(to_double(ray.d));
  double t = -o[2] / d[2];
  if (!(t >= 0 && t <= ray.maxt)) return std::nullopt;
  double x = o[0] + t * d[0], y = o[1] + t * d[1];
  if (!(x * x + y * y <= 1)) return std::nullopt;
  return Candidate{{t, x, y, 0, 0}, 1 - (x * x + y * y)};
}

/// Triangle `face` of `mesh` by Möller–Trumbore in double.
inline std::optional<Candidate> reference_triangle(const HostRay& ray, const AccelTriangles& mesh, uint32_t face) {
  auto vertex = [&](int corner) {
    uint32_t i = mesh.faces[3 * face + corner];
    return Vec3{mesh.positions[3 * i], mesh.positions[3 * i + 1], mesh.positions[3 * i + 2]};
  };
  Vec3 p0 = vertex(0), e1 = sub(vertex(1), p0), e2 = sub(vertex(2), p0), d = to_double(ray.d);
  Vec3 p = cross(d, e2);
  double determinant = dot(e1, p);
  if (determinant == 0 || !std::isfinite(determinant)) return std::nullopt;
  Vec3 s = sub(to_double(ray.o), p0);
  double u = dot(s, p) / determinant;
  Vec3 q = cross(s, e1);
  double v = dot(d, q) / determinant, t = dot(e2, q) / determinant;
  if (!(u >= 0 && v >= 0 && u + v <= 1 && t >= 0 && t <= ray.maxt)) return std::nullopt;
  return Candidate{{t, u, v, face, 0}, std::min({u, v, 1 - u - v})};
}

/// The shapes of a scene, kept on the host beside the Accel built from them.
struct ReferenceScene {
  std::vector<AccelGeometry> shapes;

  /// The closest hit, or nothing; `ambiguous` is set when float rounding could change the
  /// answer (a hit near an edge, near maxt, or two hits at almost the same t).
  std::optional<ReferenceHit> trace(const HostRay& ray, bool* ambiguous = nullptr) const {
    std::vector<Candidate> found;
    for (uint32_t shape = 0; shape < shapes.size(); ++shape) {
      auto add = [&](std::optional<Candidate> candidate) {
        if (!candidate) return;
        candidate->hit.shape = shape;
        found.push_back(*candidate);
      };
      if (auto* sphere = std::get_if<AccelSphere>(&shapes[shape])) add(reference_sphere(ray, *sphere));
      if (auto* disk = std::get_if<AccelDisk>(&shapes[shape])) add(reference_disk(ray, *disk));
      if (auto* mesh = std::get_if<AccelTriangles>(&shapes[shape])) {
        for (uint32_t face = 0; face < mesh->faces.size() / 3; ++face) add(reference_triangle(ray, *mesh, face));
      }
    }
    std::optional<ReferenceHit> closest;
    for (const Candidate& candidate : found) {
      if (!closest || candidate.hit.t < closest->t) closest = candidate.hit;
    }
    if (ambiguous) {
      *ambiguous = false;
      for (const Candidate& candidate : found) {
        double t = candidate.hit.t;
        bool near_closest = candidate.hit.t != closest->t && std::fabs(t - closest->t) <= 1e-4 * (1 + t);
        *ambiguous |= candidate.margin < 1e-4 || near_closest || std::fabs(ray.maxt - t) <= 1e-4 * (1 + t);
      }
    }
    return closest;
  }
};

/// What the outputs hold before a call: the host functions write every lane (a miss where
/// a lane is inactive), so none may be left like this.
inline constexpr HostHit kUntouched = {-7.0f, -7.0f, -7.0f, 0xDEADu, 0xBEEFu};

/// Rays and a mask staged as a kernel stages a host call's inputs (one column per input).
struct StagedRays {
  std::vector<std::vector<float>> columns;
  std::vector<int32_t> mask;
  const void* inputs[7];

  StagedRays(const std::vector<HostRay>& rays, const std::vector<bool>& active)
      : columns(7, std::vector<float>(rays.size())), mask(rays.size()) {
    for (size_t lane = 0; lane < rays.size(); ++lane) {
      for (int axis = 0; axis < 3; ++axis) {
        columns[axis][lane] = rays[lane].o[axis];
        columns[3 + axis][lane] = rays[lane].d[axis];
      }
      columns[6][lane] = rays[lane].maxt;
      mask[lane] = active[lane] ? -1 : 0;
    }
    for (int k = 0; k < 7; ++k) inputs[k] = columns[k].data();
  }
  /// Calls `target`'s function on all the lanes at once, as a kernel of that width would.
  void call(const HostCallTarget& target, void* const* outputs) const {
    target.function->pointer()(target.context, uint32_t(mask.size()), mask.data(), inputs, outputs);
  }
};

/// The ways the tests trace: the raw host functions called directly on all the rays at
/// once (one packet of that width; Embree only), or Accel's queries in a kernel on either
/// backend.
enum class Route { Raw, Llvm, Interpreter };

inline std::string route_name(Route route) {
  return route == Route::Raw ? "Raw" : route == Route::Llvm ? "Llvm" : "Interpreter";
}

/// An accelerator and a way of tracing it.
struct Tracer {
  AccelKind kind;
  Route route;
};

inline std::string tracer_name(const Tracer& tracer) {
  return std::string(tracer.kind == AccelKind::Embree ? "Embree" : "Kiln") + route_name(tracer.route);
}

/// Runs kernels on the reference interpreter while it lives, when asked to.
class BackendScope {
 public:
  explicit BackendScope(Route route) : previous_(flag(Flag::Interpreter)) {
    set_flag(Flag::Interpreter, route == Route::Interpreter);
  }
  ~BackendScope() { set_flag(Flag::Interpreter, previous_); }

 private:
  bool previous_;
};

/// `rays` and `active` as Kiln arrays.
inline std::pair<Ray3f, Bool> to_kiln(const std::vector<HostRay>& rays, const std::vector<bool>& active) {
  StagedRays staged(rays, active);
  auto column = [&](int k) { return Float::from(staged.columns[k]); };
  std::unique_ptr<bool[]> mask(new bool[rays.size()]);
  for (size_t lane = 0; lane < rays.size(); ++lane) mask[lane] = active[lane];
  return {Ray3f{Array3f(column(0), column(1), column(2)), Array3f(column(3), column(4), column(5)), column(6)},
          Bool::from(mask.get(), rays.size())};
}

/// The closest hits of `rays` by `route` (outputs start at kUntouched); the
/// kernels give them Accel's miss.
inline std::vector<HostHit> intersect_by(Route route, const Accel& accel, const std::vector<HostRay>& rays,
                                         const std::vector<bool>& active) {
  size_t width = rays.size();
  std::vector<float> t(width, kUntouched.t), u(width, kUntouched.u), v(width, kUntouched.v);
  std::vector<uint32_t> prim(width, kUntouched.prim), shape(width, kUntouched.shape);
  if (route == Route::Raw) {
    void* outputs[5] = {t.data(), u.data(), v.data(), prim.data(), shape.data()};
    StagedRays(rays, active).call(dynamic_cast<const HostCallAccel&>(accel).intersect_target(), outputs);
  } else {
    BackendScope backend(route);
    auto [ray, mask] = to_kiln(rays, active);
    PreliminaryIntersection hit = accel.intersect(ray, mask);
    eval(hit.t, hit.prim_uv.x, hit.prim_uv.y, hit.prim_index, hit.shape_index);
    t = hit.t.to_vector(), u = hit.prim_uv.x.to_vector(), v = hit.prim_uv.y.to_vector();
    prim = hit.prim_index.to_vector(), shape = hit.shape_index.to_vector();
  }
  std::vector<HostHit> hits(width);
  for (size_t lane = 0; lane < width; ++lane) hits[lane] = {t[lane], u[lane], v[lane], prim[lane], shape[lane]};
  return hits;
}

/// Whether each ray is occluded, by `route` (1 or 0; outputs start at 2).
inline std::vector<uint8_t> occluded_by(Route route, const Accel& accel, const std::vector<HostRay>& rays,
                                        const std::vector<bool>& active) {
  std::vector<uint8_t> hit(rays.size(), 2);
  if (route == Route::Raw) {
    void* outputs[1] = {hit.data()};
    StagedRays(rays, active).call(dynamic_cast<const HostCallAccel&>(accel).occluded_target(), outputs);
  } else {
    BackendScope backend(route);
    auto [ray, mask] = to_kiln(rays, active);
    Bool occluded = accel.occluded(ray, mask);
    const bool* values = occluded.data();
    for (size_t lane = 0; lane < rays.size(); ++lane) hit[lane] = values[lane];
  }
  return hit;
}

}  // namespace kiln::render::testing
