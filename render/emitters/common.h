// What the emitter plugins share: their emitted-value parameters (intensity, radiance,
// irradiance), the surface emitters' position sampling and, for infinite emitters, the
// bounding sphere of the scene.
#pragma once

#include <kiln/render/emitter.h>
#include <kiln/render/shape.h>
#include <kiln/render/texture.h>

#include <memory>
#include <string>

namespace kiln::render {

/// The sRGB (linear) color of the equal-energy spectrum at luminance 1: the row sums of the
/// CIE XYZ → sRGB matrix, (3.240479 − 1.537150 − 0.498535, ...). Mitsuba's RGB variants
/// give an emitter's uniform spectrum this color.
inline constexpr double kEqualEnergySrgb[3] = {1.204794, 0.948291, 0.908916};

/// texture_parameter(), refusing a texture that reads the shape a ray hit (mesh_attribute):
/// emitters evaluate their textures at sampled points too.
std::shared_ptr<Texture> sampled_texture(const Properties& props, const std::string& name, const Color3d& fallback);

/// The texture of emitted value `name` of `props` (`fallback` when absent): a uniform
/// spectrum becomes its value times kEqualEnergySrgb, anything else as sampled_texture().
std::shared_ptr<Texture> emitted_texture(const Properties& props, const std::string& name, const Color3d& fallback);

/// The emitted value `name` of `props` (1 when absent), as Mitsuba's emissive textures: a
/// float, an RGB color, a uniform spectrum (emitted_texture()) or a texture that does not
/// vary over the surface. ValueError for a negative float or color component and for a
/// spatially varying texture.
std::shared_ptr<Texture> emission_parameter(const Properties& props, const std::string& name);

/// A uniformly sampled point of `shape` and the weight radiance / density per unit area, the
/// radiance read from `radiance` at the point (the surface emitters' sample_position()).
std::pair<PositionSample3f, Color3f> sample_surface(const Shape& shape, const Texture& radiance, const Array2f& sample,
                                                    const Bool& active);

/// An emitter at infinity (environments, directional lights): it places its sampled points
/// on the scene's bounding sphere, enlarged so that it contains the reference point.
class InfiniteEmitter : public Emitter {
 public:
  /// Takes the sphere as Mitsuba does: radius enlarged by a relative kRayEpsilon (and at
  /// least kRayEpsilon, for scenes without shapes). Until called, the unit sphere.
  void set_scene_bounds(const std::array<float, 3>& center, float radius) override;

 protected:
  /// Twice the radius of the bounding sphere grown to contain `ref_p`: how far from
  /// `ref_p` sampled points are placed.
  Float sample_distance(const Array3f& ref_p) const;
  /// The bounding sphere: where light paths from infinity start.
  const Array3f& scene_center() const { return center_; }
  const Float& scene_radius() const { return radius_; }

 private:
  Array3f center_{opaque<Float>(0.0f), opaque<Float>(0.0f), opaque<Float>(0.0f)};
  Float radius_ = opaque<Float>(1.0f);
};

}  // namespace kiln::render
