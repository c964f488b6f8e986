// What every BSDF shares: its components' flags, and eval_pdf() and
// eval_diffuse_reflectance() by default.
#include <kiln/render/bsdf.h>

namespace kiln::render {

std::pair<Color3f, Float> BSDF::eval_pdf(const BSDFContext& ctx, const SurfaceInteraction& si, const Array3f& wo,
                                         const Bool& active) const {
  return {eval(ctx, si, wo, active), pdf(ctx, si, wo, active)};
}

std::tuple<Color3f, Float, BSDFSample3f, Color3f> BSDF::eval_pdf_sample(const BSDFContext& ctx,
                                                                        const SurfaceInteraction& si, const Array3f& wo,
                                                                        const Float& sample1, const Array2f& sample2,
                                                                        const Bool& active) const {
  auto [value, density] = eval_pdf(ctx, si, wo, active);
  auto [bs, weight] = sample(ctx, si, sample1, sample2, active);
  return {value, density, bs, weight};
}

Color3f BSDF::eval_diffuse_reflectance(const SurfaceInteraction& si, const Bool& active) const {
  // The reflectance seen from straight above: π · f(wi, +z) (the cosine is 1).
  Array3f up(0.0f, 0.0f, 1.0f);
  return eval(BSDFContext{}, si, up, active) * kPi;
}

void BSDF::set_components(std::vector<uint32_t> components) {
  components_ = std::move(components);
  flags_ = 0;
  for (uint32_t flags : components_) flags_ |= flags;
}

}  // namespace kiln::render
