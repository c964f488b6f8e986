// The smooth plastic, Mitsuba 3's `plastic`: a diffuse base under a smooth dielectric coat.
// Light either reflects off the coat (a delta lobe, Fresnel-weighted) or enters it,
// scatters diffusely, bounces inside the coat, and leaves (Weidlich and Wilkie's layered
// model as Mitsuba simplifies it, with the diffuse Fresnel reflectance Fdr inside).
#include <kiln/render/bsdf.h>
#include <kiln/render/fresnel.h>
#include <kiln/render/ior.h>
#include <kiln/render/plugin.h>
#include <kiln/render/traverse.h>
#include <kiln/render/warp.h>

#include "bsdfs/plastic_base.h"

namespace kiln::render {
namespace {

using namespace bsdf_flags;

class Plastic : public PlasticBase {
 public:
  explicit Plastic(const Properties& props) : PlasticBase(props, interface_ior(props, "polypropylene")) {
    set_components({kDeltaReflection | kFrontSide, kDiffuseReflection | kFrontSide});
    parameters_changed({});
  }

  std::pair<BSDFSample3f, Color3f> sample(const BSDFContext& ctx, const SurfaceInteraction& si, const Float& sample1,
                                          const Array2f& sample2, const Bool& active) const override {
    bool has_specular = ctx.is_enabled(kDeltaReflection, 0), has_diffuse = ctx.is_enabled(kDiffuseReflection, 1);
    Float cos_theta_i = cos_theta(si.wi);
    Bool valid = active & (cos_theta_i > 0.0f) & Bool(has_specular || has_diffuse);
    Float f_i = fresnel(cos_theta_i, eta_).reflectance;
    Float prob_specular = specular_probability(has_specular, has_diffuse, f_i);
    Bool specular = valid & (sample1 < prob_specular), diffuse = valid & !specular;

    BSDFSample3f bs;
    Array3f diffuse_wo = warp::square_to_cosine_hemisphere(sample2);
    bs.wo = select(specular, reflect(si.wi), diffuse_wo);
    Float prob_diffuse = 1.0f - prob_specular;
    bs.pdf = select(specular, prob_specular,
                    select(diffuse, prob_diffuse * warp::square_to_cosine_hemisphere_pdf(diffuse_wo), Float(0.0f)));
    bs.eta = Float(1.0f);
    bs.sampled_component = select(specular, UInt32(0u), UInt32(1u));
    bs.sampled_type = select(specular, UInt32(kDeltaReflection), UInt32(kDiffuseReflection));

    Color3f specular_value = specular_.apply(si, Color3f(f_i / prob_specular), specular, Bool(false));
    Float f_o = fresnel(cos_theta(diffuse_wo), eta_).reflectance;
    Color3f diffuse_value =
        diffuse_through_coat(si, diffuse) * (inv_eta_2_ * (1.0f - f_i) * (1.0f - f_o) / prob_diffuse);
    Color3f zero(0.0f, 0.0f, 0.0f);
    return {bs, select(specular, specular_value, select(diffuse, diffuse_value, zero))};
  }

  std::pair<Color3f, Float> eval_pdf(const BSDFContext& ctx, const SurfaceInteraction& si, const Array3f& wo,
                                     const Bool& active) const override {
    // Only the diffuse lobe has a density; the coat's mirror reflection is a delta.
    bool has_specular = ctx.is_enabled(kDeltaReflection, 0), has_diffuse = ctx.is_enabled(kDiffuseReflection, 1);
    Float cos_theta_i = cos_theta(si.wi), cos_theta_o = cos_theta(wo);
    Bool valid = active & (cos_theta_i > 0.0f) & (cos_theta_o > 0.0f) & Bool(has_diffuse);
    Float f_i = fresnel(cos_theta_i, eta_).reflectance, f_o = fresnel(cos_theta_o, eta_).reflectance;
    Float hemisphere_pdf = warp::square_to_cosine_hemisphere_pdf(wo);
    Color3f value = diffuse_through_coat(si, valid) * (hemisphere_pdf * inv_eta_2_ * (1.0f - f_i) * (1.0f - f_o));
    Float pdf = hemisphere_pdf * (1.0f - specular_probability(has_specular, has_diffuse, f_i));
    return {select(valid, value, Color3f(0.0f, 0.0f, 0.0f)), select(valid, pdf, Float(0.0f))};
  }

  void traverse(TraversalCallback& callback) override {
    callback.put("eta", &eta_, param_flags::kNonDifferentiable);
    callback.put_object("diffuse_reflectance", diffuse_reflectance_.get());
    specular_.traverse(callback);
  }

  void parameters_changed(const std::vector<std::string>&) override {
    update_derived();
    internal_reflectance_ = fresnel_diffuse_reflectance(rcp(eta_));
    make_opaque(internal_reflectance_);
  }

 private:
  /// The probability of sampling the coat's reflection, given its Fresnel reflectance f_i.
  Float specular_probability(bool has_specular, bool has_diffuse, const Float& f_i) const {
    return lobe_probability(has_specular, has_diffuse, f_i, 1.0f - f_i);
  }
};

}  // namespace

KILN_REGISTER_PLUGIN(PluginKind::Bsdf, "plastic",
                     [](const Properties& props) { return std::make_shared<Plastic>(props); });

}  // namespace kiln::render
