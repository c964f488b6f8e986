// The rough plastic, Mitsuba 3's `roughplastic`: a diffuse base under a rough dielectric
// coat (Beckmann or GGX, isotropic). The coat's glossy reflection is a microfacet lobe; the
// light it lets through to the base and back out is weighted by its directional
// transmittance, precomputed per cos θ as Mitsuba does (64 entries, linearly interpolated),
// together with the coat's mean internal reflectance.
#include <kiln/render/bsdf.h>
#include <kiln/render/fresnel.h>
#include <kiln/render/ior.h>
#include <kiln/render/microfacet.h>
#include <kiln/render/plugin.h>
#include <kiln/render/traverse.h>
#include <kiln/render/warp.h>

#include <algorithm>

#include "bsdfs/plastic_base.h"
#include "bsdfs/roughness.h"

namespace kiln::render {
namespace {

using namespace bsdf_flags;

/// Entries of the transmittance table over cos θ in [0, 1] (Mitsuba's resolution).
constexpr size_t kTransmittanceResolution = 64;

class RoughPlastic : public PlasticBase {
 public:
  explicit RoughPlastic(const Properties& props)
      : PlasticBase(props, refracting_ior(props)),
        type_(microfacet_type(props)),
        sample_visible_(props.get_bool("sample_visible", true)),
        alpha_(opaque<Float>(isotropic_alpha(props))) {
    set_components({kGlossyReflection | kFrontSide, kDiffuseReflection | kFrontSide});
    parameters_changed({});
  }

  std::pair<BSDFSample3f, Color3f> sample(const BSDFContext& ctx, const SurfaceInteraction& si, const Float& sample1,
                                          const Array2f& sample2, const Bool& active) const override {
    bool has_specular = ctx.is_enabled(kGlossyReflection, 0), has_diffuse = ctx.is_enabled(kDiffuseReflection, 1);
    Float cos_theta_i = cos_theta(si.wi);
    Bool valid = active & (cos_theta_i > 0.0f) & Bool(has_specular || has_diffuse);
    Bool specular = valid & (sample1 < specular_probability(has_specular, has_diffuse, si, valid));

    BSDFSample3f bs;
    Array3f m = distribution().sample(si.wi, sample2).first;
    bs.wo = select(specular, reflect(si.wi, m), warp::square_to_cosine_hemisphere(sample2));
    bs.eta = Float(1.0f);
    bs.sampled_component = select(specular, UInt32(0u), UInt32(1u));
    bs.sampled_type = select(specular, UInt32(kGlossyReflection), UInt32(kDiffuseReflection));
    // The weight of the one-sample mixture: the whole BSDF over the whole density.
    auto [value, pdf] = eval_pdf(ctx, si, bs.wo, valid);
    valid = valid & (pdf > 0.0f);
    bs.pdf = select(valid, pdf, Float(0.0f));
    return {bs, select(valid, value / pdf, Color3f(0.0f, 0.0f, 0.0f))};
  }

  std::pair<Color3f, Float> eval_pdf(const BSDFContext& ctx, const SurfaceInteraction& si, const Array3f& wo,
                                     const Bool& active) const override {
    bool has_specular = ctx.is_enabled(kGlossyReflection, 0), has_diffuse = ctx.is_enabled(kDiffuseReflection, 1);
    Float cos_theta_i = cos_theta(si.wi), cos_theta_o = cos_theta(wo);
    Bool valid = active & (cos_theta_i > 0.0f) & (cos_theta_o > 0.0f) & Bool(has_specular || has_diffuse);

    MicrofacetDistribution distribution = this->distribution();
    Array3f h = normalize(wo + si.wi);
    Float d = distribution.eval(h);
    Float smith_g1_wi = distribution.smith_g1(si.wi, h);
    Float specular_pdf =
        sample_visible_ ? d * smith_g1_wi / (4.0f * cos_theta_i) : distribution.pdf(si.wi, h) / (4.0f * dot(wo, h));
    Float prob_specular = specular_probability(has_specular, has_diffuse, si, valid);
    Float pdf = prob_specular * specular_pdf + (1.0f - prob_specular) * warp::square_to_cosine_hemisphere_pdf(wo);

    Color3f value(0.0f, 0.0f, 0.0f);
    if (has_specular) {
      Float f = fresnel(dot(si.wi, h), eta_).reflectance;
      Float g = smith_g1_wi * distribution.smith_g1(wo, h);
      value = specular_.apply(si, Color3f(f * d * g / (4.0f * cos_theta_i)), valid, Bool(false));
    }
    if (has_diffuse) {
      Float t_i = transmittance(cos_theta_i, valid), t_o = transmittance(cos_theta_o, valid);
      value = value + diffuse_through_coat(si, valid) * (kInvPi * inv_eta_2_ * cos_theta_o * t_i * t_o);
    }
    return {select(valid, value, Color3f(0.0f, 0.0f, 0.0f)), select(valid, pdf, Float(0.0f))};
  }

  void traverse(TraversalCallback& callback) override {
    callback.put_object("diffuse_reflectance", diffuse_reflectance_.get());
    callback.put("alpha", &alpha_, param_flags::kDifferentiable | param_flags::kDiscontinuous);
    callback.put("eta", &eta_, param_flags::kDifferentiable | param_flags::kDiscontinuous);
    specular_.traverse(callback);
  }

  void parameters_changed(const std::vector<std::string>& keys) override {
    update_derived();
    bool coat_changed = keys.empty() || std::find(keys.begin(), keys.end(), "alpha") != keys.end() ||
                        std::find(keys.begin(), keys.end(), "eta") != keys.end();
    if (coat_changed) precompute_coat();
    make_opaque(alpha_);
  }

 private:
  static InterfaceIor refracting_ior(const Properties& props) {
    InterfaceIor ior = interface_ior(props, "polypropylene");
    require_refracting(props, ior);
    return ior;
  }

  MicrofacetDistribution distribution() const { return MicrofacetDistribution(type_, alpha_, sample_visible_); }

  /// The coat's directional transmittance into the base at cos θ (table lookup).
  Float transmittance(const Float& cos_theta, const Bool& active) const {
    Float x = cos_theta * float(kTransmittanceResolution - 1);
    UInt32 index = min(cast<uint32_t>(x), UInt32(uint32_t(kTransmittanceResolution - 2)));
    Float v0 = gather(external_transmittance_, index, active);
    Float v1 = gather(external_transmittance_, index + 1u, active);
    return lerp(v0, v1, x - cast<float>(index));
  }

  /// The probability of sampling the glossy lobe: the coat's reflectance 1 - t_i against
  /// its transmittance t_i, steered by the specular sampling weight.
  Float specular_probability(bool has_specular, bool has_diffuse, const SurfaceInteraction& si,
                             const Bool& active) const {
    Float t_i = transmittance(cos_theta(si.wi), active);
    return lobe_probability(has_specular, has_diffuse, 1.0f - t_i, t_i);
  }

  /// Tabulates the coat's transmittance over cos θ and its internal reflectance (the
  /// cosine-weighted mean over the hemisphere of what it reflects back inside), for the
  /// current alpha and eta, with visible-normal quadrature (whatever sample_visible says,
  /// as Mitsuba does).
  void precompute_coat() {
    float eta = eta_.item(), alpha = alpha_.item();
    std::vector<float> mu(kTransmittanceResolution);
    for (size_t i = 0; i < mu.size(); ++i) mu[i] = std::max(1e-6f, float(i) / float(mu.size() - 1));
    std::vector<double> transmitted = microfacet_transmittance(type_, alpha, eta, mu);
    external_transmittance_ = Float::from(std::vector<float>(transmitted.begin(), transmitted.end()));
    std::vector<double> reflected = microfacet_reflectance(type_, alpha, 1.0f / eta, mu);
    double mean = 0;
    for (size_t i = 0; i < mu.size(); ++i) mean += reflected[i] * mu[i];
    internal_reflectance_ = opaque<Float>(float(2 * mean / double(mu.size())));
  }

  MicrofacetType type_;
  bool sample_visible_;
  Float alpha_;
  Float external_transmittance_;  ///< kTransmittanceResolution entries over cos θ in [0, 1]
};

}  // namespace

KILN_REGISTER_PLUGIN(PluginKind::Bsdf, "roughplastic",
                     [](const Properties& props) { return std::make_shared<RoughPlastic>(props); });

}  // namespace kiln::render
