// The rough conductor, Mitsuba 3's `roughconductor`: a Beckmann or GGX microfacet surface
// (Walter et al. 2007) whose facets are mirrors with the Fresnel reflectance of a complex
// index eta + i k.
#include <kiln/render/fresnel.h>
#include <kiln/render/plugin.h>
#include <kiln/render/traverse.h>

#include "bsdfs/conductor_ior.h"
#include "bsdfs/joint_bsdf.h"
#include "bsdfs/roughness.h"
#include "bsdfs/specular_factors.h"

namespace kiln::render {
namespace {

class RoughConductor : public JointBSDF {
 public:
  explicit RoughConductor(const Properties& props)
      : ior_(complex_ior_parameters(props)), roughness_(props), specular_(props, false) {
    uint32_t flags = bsdf_flags::kGlossyReflection | bsdf_flags::kFrontSide;
    if (roughness_.anisotropic()) flags |= bsdf_flags::kAnisotropic;
    set_components({flags});
  }

  std::pair<BSDFSample3f, Color3f> sample(const BSDFContext& ctx, const SurfaceInteraction& si, const Float&,
                                          const Array2f& sample2, const Bool& active) const override {
    Float cos_theta_i = cos_theta(si.wi);
    Bool valid = active & (cos_theta_i > 0.0f);
    if (!ctx.is_enabled(bsdf_flags::kGlossyReflection)) valid = Bool(false);
    MicrofacetDistribution distribution = roughness_.distribution(si, valid);
    auto [m, normal_pdf] = distribution.sample(si.wi, sample2);

    BSDFSample3f bs;
    bs.wo = reflect(si.wi, m);
    bs.eta = Float(1.0f);
    bs.sampled_type = UInt32(bsdf_flags::kGlossyReflection);
    bs.sampled_component = UInt32(0u);
    valid = valid & (normal_pdf != 0.0f) & (cos_theta(bs.wo) > 0.0f);
    // The Jacobian of the reflection about m turns the density of normals into one of wo.
    bs.pdf = select(valid, normal_pdf / (4.0f * dot(bs.wo, m)), Float(0.0f));

    Float weight = distribution.sample_visible()
                       ? distribution.smith_g1(bs.wo, m)
                       : distribution.G(si.wi, bs.wo, m) * dot(si.wi, m) / (cos_theta_i * cos_theta(m));
    Color3f value = reflectance(si, dot(si.wi, m), valid) * weight;
    return {bs, select(valid, value, Color3f(0.0f, 0.0f, 0.0f))};
  }

  std::pair<Color3f, Float> eval_pdf(const BSDFContext& ctx, const SurfaceInteraction& si, const Array3f& wo,
                                     const Bool& active) const override {
    Float cos_theta_i = cos_theta(si.wi), cos_theta_o = cos_theta(wo);
    Array3f h = normalize(wo + si.wi);
    // Both directions above the surface, and on the front of the half vector's facet (the
    // condition smith_g1 applies, repeated for the pdf).
    Bool valid = active & (cos_theta_i > 0.0f) & (cos_theta_o > 0.0f) & (dot(si.wi, h) > 0.0f) & (dot(wo, h) > 0.0f);
    if (!ctx.is_enabled(bsdf_flags::kGlossyReflection)) valid = Bool(false);
    MicrofacetDistribution distribution = roughness_.distribution(si, valid);

    Float d = distribution.eval(h);
    Float smith_g1_wi = distribution.smith_g1(si.wi, h);
    Float g = smith_g1_wi * distribution.smith_g1(wo, h);
    Color3f value = reflectance(si, dot(si.wi, h), valid) * (d * g / (4.0f * cos_theta_i));
    Float pdf = distribution.sample_visible() ? d * smith_g1_wi / (4.0f * cos_theta_i)
                                              : distribution.pdf(si.wi, h) / (4.0f * dot(wo, h));
    valid = valid & (d != 0.0f);
    return {select(valid, value, Color3f(0.0f, 0.0f, 0.0f)), select(valid, pdf, Float(0.0f))};
  }

  void traverse(TraversalCallback& callback) override {
    specular_.traverse(callback);
    roughness_.traverse(callback);
    callback.put_object("eta", ior_.eta.get());
    callback.put_object("k", ior_.k.get());
  }

 private:
  /// The facet's Fresnel reflectance at cos θ = wi · m, times specular_reflectance.
  Color3f reflectance(const SurfaceInteraction& si, const Float& cos_theta_m, const Bool& active) const {
    Color3f f = fresnel_conductor(cos_theta_m, ior_.eta->eval(si, active), ior_.k->eval(si, active));
    return specular_.apply(si, f, active, Bool(false));
  }

  ComplexIor ior_;
  TexturedRoughness roughness_;
  SpecularFactors specular_;
};

}  // namespace

KILN_REGISTER_PLUGIN(PluginKind::Bsdf, "roughconductor",
                     [](const Properties& props) { return std::make_shared<RoughConductor>(props); });

}  // namespace kiln::render
