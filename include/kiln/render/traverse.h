// Scene parameters (Mitsuba 3's traverse()): every object lists the values it owns under
// Mitsuba's names, so `kr.traverse(scene)` can read and change them.
//
// What an implementation guarantees:
// - A parameter is a reference into the object that owns it; after changing values the
//   caller calls parameters_changed() on the object with the names it changed, and the
//   object updates what derives from them (e.g. the ray tracer's copy of a mesh).
// - Kiln arrays put here are opaque (kernel parameters, not baked constants) and carry
//   their full key as label once the scene has been traversed.
#pragma once

#include <kiln/render/transform.h>
#include <kiln/tensor.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <variant>

namespace kiln::render {

class Object;

/// What a parameter refers to: a Kiln array, a tensor (whose shape may change), a
/// transform, or a host setting (film size).
using ParameterRef = std::variant<Float*, Array3f*, UInt32*, Transform4f*, std::array<uint32_t, 2>*, TensorXf*>;

/// Parameter kinds (Mitsuba's ParamFlags).
namespace param_flags {
inline constexpr uint32_t kDifferentiable = 0;
inline constexpr uint32_t kNonDifferentiable = 1u << 0;
/// Its derivatives have visibility (silhouette) terms besides the interior ones: render()
/// gives the interior terms; projective integrators add the visibility terms.
inline constexpr uint32_t kDiscontinuous = 1u << 1;
/// Kiln's own: a new value may have another size (a mesh's arrays, whose owner checks the
/// sizes together when the parameters are updated); other arrays keep theirs.
inline constexpr uint32_t kResizable = 1u << 2;
}  // namespace param_flags

class TraversalCallback {
 public:
  virtual ~TraversalCallback() = default;
  /// A parameter of the object being traversed, named relative to it ("reflectance").
  virtual void put(const std::string& name, ParameterRef ref, uint32_t flags) = 0;
  /// A parameter whose storage `owner` keeps alive (an attribute of a plugin written in
  /// Python, which the plugin may rebind): a callback that keeps `ref` keeps `owner` too,
  /// so the value it refers to is stale after a rebinding but never freed (as Mitsuba's
  /// SceneParameters hold references). By default put() without the owner.
  virtual void put(const std::string& name, ParameterRef ref, uint32_t flags, std::shared_ptr<const void> owner) {
    (void)owner;
    put(name, ref, flags);
  }
  /// A child object, whose parameters are prefixed with `name` (e.g. "film", or a
  /// shape's "bsdf").
  virtual void put_object(const std::string& name, Object* child) = 0;
};

}  // namespace kiln::render
