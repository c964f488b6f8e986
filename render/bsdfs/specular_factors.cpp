// Optional specular reflectance / transmittance factors.
#include "bsdfs/specular_factors.h"

#include <kiln/render/traverse.h>

namespace kiln::render {

SpecularFactors::SpecularFactors(const Properties& props, bool with_transmittance) {
  if (props.has("specular_reflectance")) reflectance_ = texture_parameter(props, "specular_reflectance");
  if (with_transmittance && props.has("specular_transmittance"))
    transmittance_ = texture_parameter(props, "specular_transmittance");
}

Color3f SpecularFactors::apply(const SurfaceInteraction& si, const Color3f& value, const Bool& reflected,
                               const Bool& transmitted) const {
  Color3f result = value;
  if (reflectance_) result = select(reflected, result * reflectance_->eval(si, reflected), result);
  if (transmittance_) result = select(transmitted, result * transmittance_->eval(si, transmitted), result);
  return result;
}

Float SpecularFactors::reflectance_mean() const { return reflectance_ ? reflectance_->mean() : Float(1.0f); }

void SpecularFactors::traverse(TraversalCallback& callback) const {
  if (reflectance_) callback.put_object("specular_reflectance", reflectance_.get());
  if (transmittance_) callback.put_object("specular_transmittance", transmittance_.get());
}

}  // namespace kiln::render
