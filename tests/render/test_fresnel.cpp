// Fresnel equations, reflection and refraction, the index-of-refraction table and Gauss-
// Legendre quadrature: closed forms, physical identities, and every error path.
#include <kiln/kiln.h>
#include <kiln/render/fresnel.h>
#include <kiln/render/ior.h>
#include <kiln/render/quadrature.h>

#include <gtest/gtest.h>

#include <cmath>

#include "loader_test_support.h"

using namespace kiln;
using namespace kiln::render;
using kiln::render::test::expect_error;

namespace {
/// Exact unpolarized Fresnel reflectance of a dielectric (double precision, light from
/// the side of index 1 into index eta, or from inside when cos_i < 0).
double reference_fresnel(double cos_i, double eta) {
  if (cos_i < 0) {
    eta = 1 / eta;
    cos_i = -cos_i;
  }
  double sin_t_2 = (1 - cos_i * cos_i) / (eta * eta);
  if (sin_t_2 >= 1) return 1;
  double cos_t = std::sqrt(1 - sin_t_2);
  double rs = (cos_i - eta * cos_t) / (cos_i + eta * cos_t), rp = (eta * cos_i - cos_t) / (eta * cos_i + cos_t);
  return 0.5 * (rs * rs + rp * rp);
}
}  // namespace

TEST(Fresnel, MatchesTheClosedForm) {
  std::vector<float> cosines = {1.0f, 0.9f, 0.5f, 0.2f, 0.05f, -0.05f, -0.3f, -0.7f, -0.95f, -1.0f};
  for (float eta : {1.5f, 1.333f, 0.7f, 2.4f}) {
    FresnelResult f = fresnel(Float::from(cosines), Float(eta));
    std::vector<float> r = f.reflectance.to_vector(), cos_t = f.cos_theta_t.to_vector();
    std::vector<float> eta_it = f.eta_it.to_vector(), eta_ti = f.eta_ti.to_vector();
    for (size_t i = 0; i < cosines.size(); ++i) {
      EXPECT_NEAR(r[i], reference_fresnel(cosines[i], eta), 2e-6) << "eta " << eta << " cos " << cosines[i];
      double rel = cosines[i] >= 0 ? eta : 1 / eta;
      EXPECT_NEAR(eta_it[i], rel, 1e-6);
      EXPECT_NEAR(eta_ti[i], 1 / rel, 1e-6);
      double sin_t_2 = (1 - double(cosines[i]) * cosines[i]) / (rel * rel);
      double expected_cos_t = sin_t_2 >= 1 ? 0 : -std::copysign(std::sqrt(1 - sin_t_2), double(cosines[i]));
      EXPECT_NEAR(cos_t[i], expected_cos_t, 2e-6) << "cos_t has the sign of the far side";
    }
  }
}

TEST(Fresnel, SpecialCases) {
  // Normal incidence ((eta - 1) / (eta + 1))², index matching 0, grazing and total
  // internal reflection 1.
  EXPECT_NEAR(fresnel(Float(1.0f), Float(1.5f)).reflectance.item(), 0.04, 1e-7);
  EXPECT_EQ(fresnel(Float(0.3f), Float(1.0f)).reflectance.item(), 0.0f);
  EXPECT_EQ(fresnel(Float(0.0f), Float(1.5f)).reflectance.item(), 1.0f);
  FresnelResult tir = fresnel(Float(-0.2f), Float(1.5f));
  EXPECT_EQ(tir.reflectance.item(), 1.0f);
  EXPECT_EQ(tir.cos_theta_t.item(), 0.0f);
}

TEST(Fresnel, RefractionObeysSnell) {
  Array3f wi(Float(0.48f), Float(-0.36f), Float(0.8f));  // unit
  FresnelResult f = fresnel(wi.z, Float(1.5f));
  Array3f wt = refract(wi, f.cos_theta_t, f.eta_ti);
  EXPECT_NEAR(norm(wt).item(), 1.0f, 1e-6);
  double sin_i = std::sqrt(1 - 0.64), sin_t = std::hypot(wt.x.item(), wt.y.item());
  EXPECT_NEAR(sin_i, 1.5 * sin_t, 1e-6);
  EXPECT_LT(wt.z.item(), 0.0f);
  EXPECT_NEAR(wt.x.item() / wt.y.item(), -0.48 / 0.36, 1e-5) << "in the plane of incidence, on the far side";
  // About a microfacet normal: the same as the frame version for m = +z, and reflect() keeps
  // the angle to m.
  Array3f m(0.0f, 0.0f, 1.0f);
  Array3f wt_m = refract(wi, m, f.cos_theta_t, f.eta_ti);
  for (size_t c = 0; c < 3; ++c) EXPECT_NEAR(wt_m[c].item(), wt[c].item(), 1e-6);
  Array3f tilted = normalize(Array3f(0.2f, 0.1f, 1.0f));
  Array3f wr = reflect(wi, tilted);
  EXPECT_NEAR(dot(wr, tilted).item(), dot(wi, tilted).item(), 1e-6);
  EXPECT_NEAR(norm(wr).item(), 1.0f, 1e-6);
}

TEST(Fresnel, ConductorWithoutAbsorptionIsADielectric) {
  std::vector<float> cosines = {1.0f, 0.7f, 0.3f, 0.05f};
  Float cos_i = Float::from(cosines);
  Color3f f = fresnel_conductor(cos_i, Color3f(1.5f, 1.2f, 2.0f), Color3f(0.0f, 0.0f, 0.0f));
  for (size_t c = 0; c < 3; ++c) {
    float eta[] = {1.5f, 1.2f, 2.0f};
    std::vector<float> values = f[c].to_vector();
    for (size_t i = 0; i < cosines.size(); ++i)
      EXPECT_NEAR(values[i], reference_fresnel(cosines[i], eta[c]), 2e-6) << "channel " << c << " cos " << cosines[i];
  }
  // Normal incidence on a metal: ((n - 1)² + k²) / ((n + 1)² + k²).
  Color3f gold = fresnel_conductor(Float(1.0f), Color3f(0.143f, 0.375f, 1.442f), Color3f(3.983f, 2.386f, 1.603f));
  EXPECT_NEAR(gold.x.item(), (0.857 * 0.857 + 3.983 * 3.983) / (1.143 * 1.143 + 3.983 * 3.983), 1e-6);
}

TEST(Fresnel, DiffuseReflectanceMatchesTheHemisphericalAverage) {
  // Fdr = ∫ F(cos θ) 2 cos θ sin θ dθ: the fits are accurate to well under 1% here.
  for (double eta : {1.1, 1.33, 1.5, 2.0, 1 / 1.5, 1 / 1.33}) {
    double integral = 0;
    int steps = 20000;
    for (int i = 0; i < steps; ++i) {
      double mu = (i + 0.5) / steps;
      integral += reference_fresnel(mu, eta) * 2 * mu / steps;
    }
    EXPECT_NEAR(fresnel_diffuse_reflectance(Float(float(eta))).item(), integral, 0.01 * integral + 1e-3)
        << "eta " << eta;
  }
}

TEST(Ior, NamedMaterials) {
  EXPECT_EQ(lookup_ior("bk7"), 1.5046f);
  EXPECT_EQ(lookup_ior("BK7"), 1.5046f);
  EXPECT_EQ(lookup_ior("Water"), 1.3330f);
  EXPECT_EQ(lookup_ior("vacuum"), 1.0f);
  EXPECT_EQ(lookup_ior("air"), 1.000277f);
  EXPECT_EQ(lookup_ior("polypropylene"), 1.49f);
  EXPECT_EQ(lookup_ior("diamond"), 2.419f);
  EXPECT_EQ(ior_table().size(), 23u);
  expect_error<ValueError>([] { lookup_ior("unobtainium"); }, {"\"unobtainium\"", "bk7", "diamond"});
}

TEST(Ior, InterfaceParameters) {
  Properties defaults(PluginKind::Bsdf, "dielectric", "", "here");
  InterfaceIor glass = interface_ior(defaults, "bk7");
  EXPECT_EQ(glass.int_ior, 1.5046f);
  EXPECT_EQ(glass.ext_ior, 1.000277f);
  Properties given(PluginKind::Bsdf, "dielectric", "", "here");
  given.set("int_ior", std::string("Water"), "line 2");
  given.set("ext_ior", int64_t(1), "line 3");
  InterfaceIor water = interface_ior(given, "bk7");
  EXPECT_EQ(water.int_ior, 1.333f);
  EXPECT_EQ(water.ext_ior, 1.0f);
  EXPECT_NEAR(water.eta(), 1.333f, 1e-7);
  auto with = [](const std::string& name, Properties::Value value) {
    Properties props(PluginKind::Bsdf, "dielectric", "", "scene.xml:4");
    props.set(name, value, "scene.xml:5");
    return props;
  };
  expect_error<ValueError>([&] { interface_ior(with("int_ior", std::string("glass")), "bk7"); },
                           {"dielectric", "scene.xml:4", "'int_ior'", "scene.xml:5", "\"glass\"", "bk7"});
  expect_error<ValueError>([&] { interface_ior(with("ext_ior", -1.0), "bk7"); }, {"'ext_ior'", "positive", "-1"});
  expect_error<ValueError>([&] { interface_ior(with("int_ior", 0.0), "bk7"); }, {"'int_ior'", "positive"});
  expect_error<TypeError>([&] { interface_ior(with("int_ior", Color3d{{{1, 2, 3}}}), "bk7"); },
                          {"'int_ior'", "material name"});
  Properties matched = with("int_ior", std::string("air"));
  expect_error<ValueError>([&] { require_refracting(matched, interface_ior(matched, "bk7")); },
                           {"dielectric", "int_ior", "ext_ior", "differ"});
}

TEST(Quadrature, GaussLegendreIsExactForPolynomials) {
  for (int n : {1, 2, 3, 8, 32, 128}) {
    auto [nodes, weights] = gauss_legendre(n);
    ASSERT_EQ(nodes.size(), size_t(n));
    double total = 0;
    for (double w : weights) total += w;
    EXPECT_NEAR(total, 2, 1e-12);
    for (int degree = 0; degree <= 2 * n - 1 && degree <= 20; ++degree) {
      double integral = 0;
      for (int i = 0; i < n; ++i) integral += weights[i] * std::pow(nodes[i], degree);
      double exact = degree % 2 ? 0 : 2.0 / (degree + 1);
      EXPECT_NEAR(integral, exact, 1e-12) << "n " << n << " degree " << degree;
    }
    for (int i = 1; i < n; ++i) EXPECT_LT(nodes[i - 1], nodes[i]);
  }
  expect_error<ValueError>([] { gauss_legendre(0); }, {"gauss_legendre", "at least 1"});
}
