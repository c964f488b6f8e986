// A two-bounce path tracer with differentiable material parameters, written once over the
// float type (kiln::Float for the AD benchmark, bench/ad_bench.cpp; kiln::Float64 for the
// gradient test, tests/cpp/test_autodiff_control.cpp): three materials (diffuse albedo,
// glossy roughness, emitter strength, with the arithmetic of bench/path_workload.h) as C++
// classes behind a Registry, a symbolic while_loop that stores its trajectory for reverse
// mode, and dispatch() per bounce.
#pragma once

#include "path_workload.h"

#include <kiln/kiln.h>

#include <memory>
#include <tuple>
#include <type_traits>

namespace bench::ad_scene {

template <typename V> using V3 = kiln::Array3<V>;

/// The next uniform draw of the lane's generator, in V's precision.
template <typename V> V uniform(kiln::PCG32& rng) {
  if constexpr (std::is_same_v<V, kiln::Float64>)
    return rng.next_float64();
  else
    return rng.next_float32();
}

template <typename V> class Material {
 public:
  using Bounce = std::tuple<kiln::PCG32, V3<V>, V3<V>, V3<V>>;
  virtual ~Material() = default;
  /// The generator, throughput, radiance and direction after a bounce.
  virtual Bounce bounce(kiln::PCG32 rng, V3<V> throughput, V3<V> radiance, V3<V> direction) const = 0;
};

template <typename V> class Diffuse final : public Material<V> {
 public:
  V albedo;
  typename Material<V>::Bounce bounce(kiln::PCG32 rng, V3<V> t, V3<V> l, V3<V> d) const override {
    V u1 = uniform<V>(rng), u2 = uniform<V>(rng);
    path::diffuse_bounce(d, t, albedo, u1, u2);
    return {rng, t, l, d};
  }
};

template <typename V> class Glossy final : public Material<V> {
 public:
  V roughness;
  typename Material<V>::Bounce bounce(kiln::PCG32 rng, V3<V> t, V3<V> l, V3<V> d) const override {
    V u1 = uniform<V>(rng), u2 = uniform<V>(rng), u3 = uniform<V>(rng);
    path::glossy_bounce(d, t, roughness, u1, u2, u3);
    return {rng, t, l, d};
  }
};

template <typename V> class Emitter final : public Material<V> {
 public:
  V strength;
  typename Material<V>::Bounce bounce(kiln::PCG32 rng, V3<V> t, V3<V> l, V3<V> d) const override {
    path::emit<V>(l, t, strength);
    return {rng, t, l, d};
  }
};

/// The materials and their registry. Derivatives call the materials again after the
/// render is traced, so a scene must outlive the gradients computed from it (hold it in a
/// shared_ptr).
template <typename V> struct Scene {
  Diffuse<V> diffuse;
  Glossy<V> glossy;
  Emitter<V> emitter;
  kiln::Registry<Material<V>> registry;
  Scene() {
    registry.add(&diffuse);
    registry.add(&glossy);
    registry.add(&emitter);
  }
};

/// The radiance (summed over the channels) of `n` paths of two bounces each, with the
/// scene's parameters set to albedo, roughness and strength.
template <typename V>
V render(const std::shared_ptr<Scene<V>>& scene, const V& albedo, const V& roughness, const V& strength, size_t n) {
  using kiln::UInt32;
  scene->diffuse.albedo = albedo;
  scene->glossy.roughness = roughness;
  scene->emitter.strength = strength;
  using T = typename V::Value;
  UInt32 lane = kiln::arange<UInt32>(n);
  uint32_t side = 1;
  while (side * side < n) side *= 2;
  T scale = T(2) / T(side);
  V3<V> direction = path::normalize3<V>(V3<V>{(kiln::cast<T>(lane % side) + T(0.5)) * scale - T(1),
                                              (kiln::cast<T>(lane / side) + T(0.5)) * scale - T(1), V(T(1))});
  using State = std::tuple<kiln::PCG32, V3<V>, V3<V>, V3<V>, UInt32>;
  State initial{kiln::PCG32(n), V3<V>(kiln::full<V>(T(1), n)), V3<V>(kiln::zeros<V>(n)), direction,
                kiln::zeros<UInt32>(n)};
  auto more = [](const kiln::PCG32&, const V3<V>&, const V3<V>&, const V3<V>&, const UInt32& depth) {
    return depth < 2u;
  };
  auto step = [scene](const kiln::PCG32& r, const V3<V>& t, const V3<V>& l, const V3<V>& d, const UInt32& depth) {
    kiln::PCG32 g = r;
    UInt32 material = path::draw_material<V, UInt32>(uniform<V>(g));
    auto [g2, t2, l2, d2] = kiln::dispatch(
        scene->registry, material,
        [](const Material<V>& m, const kiln::PCG32& a, const V3<V>& b, const V3<V>& c, const V3<V>& e) {
          return m.bounce(a, b, c, e);
        },
        std::make_tuple(g, t, l, d), std::nullopt, "material");
    return State{g2, t2, l2, d2, depth + 1u};
  };
  State final = kiln::while_loop(initial, more, step, std::nullopt, "bounce", kiln::LoopDerivative{2, false});
  const V3<V>& radiance = std::get<2>(final);
  return radiance.x + radiance.y + radiance.z;
}

}  // namespace bench::ad_scene
