// The two-sided adapter, Mitsuba 3's `twosided`: makes a one-sided BSDF look the same from
// both sides (one nested BSDF), or gives each side its own (two: front, then back), by
// mirroring the directions of back-side queries to the front.
#include <kiln/errors.h>
#include <kiln/render/plugin.h>
#include <kiln/render/traverse.h>

#include "bsdfs/joint_bsdf.h"
#include "bsdfs/nested.h"
#include "core/parameter_checks.h"

namespace kiln::render {
namespace {

using namespace bsdf_flags;

/// `v` mirrored through the surface (z negated).
Array3f flip_z(const Array3f& v) { return Array3f(v.x, v.y, -v.z); }

class TwoSided : public JointBSDF {
 public:
  explicit TwoSided(const Properties& props) {
    std::vector<std::shared_ptr<BSDF>> nested = nested_bsdfs(props, 1, 2);
    front_ = nested.front();
    back_ = nested.back();
    // The nested components, each marked for the side it now serves.
    std::vector<uint32_t> components;
    for (size_t i = 0; i < front_->component_count(); ++i)
      components.push_back((front_->flags(i) & ~kBackSide) | kFrontSide);
    for (size_t i = 0; i < back_->component_count(); ++i)
      components.push_back((back_->flags(i) & ~kFrontSide) | kBackSide);
    set_components(components);
    if (!props.get_bool("allow_transmission", false) && (flags() & kTransmission))
      throw_plugin_error(props,
                         "a nested BSDF transmits light, which a two-sided BSDF cannot mirror; "
                         "nest reflecting BSDFs only (or set allow_transmission)");
  }

  std::pair<BSDFSample3f, Color3f> sample(const BSDFContext& ctx, const SurfaceInteraction& si, const Float& sample1,
                                          const Array2f& sample2, const Bool& active) const override {
    if (front_ == back_) {
      auto [bs, value] = front_->sample(ctx, with_wi(si, front_wi(si)), sample1, sample2, active);
      bs.wo.z = mulsign(bs.wo.z, cos_theta(si.wi));
      return {bs, value};
    }
    auto [front_side, back_side] = sides(si, active);
    auto [front_bs, front_value] = front_->sample(ctx, si, sample1, sample2, front_side);
    auto [back_bs, back_value] = back_->sample(back_context(ctx), mirrored(si), sample1, sample2, back_side);
    back_bs.wo = flip_z(back_bs.wo);
    Color3f zero(0.0f, 0.0f, 0.0f);
    return {select(front_side, front_bs, select(back_side, back_bs, no_sample())),
            select(front_side, front_value, select(back_side, back_value, zero))};
  }

  std::pair<Color3f, Float> eval_pdf(const BSDFContext& ctx, const SurfaceInteraction& si, const Array3f& wo,
                                     const Bool& active) const override {
    if (front_ == back_) return front_->eval_pdf(ctx, with_wi(si, front_wi(si)), front_wo(si, wo), active);
    auto [front_side, back_side] = sides(si, active);
    auto [front_value, front_pdf] = front_->eval_pdf(ctx, si, wo, front_side);
    auto [back_value, back_pdf] = back_->eval_pdf(back_context(ctx), mirrored(si), flip_z(wo), back_side);
    return {select(front_side, front_value, select(back_side, back_value, Color3f(0.0f, 0.0f, 0.0f))),
            select(front_side, front_pdf, select(back_side, back_pdf, Float(0.0f)))};
  }

  Color3f eval_diffuse_reflectance(const SurfaceInteraction& si, const Bool& active) const override {
    if (front_ == back_) return front_->eval_diffuse_reflectance(with_wi(si, front_wi(si)), active);
    auto [front_side, back_side] = sides(si, active);
    Color3f front = front_->eval_diffuse_reflectance(si, front_side);
    Color3f back = back_->eval_diffuse_reflectance(mirrored(si), back_side);
    return select(front_side, front, select(back_side, back, Color3f(0.0f, 0.0f, 0.0f)));
  }

  void traverse(TraversalCallback& callback) override {
    callback.put_object("brdf_0", front_.get());
    if (back_ != front_) callback.put_object("brdf_1", back_.get());
  }

 private:
  /// `si` with another incident direction.
  static SurfaceInteraction with_wi(const SurfaceInteraction& si, const Array3f& wi) {
    SurfaceInteraction result = si;
    result.wi = wi;
    return result;
  }
  /// `si` seen from the other side (wi mirrored through the surface).
  static SurfaceInteraction mirrored(const SurfaceInteraction& si) { return with_wi(si, flip_z(si.wi)); }
  /// wi moved to the front side (z made positive).
  static Array3f front_wi(const SurfaceInteraction& si) { return Array3f(si.wi.x, si.wi.y, abs(si.wi.z)); }
  /// wo mirrored along with wi, so that the pair keeps its relative side.
  static Array3f front_wo(const SurfaceInteraction& si, const Array3f& wo) {
    return Array3f(wo.x, wo.y, mulsign(wo.z, cos_theta(si.wi)));
  }
  /// Active lanes seen from the front (cos θi > 0) and from the back (cos θi < 0).
  static std::pair<Bool, Bool> sides(const SurfaceInteraction& si, const Bool& active) {
    return {active & (cos_theta(si.wi) > 0.0f), active & (cos_theta(si.wi) < 0.0f)};
  }
  /// The context for the back BSDF, whose components follow the front's.
  BSDFContext back_context(const BSDFContext& ctx) const { return nested_context(ctx, front_->component_count()); }

  std::shared_ptr<BSDF> front_, back_;  ///< the same object when one BSDF serves both sides
};

}  // namespace

KILN_REGISTER_PLUGIN(PluginKind::Bsdf, "twosided",
                     [](const Properties& props) { return std::make_shared<TwoSided>(props); });

}  // namespace kiln::render
