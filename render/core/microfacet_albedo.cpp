// Directional albedos of rough dielectric interfaces by quadrature over visible normals
// (what roughplastic precomputes).
#include <kiln/render/fresnel.h>
#include <kiln/render/microfacet.h>
#include <kiln/render/quadrature.h>

#include <functional>

namespace kiln::render {
namespace {

/// Σ over the Gauss-Legendre nodes u of the sampling square of scatter(wi, m(u)) · w(u) / 4
/// for each wi = (sin θi, 0, cos θi): the integral over [0, 1]² of the fraction of light
/// that leaves after one scattering off the visible microfacet normal m(u).
std::vector<double> integrate_over_visible_normals(
    const MicrofacetDistribution& distribution, float eta, const std::vector<float>& cos_theta_i,
    const std::function<Float(const Array3f& wi, const Array3f& m)>& scatter) {
  int order = eta > 1 ? 32 : 128;  // Mitsuba's resolution: more nodes for the sharper eta < 1 case
  auto [nodes, weights] = gauss_legendre(order);
  size_t node_count = size_t(order) * order, lanes = cos_theta_i.size() * node_count;
  std::vector<float> u1(node_count), u2(node_count), weight(node_count);
  for (size_t j = 0; j < node_count; ++j) {
    size_t a = j % order, b = j / order;
    u1[j] = float(nodes[a] * 0.5 + 0.5);
    u2[j] = float(nodes[b] * 0.5 + 0.5);
    weight[j] = float(weights[a] * weights[b]);
  }
  UInt32 lane = arange<UInt32>(lanes);
  UInt32 node = lane % uint32_t(node_count), direction = lane / uint32_t(node_count);
  Float mu = gather(Float::from(cos_theta_i), direction);
  Array3f wi(sqrt(1.0f - mu * mu), Float(0.0f), mu);
  Array2f u(gather(Float::from(u1), node), gather(Float::from(u2), node));

  Array3f m = distribution.sample(wi, u).first;
  std::vector<float> values = (scatter(wi, m) * gather(Float::from(weight), node)).to_vector();

  std::vector<double> result(cos_theta_i.size(), 0.0);
  for (size_t i = 0; i < lanes; ++i) result[i / node_count] += values[i] * 0.25;
  return result;
}

}  // namespace

std::vector<double> microfacet_reflectance(MicrofacetType type, float alpha, float eta,
                                           const std::vector<float>& cos_theta_i) {
  MicrofacetDistribution distribution(type, Float(alpha));
  return integrate_over_visible_normals(distribution, eta, cos_theta_i, [&](const Array3f& wi, const Array3f& m) {
    Array3f wo = reflect(wi, m);
    Float value = distribution.smith_g1(wo, m) * fresnel(dot(wi, m), Float(eta)).reflectance;
    return select((wo.z <= 0.0f) | (wi.z <= 0.0f), Float(0.0f), value);
  });
}

std::vector<double> microfacet_transmittance(MicrofacetType type, float alpha, float eta,
                                             const std::vector<float>& cos_theta_i) {
  MicrofacetDistribution distribution(type, Float(alpha));
  return integrate_over_visible_normals(distribution, eta, cos_theta_i, [&](const Array3f& wi, const Array3f& m) {
    FresnelResult f = fresnel(dot(wi, m), Float(eta));
    Array3f wo = refract(wi, m, f.cos_theta_t, f.eta_ti);
    Float value = distribution.smith_g1(wo, m) * (1.0f - f.reflectance);
    return select(wo.z * wi.z >= 0.0f, Float(0.0f), value);
  });
}

}  // namespace kiln::render
