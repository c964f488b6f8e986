// Textures: spatially varying parameters of BSDFs and emitters (Mitsuba 3's Texture).
//
// What an implementation guarantees:
// - eval() returns linear RGB at the interaction's uv (8-bit sRGB images are converted to
//   linear when loaded); eval_1() a single value (the mean of the channels for RGB).
// - mean() is the average over the uv square (used by, e.g., plastic's sampling weights).
// - Every value is a Kiln array the texture owns, registered in traverse() under the
//   parameter name ("value", "data"), so it carries gradients.
#pragma once

#include <kiln/control.h>
#include <kiln/render/interaction.h>
#include <kiln/render/properties.h>
#include <kiln/render/transform.h>

#include <memory>

namespace kiln::render {

class Shape;

class Texture : public Object {
 public:
  PluginKind kind() const override { return PluginKind::Texture; }
  /// The color at `si.uv`.
  virtual Color3f eval(const SurfaceInteraction& si, const Bool& active) const = 0;
  /// A scalar value at `si.uv`.
  virtual Float eval_1(const SurfaceInteraction& si, const Bool& active) const;
  /// The mean over the whole texture.
  virtual Float mean() const = 0;
  /// True when the value does not vary over the surface.
  virtual bool is_constant() const { return false; }
  /// True when the value depends on the shape a ray hit (`si.shape`), so that it cannot be
  /// read at sampled points (an emitter's).
  virtual bool reads_hit_shape() const { return false; }
  /// The shapes whose ids (`si.shape`) the lanes of the next evaluations carry: a scene tells
  /// the textures of its shapes' BSDFs that read the hit shape whenever it traces rays
  /// (Scene::ray_intersect), so they follow the scene being rendered (the `mesh_attribute`
  /// texture reads its values from them, holding them weakly); ignored by other textures.
  virtual void set_scene_shapes(const std::shared_ptr<const Registry<Shape>>& /*shapes*/) {}
};

/// The texture parameter `name` of `props`: a nested texture, a float or an RGB value
/// (wrapped in a constant `rgb` texture), or `fallback` when absent.
std::shared_ptr<Texture> texture_parameter(const Properties& props, const std::string& name, const Color3d& fallback);
/// The same, without a fallback: a missing parameter is an error.
std::shared_ptr<Texture> texture_parameter(const Properties& props, const std::string& name);

/// `uv` mapped by a texture's `to_uv` transform: its 2D affine part (the x and y rows and
/// columns and the translation, as Mitsuba's AffineTransform4f::extract() keeps them).
Array2f transform_uv(const Transform4f& to_uv, const Array2f& uv);

}  // namespace kiln::render
