// The optional `specular_reflectance` and `specular_transmittance` textures of the
// dielectric BSDFs: Mitsuba multiplies by them only when they are given (and lists them in
// traverse() only then).
#pragma once

#include <kiln/render/texture.h>

#include <memory>

namespace kiln::render {

class TraversalCallback;

class SpecularFactors {
 public:
  /// Reads `specular_reflectance` and, if `with_transmittance`, `specular_transmittance`.
  SpecularFactors(const Properties& props, bool with_transmittance);

  /// `value` times specular_reflectance on `reflected` lanes and specular_transmittance on
  /// `transmitted` lanes (unchanged where a factor was not given).
  Color3f apply(const SurfaceInteraction& si, const Color3f& value, const Bool& reflected,
                const Bool& transmitted) const;
  /// The mean of specular_reflectance over the surface (1 when not given): plastics steer
  /// their lobe choice by it.
  Float reflectance_mean() const;
  /// Lists the factors that were given.
  void traverse(TraversalCallback& callback) const;

 private:
  std::shared_ptr<Texture> reflectance_, transmittance_;  ///< null unless given
};

}  // namespace kiln::render
