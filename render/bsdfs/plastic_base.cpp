// The diffuse base and dielectric coat that both plastics share.
#include "bsdfs/plastic_base.h"

#include <kiln/autodiff.h>

namespace kiln::render {

PlasticBase::PlasticBase(const Properties& props, const InterfaceIor& ior)
    : eta_(opaque<Float>(ior.eta())),
      diffuse_reflectance_(texture_parameter(props, "diffuse_reflectance", {0.5, 0.5, 0.5})),
      specular_(props, false),
      nonlinear_(props.get_bool("nonlinear", false)) {}

void PlasticBase::update_derived() {
  inv_eta_2_ = 1.0f / (eta_ * eta_);
  // A sampling decision, detached (as Mitsuba's, a host value): the reflectances' derivatives
  // must not reach it, or reverse mode would differentiate the lobe choice that forward
  // mode and the gradient render keep fixed.
  Float specular_mean = detach(specular_.reflectance_mean());
  specular_sampling_weight_ = specular_mean / (detach(diffuse_reflectance_->mean()) + specular_mean);
  make_opaque(inv_eta_2_, specular_sampling_weight_);
}

Color3f PlasticBase::diffuse_through_coat(const SurfaceInteraction& si, const Bool& active) const {
  Color3f base = diffuse_reflectance_->eval(si, active);
  Color3f bounced = nonlinear_ ? base * internal_reflectance_ : Color3f(internal_reflectance_);
  return base / (1.0f - bounced);
}

Float PlasticBase::lobe_probability(bool has_specular, bool has_diffuse, const Float& specular_factor,
                                    const Float& diffuse_factor) const {
  if (has_specular != has_diffuse) return Float(has_specular ? 1.0f : 0.0f);
  Float specular = specular_factor * specular_sampling_weight_;
  Float diffuse = diffuse_factor * (1.0f - specular_sampling_weight_);
  return specular / (specular + diffuse);
}

}  // namespace kiln::render
