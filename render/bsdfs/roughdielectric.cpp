// The rough dielectric, Mitsuba 3's `roughdielectric`: a Beckmann or GGX microfacet
// interface between two media (Walter et al. 2007), each facet reflecting and refracting as
// the Fresnel equations say. Two-sided: light may arrive from either medium.
#include <kiln/autodiff.h>
#include <kiln/math.h>
#include <kiln/render/fresnel.h>
#include <kiln/render/ior.h>
#include <kiln/render/plugin.h>
#include <kiln/render/traverse.h>

#include "bsdfs/joint_bsdf.h"
#include "bsdfs/roughness.h"
#include "bsdfs/specular_factors.h"

namespace kiln::render {
namespace {

using namespace bsdf_flags;

/// The Jacobian |dωh / dωo| of the half-vector mapping: 1 / (4 wo·m) for reflection,
/// eta² (wo·m) / (wi·m + eta wo·m)² for refraction (eta along the direction of travel).
Float half_vector_jacobian(const Bool& reflected, const Float& eta, const Float& dot_wi_m, const Float& dot_wo_m) {
  Float denominator = dot_wi_m + eta * dot_wo_m;
  return abs(select(reflected, rcp(4.0f * dot_wo_m), eta * eta * dot_wo_m / (denominator * denominator)));
}

class RoughDielectric : public JointBSDF {
 public:
  explicit RoughDielectric(const Properties& props) : specular_(props, true), roughness_(props) {
    InterfaceIor ior = interface_ior(props, "bk7");
    require_refracting(props, ior);
    eta_ = opaque<Float>(ior.eta());
    uint32_t anisotropic = roughness_.anisotropic() ? kAnisotropic : 0u;
    set_components({kGlossyReflection | kFrontSide | kBackSide | anisotropic,
                    kGlossyTransmission | kFrontSide | kBackSide | kNonSymmetric | anisotropic});
  }

  std::pair<BSDFSample3f, Color3f> sample(const BSDFContext& ctx, const SurfaceInteraction& si, const Float& sample1,
                                          const Array2f& sample2, const Bool& active) const override {
    bool has_reflection = ctx.is_enabled(kGlossyReflection, 0),
         has_transmission = ctx.is_enabled(kGlossyTransmission, 1);
    Float cos_theta_i = cos_theta(si.wi);
    Bool valid = active & (cos_theta_i != 0.0f);  // perfectly grazing light does not scatter

    MicrofacetDistribution distribution = roughness_.distribution(si, valid);
    MicrofacetDistribution sampled = sampling_distribution(distribution, cos_theta_i);
    auto [m, normal_pdf] = sampled.sample(mulsign(si.wi, cos_theta_i), sample2);
    valid = valid & (normal_pdf != 0.0f);
    FresnelResult f = fresnel(dot(si.wi, m), eta_);

    Bool reflected;
    Float weight, pdf = normal_pdf;
    if (has_reflection && has_transmission) {
      reflected = valid & (sample1 <= f.reflectance);
      weight = Float(1.0f);
      pdf = pdf * detach(select(reflected, f.reflectance, 1.0f - f.reflectance));
    } else {
      reflected = valid & Bool(has_reflection);
      weight = has_reflection ? f.reflectance : 1.0f - f.reflectance;
    }
    if (!has_reflection && !has_transmission) valid = Bool(false);
    Bool transmitted = valid & !reflected;

    BSDFSample3f bs;
    bs.eta = select(reflected, Float(1.0f), f.eta_it);
    bs.sampled_component = select(reflected, UInt32(0u), UInt32(1u));
    bs.sampled_type = select(reflected, UInt32(kGlossyReflection), UInt32(kGlossyTransmission));
    bs.wo = select(reflected, reflect(si.wi, m), refract(si.wi, m, f.cos_theta_t, f.eta_ti));
    // A direction on the wrong side for its lobe, or a facet that faces away from wi (when
    // all normals are sampled), carries no light (Smith's G1 is 0 there): the sample fails,
    // with pdf 0 (Mitsuba returns weight 0 with the density of another facet's path).
    Float side = cos_theta_i * cos_theta(bs.wo);
    valid = valid & select(reflected, side > 0.0f, side < 0.0f) & (dot(si.wi, m) * cos_theta_i > 0.0f);
    reflected = reflected & valid;
    transmitted = transmitted & valid;
    Float dot_wo_m = dot(bs.wo, m);
    bs.pdf = select(valid, pdf * half_vector_jacobian(reflected, bs.eta, dot(si.wi, m), dot_wo_m), Float(0.0f));

    Color3f value = specular_.apply(si, Color3f(weight), reflected, transmitted);
    // Radiance is compressed into the smaller solid angle on the denser side.
    if (ctx.mode == TransportMode::Radiance) value = select(transmitted, value * (f.eta_ti * f.eta_ti), value);
    // eval() / pdf() with D cancelled. Sampling all normals from the widened distribution
    // leaves D / D_widened: Mitsuba 3.9 drops that factor (its weight then differs from
    // eval() / pdf(), a bias); Kiln keeps it.
    Float shadowing = distribution.sample_visible()
                          ? distribution.smith_g1(bs.wo, m)
                          : distribution.G(si.wi, bs.wo, m) * dot(si.wi, m) / (cos_theta_i * cos_theta(m)) *
                                (distribution.eval(m) / sampled.eval(m));
    return {bs, select(valid, value * shadowing, Color3f(0.0f, 0.0f, 0.0f))};
  }

  std::pair<Color3f, Float> eval_pdf(const BSDFContext& ctx, const SurfaceInteraction& si, const Array3f& wo,
                                     const Bool& active) const override {
    bool has_reflection = ctx.is_enabled(kGlossyReflection, 0),
         has_transmission = ctx.is_enabled(kGlossyTransmission, 1);
    Float cos_theta_i = cos_theta(si.wi), cos_theta_o = cos_theta(wo);
    Bool reflected = cos_theta_i * cos_theta_o > 0.0f;
    Bool valid =
        active & (cos_theta_i != 0.0f) & ((Bool(has_reflection) & reflected) | (Bool(has_transmission) & !reflected));

    // The relative index along the path (the light may arrive from inside), and the
    // generalized half vector, turned to the side of the mean normal.
    Float inv_eta = rcp(eta_);
    Float eta = select(cos_theta_i > 0.0f, eta_, inv_eta);
    Array3f m = normalize(si.wi + wo * select(reflected, Float(1.0f), eta));
    m = mulsign(m, cos_theta(m));
    Float dot_wi_m = dot(si.wi, m), dot_wo_m = dot(wo, m);
    // Each direction must see the facet's side that faces it (what smith_g1 enforces).
    valid = valid & (dot_wi_m * cos_theta_i > 0.0f) & (dot_wo_m * cos_theta_o > 0.0f);

    MicrofacetDistribution distribution = roughness_.distribution(si, valid);
    Float d = distribution.eval(m);
    Float fr = fresnel(dot_wi_m, eta_).reflectance;
    Float g = distribution.G(si.wi, wo, m);

    Float reflection = fr * d * g / (4.0f * abs(cos_theta_i));
    // Radiance is compressed into the smaller solid angle on the denser side: 1/eta².
    Float scale = ctx.mode == TransportMode::Radiance ? select(cos_theta_i > 0.0f, inv_eta, eta_) : Float(1.0f);
    Float denominator = dot_wi_m + eta * dot_wo_m;
    Float transmission = abs(scale * scale * (1.0f - fr) * d * g * eta * eta * dot_wi_m * dot_wo_m /
                             (cos_theta_i * denominator * denominator));
    Bool transmitted = valid & !reflected;
    Color3f value =
        specular_.apply(si, Color3f(select(reflected, reflection, transmission)), valid & reflected, transmitted);

    Float pdf = sampling_distribution(distribution, cos_theta_i).pdf(mulsign(si.wi, cos_theta_i), m);
    if (has_reflection && has_transmission) pdf = pdf * select(reflected, fr, 1.0f - fr);
    pdf = pdf * half_vector_jacobian(reflected, eta, dot_wi_m, dot_wo_m);
    return {select(valid, value, Color3f(0.0f, 0.0f, 0.0f)), select(valid, pdf, Float(0.0f))};
  }

  void traverse(TraversalCallback& callback) override {
    callback.put("eta", &eta_, param_flags::kDifferentiable | param_flags::kDiscontinuous);
    roughness_.traverse(callback);
    specular_.traverse(callback);
  }

 private:
  /// The distribution normals are sampled from: without visible-normal sampling, widened
  /// by 1.2 - 0.2 sqrt|cos θi| (Walter et al.'s trick to bound the sample weights).
  static MicrofacetDistribution sampling_distribution(MicrofacetDistribution distribution, const Float& cos_theta_i) {
    if (!distribution.sample_visible()) distribution.scale_alpha(1.2f - 0.2f * sqrt(abs(cos_theta_i)));
    return distribution;
  }

  SpecularFactors specular_;
  TexturedRoughness roughness_;
  Float eta_;  ///< int_ior / ext_ior
};

}  // namespace

KILN_REGISTER_PLUGIN(PluginKind::Bsdf, "roughdielectric",
                     [](const Properties& props) { return std::make_shared<RoughDielectric>(props); });

}  // namespace kiln::render
