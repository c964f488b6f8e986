// What `plastic` and `roughplastic` share: a diffuse base (`diffuse_reflectance`, default
// 0.5) under a dielectric coat of relative index eta (`int_ior` default polypropylene,
// `ext_ior` air), an optional `specular_reflectance` on the coat, and `nonlinear` (whether
// the light bouncing inside the coat shifts the base's color, as real paint does).
#pragma once

#include <kiln/render/ior.h>
#include <kiln/render/texture.h>

#include <memory>

#include "bsdfs/joint_bsdf.h"
#include "bsdfs/specular_factors.h"

namespace kiln::render {

class PlasticBase : public JointBSDF {
 public:
  Color3f eval_diffuse_reflectance(const SurfaceInteraction& si, const Bool& active) const override {
    return diffuse_reflectance_->eval(si, active);
  }

 protected:
  PlasticBase(const Properties& props, const InterfaceIor& ior);

  /// Recomputes 1/eta² and the specular sampling weight (call from parameters_changed()).
  void update_derived();
  /// The base's reflectance divided by 1 - (what the coat reflects back down inside):
  /// ρ / (1 - Fdr) as a constant factor, or ρ / (1 - ρ Fdr) when nonlinear.
  Color3f diffuse_through_coat(const SurfaceInteraction& si, const Bool& active) const;
  /// The probability of sampling the coat's specular lobe, from the two lobes' energy
  /// factors steered by the specular sampling weight (1 or 0 when only one lobe is enabled).
  Float lobe_probability(bool has_specular, bool has_diffuse, const Float& specular_factor,
                         const Float& diffuse_factor) const;

  Float eta_;                       ///< int_ior / ext_ior
  Float inv_eta_2_;                 ///< 1 / eta²
  Float internal_reflectance_;      ///< the coat's reflectance for light inside it (set by the plugin)
  Float specular_sampling_weight_;  ///< mean specular / (mean diffuse + mean specular), detached
  std::shared_ptr<Texture> diffuse_reflectance_;
  SpecularFactors specular_;
  bool nonlinear_;
};

}  // namespace kiln::render
