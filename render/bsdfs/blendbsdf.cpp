// The blend of two BSDFs, Mitsuba 3's `blendbsdf`: (1 - weight) · first + weight · second,
// with `weight` a texture clipped to [0, 1]. sample() picks one BSDF by the weight and
// combines the two densities for the direction it returns (a one-sample mixture).
#include <kiln/elementwise.h>
#include <kiln/render/plugin.h>
#include <kiln/render/texture.h>
#include <kiln/render/traverse.h>

#include <array>

#include "bsdfs/joint_bsdf.h"
#include "bsdfs/nested.h"

namespace kiln::render {
namespace {

class BlendBSDF : public JointBSDF {
 public:
  explicit BlendBSDF(const Properties& props) : weight_(texture_parameter(props, "weight")) {
    std::vector<std::shared_ptr<BSDF>> nested = nested_bsdfs(props, 2, 2);
    nested_ = {nested[0], nested[1]};
    std::vector<uint32_t> components;
    for (const auto& bsdf : nested_)
      for (size_t i = 0; i < bsdf->component_count(); ++i) components.push_back(bsdf->flags(i));
    set_components(components);
  }

  std::pair<BSDFSample3f, Color3f> sample(const BSDFContext& ctx, const SurfaceInteraction& si, const Float& sample1,
                                          const Array2f& sample2, const Bool& active) const override {
    Float weight = eval_weight(si, active);
    if (ctx.component != ~0u) {
      auto [index, nested_ctx] = component_owner(ctx);
      auto [bs, value] = nested_[index]->sample(nested_ctx, si, sample1, sample2, active);
      return {bs, value * share(index, weight)};
    }
    // Sample the first BSDF where sample1 > weight (reusing sample1, rescaled), the second
    // elsewhere, and weight by the mixture density of the direction found.
    Bool first = active & (sample1 > weight), second = active & (sample1 <= weight);
    auto [bs0, value0] = nested_[0]->sample(ctx, si, (sample1 - weight) / (1.0f - weight), sample2, first);
    auto [other1, pdf1] = nested_[1]->eval_pdf(ctx, si, bs0.wo, first);
    auto [bs1, value1] = nested_[1]->sample(ctx, si, sample1 / weight, sample2, second);
    auto [other0, pdf0] = nested_[0]->eval_pdf(ctx, si, bs1.wo, second);

    Float mixed_pdf0 = weight * pdf1 + (1.0f - weight) * bs0.pdf;
    Color3f mixed0 = (weight * other1 + (1.0f - weight) * value0 * bs0.pdf) * safe_rcp(mixed_pdf0);
    bs0.pdf = mixed_pdf0;
    Float mixed_pdf1 = weight * bs1.pdf + (1.0f - weight) * pdf0;
    Color3f mixed1 = (weight * value1 * bs1.pdf + (1.0f - weight) * other0) * safe_rcp(mixed_pdf1);
    bs1.pdf = mixed_pdf1;

    Color3f zero(0.0f, 0.0f, 0.0f);
    return {select(first, bs0, select(second, bs1, no_sample())), select(first, mixed0, select(second, mixed1, zero))};
  }

  std::pair<Color3f, Float> eval_pdf(const BSDFContext& ctx, const SurfaceInteraction& si, const Array3f& wo,
                                     const Bool& active) const override {
    Float weight = eval_weight(si, active);
    if (ctx.component != ~0u) {
      auto [index, nested_ctx] = component_owner(ctx);
      auto [value, pdf] = nested_[index]->eval_pdf(nested_ctx, si, wo, active);
      return {value * share(index, weight), pdf};
    }
    auto [value0, pdf0] = nested_[0]->eval_pdf(ctx, si, wo, active);
    auto [value1, pdf1] = nested_[1]->eval_pdf(ctx, si, wo, active);
    return {value0 * (1.0f - weight) + value1 * weight, pdf0 * (1.0f - weight) + pdf1 * weight};
  }

  Color3f eval_diffuse_reflectance(const SurfaceInteraction& si, const Bool& active) const override {
    Float weight = eval_weight(si, active);
    return nested_[0]->eval_diffuse_reflectance(si, active) * (1.0f - weight) +
           nested_[1]->eval_diffuse_reflectance(si, active) * weight;
  }

  void traverse(TraversalCallback& callback) override {
    callback.put_object("weight", weight_.get());
    callback.put_object("bsdf_0", nested_[0].get());
    callback.put_object("bsdf_1", nested_[1].get());
  }

 private:
  Float eval_weight(const SurfaceInteraction& si, const Bool& active) const {
    return clip(weight_->eval_1(si, active), 0.0f, 1.0f);
  }
  /// The nested BSDF that owns the component ctx selects, and the context it sees.
  std::pair<size_t, BSDFContext> component_owner(const BSDFContext& ctx) const {
    size_t first_count = nested_[0]->component_count();
    if (ctx.component < first_count) return {0, ctx};
    return {1, nested_context(ctx, first_count)};
  }
  /// The share of nested BSDF `index` in the blend: 1 - weight for the first, weight for
  /// the second.
  static Float share(size_t index, const Float& weight) { return index == 0 ? 1.0f - weight : weight; }
  /// 1 / x, or 0 where x is not positive.
  static Float safe_rcp(const Float& x) { return select(x > 0.0f, rcp(x), Float(0.0f)); }

  std::shared_ptr<Texture> weight_;
  std::array<std::shared_ptr<BSDF>, 2> nested_;
};

}  // namespace

KILN_REGISTER_PLUGIN(PluginKind::Bsdf, "blendbsdf",
                     [](const Properties& props) { return std::make_shared<BlendBSDF>(props); });

}  // namespace kiln::render
