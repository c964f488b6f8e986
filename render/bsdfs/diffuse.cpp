// The ideally diffuse (Lambertian) BSDF, Mitsuba 3's `diffuse`: reflectance / π.
#include <kiln/render/bsdf.h>
#include <kiln/render/plugin.h>
#include <kiln/render/texture.h>
#include <kiln/render/traverse.h>
#include <kiln/render/warp.h>

namespace kiln::render {
namespace {

class Diffuse : public BSDF {
 public:
  explicit Diffuse(const Properties& props) : reflectance_(texture_parameter(props, "reflectance", {0.5, 0.5, 0.5})) {
    set_components({bsdf_flags::kDiffuseReflection | bsdf_flags::kFrontSide});
  }

  std::pair<BSDFSample3f, Color3f> sample(const BSDFContext& ctx, const SurfaceInteraction& si, const Float&,
                                          const Array2f& sample2, const Bool& active) const override {
    Bool valid = active & (cos_theta(si.wi) > 0.0f);
    if (!ctx.is_enabled(bsdf_flags::kDiffuseReflection)) valid = Bool(false);
    BSDFSample3f bs;
    bs.wo = warp::square_to_cosine_hemisphere(sample2);
    bs.pdf = warp::square_to_cosine_hemisphere_pdf(bs.wo);
    bs.eta = Float(1.0f);
    bs.sampled_type = UInt32(bsdf_flags::kDiffuseReflection);
    bs.sampled_component = UInt32(0u);
    valid = valid & (bs.pdf > 0.0f);
    bs.pdf = select(valid, bs.pdf, Float(0.0f));
    // eval / pdf = reflectance: the cosine and 1/π cancel.
    return {bs, select(valid, reflectance_->eval(si, valid), Color3f(0.0f, 0.0f, 0.0f))};
  }

  Color3f eval(const BSDFContext& ctx, const SurfaceInteraction& si, const Array3f& wo,
               const Bool& active) const override {
    Bool valid = lit(ctx, si, wo, active);
    Color3f value = reflectance_->eval(si, valid) * (cos_theta(wo) * kInvPi);
    return select(valid, value, Color3f(0.0f, 0.0f, 0.0f));
  }

  Float pdf(const BSDFContext& ctx, const SurfaceInteraction& si, const Array3f& wo,
            const Bool& active) const override {
    return select(lit(ctx, si, wo, active), warp::square_to_cosine_hemisphere_pdf(wo), Float(0.0f));
  }

  Color3f eval_diffuse_reflectance(const SurfaceInteraction& si, const Bool& active) const override {
    return reflectance_->eval(si, active);
  }

  void traverse(TraversalCallback& callback) override { callback.put_object("reflectance", reflectance_.get()); }

 private:
  /// Lanes where both directions lie above the surface and the lobe is enabled.
  static Bool lit(const BSDFContext& ctx, const SurfaceInteraction& si, const Array3f& wo, const Bool& active) {
    if (!ctx.is_enabled(bsdf_flags::kDiffuseReflection)) return Bool(false);
    return active & (cos_theta(si.wi) > 0.0f) & (cos_theta(wo) > 0.0f);
  }

  std::shared_ptr<Texture> reflectance_;
};

}  // namespace

KILN_REGISTER_PLUGIN(PluginKind::Bsdf, "diffuse",
                     [](const Properties& props) { return std::make_shared<Diffuse>(props); });

}  // namespace kiln::render
