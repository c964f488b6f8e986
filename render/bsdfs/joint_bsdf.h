// The base of BSDFs that compute eval() and pdf() together in eval_pdf() (they share the
// half vector, the Fresnel term, the microfacet density): eval() and pdf() take its parts,
// and a kernel keeps only the part it uses.
#pragma once

#include <kiln/render/bsdf.h>

namespace kiln::render {

class JointBSDF : public BSDF {
 public:
  Color3f eval(const BSDFContext& ctx, const SurfaceInteraction& si, const Array3f& wo,
               const Bool& active) const override {
    return eval_pdf(ctx, si, wo, active).first;
  }
  Float pdf(const BSDFContext& ctx, const SurfaceInteraction& si, const Array3f& wo,
            const Bool& active) const override {
    return eval_pdf(ctx, si, wo, active).second;
  }
  /// Implementations compute both here.
  std::pair<Color3f, Float> eval_pdf(const BSDFContext& ctx, const SurfaceInteraction& si, const Array3f& wo,
                                     const Bool& active) const override = 0;
};

}  // namespace kiln::render
