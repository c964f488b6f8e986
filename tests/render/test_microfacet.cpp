// Microfacet distributions: normalization of D, the Smith masking function against its
// defining integral, sampling against pdf() over microfacet normals (chi-square), and the
// directional albedos roughplastic precomputes.
#include <kiln/kiln.h>
#include <kiln/render/fresnel.h>
#include <kiln/render/microfacet.h>
#include <kiln/render/quadrature.h>

#include <gtest/gtest.h>

#include "chi2.h"

using namespace kiln;
using namespace kiln::render;

namespace {

/// ∫ f(m) dω over the upper hemisphere by a midpoint rule in (cos θ, φ), with density
/// toward the pole (D peaks there for small alpha).
double integrate_hemisphere(const std::function<Float(const Array3f&)>& f, size_t n = 2048) {
  UInt32 index = arange<UInt32>(n * n);
  Float u = (Float(cast<float>(index / uint32_t(n))) + 0.5f) * (1.0f / float(n));
  Float v = (Float(cast<float>(index % uint32_t(n))) + 0.5f) * (1.0f / float(n));
  Float cos_theta = 1.0f - u * u, r = sqrt(max(1.0f - cos_theta * cos_theta, Float(0.0f)));  // d cosθ = 2u du
  Float phi = v * float(2 * M_PI);
  Array3f m(r * cos(phi), r * sin(phi), cos_theta);
  std::vector<float> values = (f(m) * (2.0f * u)).to_vector();
  double total = 0;
  for (float value : values) total += value;
  return total * (2 * M_PI) / double(n * n);
}

std::vector<MicrofacetDistribution> distributions() {
  std::vector<MicrofacetDistribution> result;
  for (MicrofacetType type : {MicrofacetType::Beckmann, MicrofacetType::GGX}) {
    result.emplace_back(type, Float(0.1f));
    result.emplace_back(type, Float(0.5f));
    result.emplace_back(type, Float(0.15f), Float(0.6f));
  }
  return result;
}

std::string name(const MicrofacetDistribution& d) {
  return std::string(microfacet_name(d.type())) + " alpha " + std::to_string(d.alpha_u().item()) + "/" +
         std::to_string(d.alpha_v().item());
}

}  // namespace

TEST(Microfacet, DistributionIsNormalized) {
  // ∫ D(m) cos θm dω = 1: the projected microfacet area equals the macrosurface.
  for (const MicrofacetDistribution& d : distributions())
    EXPECT_NEAR(integrate_hemisphere([&](const Array3f& m) { return d.eval(m) * m.z; }), 1.0, 2e-3) << name(d);
}

TEST(Microfacet, ProjectedAreaMatchesMasking) {
  // ∫ G1(v, m) max(0, v·m) D(m) dω = cos θv: the visible projected area of the facets is the
  // macrosurface's (exact for Smith's G1 with GGX, within the fit's 0.35% for Beckmann).
  for (const MicrofacetDistribution& d : distributions())
    for (float z : {0.9f, 0.5f, 0.2f}) {
      Array3f v(Float(std::sqrt(1 - z * z) * 0.6f), Float(std::sqrt(1 - z * z) * 0.8f), Float(z));
      double visible = integrate_hemisphere(
          [&](const Array3f& m) { return d.smith_g1(v, m) * max(dot(v, m), Float(0.0f)) * d.eval(m); });
      EXPECT_NEAR(visible, z, 0.006 * z) << name(d) << " cos " << z;
    }
}

TEST(Microfacet, SamplingMatchesPdf) {
  // Sampled normals against pdf(), both techniques, on the sphere's chart of normals.
  for (MicrofacetType type : {MicrofacetType::Beckmann, MicrofacetType::GGX})
    for (bool visible : {true, false})
      for (auto [alpha_u, alpha_v] : {std::pair(0.3f, 0.3f), std::pair(0.2f, 0.7f)}) {
        MicrofacetDistribution d = alpha_u == alpha_v
                                       ? MicrofacetDistribution(type, Float(alpha_u), visible)
                                       : MicrofacetDistribution(type, Float(alpha_u), Float(alpha_v), visible);
        Array3f wi = normalize(Array3f(0.5f, -0.3f, 0.6f));
        std::function<Array3f(const Array2f&)> sample = [&](const Array2f& u) { return d.sample(wi, u).first; };
        std::function<Float(const Array3f&)> pdf = [&](const Array3f& m) {
          return select(m.z > 0.0f, d.pdf(wi, m), Float(0.0f));
        };
        chi2::Chi2Result r = chi2::chi2_test<Array3f>(sample, pdf, chi2::sphere_chart());
        EXPECT_TRUE(r.passed) << name(d) << (visible ? " visible" : " all") << ": " << r.message;
      }
}

TEST(Microfacet, SampleReturnsItsPdf) {
  for (MicrofacetType type : {MicrofacetType::Beckmann, MicrofacetType::GGX})
    for (bool visible : {true, false}) {
      MicrofacetDistribution d(type, Float(0.2f), Float(0.45f), visible);
      Array3f wi = normalize(Array3f(0.2f, 0.7f, 0.4f));
      PCG32 rng(1000);
      Float u1 = rng.next_float32();
      auto [m, pdf] = d.sample(wi, Array2f(u1, rng.next_float32()));
      std::vector<float> returned = pdf.to_vector(), evaluated = d.pdf(wi, m).to_vector();
      for (size_t i = 0; i < returned.size(); ++i)
        ASSERT_NEAR(returned[i], evaluated[i], 2e-4 * std::max(1.0f, evaluated[i])) << "lane " << i;
    }
}

TEST(Microfacet, RoughnessIsClampedAndScaled) {
  MicrofacetDistribution d(MicrofacetType::GGX, Float(0.0f));
  EXPECT_EQ(d.alpha_u().item(), 1e-4f);
  EXPECT_TRUE(d.is_isotropic());
  d.scale_alpha(Float(2.0f));
  EXPECT_EQ(d.alpha_v().item(), 2e-4f);
  EXPECT_FALSE(MicrofacetDistribution(MicrofacetType::GGX, Float(0.1f), Float(0.2f)).is_isotropic());
  EXPECT_STREQ(microfacet_name(MicrofacetType::Beckmann), "beckmann");
}

TEST(Microfacet, AlbedoQuadratureMatchesMonteCarlo) {
  // The quadrature of roughplastic's tables against a plain Monte Carlo estimate of the same
  // integral: E over visible normals of G1(wo) F (reflection) or G1(wo) (1 - F) (refraction).
  for (MicrofacetType type : {MicrofacetType::Beckmann, MicrofacetType::GGX}) {
    std::vector<float> mu = {0.2f, 0.6f, 1.0f};
    std::vector<double> reflected = microfacet_reflectance(type, 0.3f, 1.5f, mu);
    std::vector<double> transmitted = microfacet_transmittance(type, 0.3f, 1.5f, mu);
    MicrofacetDistribution d(type, Float(0.3f));
    for (size_t i = 0; i < mu.size(); ++i) {
      size_t n = 1 << 20;
      PCG32 rng(n);
      Float u1 = rng.next_float32();
      Array3f wi(Float(std::sqrt(1 - mu[i] * mu[i])), Float(0.0f), Float(mu[i]));
      Array3f m = d.sample(wi, Array2f(u1, rng.next_float32())).first;
      FresnelResult f = fresnel(dot(wi, m), Float(1.5f));
      Array3f wr = reflect(wi, m), wt = refract(wi, m, f.cos_theta_t, f.eta_ti);
      Float r = select(wr.z > 0.0f, d.smith_g1(wr, m) * f.reflectance, Float(0.0f));
      Float t = select(wt.z < 0.0f, d.smith_g1(wt, m) * (1.0f - f.reflectance), Float(0.0f));
      EXPECT_NEAR(reflected[i], mean(r).item(), 2e-3) << microfacet_name(type) << " mu " << mu[i];
      EXPECT_NEAR(transmitted[i], mean(t).item(), 2e-3) << microfacet_name(type) << " mu " << mu[i];
      EXPECT_LE(reflected[i] + transmitted[i], 1.0 + 1e-6);
    }
  }
}
