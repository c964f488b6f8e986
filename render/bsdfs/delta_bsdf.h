// What the BSDFs made of delta lobes only share (conductor, dielectric, thindielectric):
// eval() and pdf() are zero for every direction, since sample() alone can reach them; and
// the two-lobe ones choose between reflection and transmission the same way.
#pragma once

#include <kiln/render/bsdf.h>

namespace kiln::render {

class DeltaBSDF : public BSDF {
 public:
  Color3f eval(const BSDFContext&, const SurfaceInteraction&, const Array3f& wo, const Bool&) const override {
    return Color3f(zeros<Float>(wo.size()));
  }
  Float pdf(const BSDFContext&, const SurfaceInteraction&, const Array3f& wo, const Bool&) const override {
    return zeros<Float>(wo.size());
  }
};

/// Which lobe of a reflection (component 0) + transmission (component 1) BSDF a lane takes.
struct LobeChoice {
  Bool reflected;    ///< lanes that reflect
  Bool transmitted;  ///< lanes that transmit
  Bool valid;        ///< active lanes with an enabled lobe
  Float pdf;         ///< the probability of the lobe taken (0 on invalid lanes), without derivatives
  Float weight;      ///< the lobe's throughput / pdf before any specular factor
};

/// With both lobes enabled: reflect with probability `reflectance` (weight 1); with one,
/// take it with probability 1 and weight `reflectance` or 1 - `reflectance`.
LobeChoice choose_lobe(bool has_reflection, bool has_transmission, const Float& reflectance, const Float& sample1,
                       const Bool& active);

}  // namespace kiln::render
