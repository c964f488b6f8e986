// Beckmann and GGX microfacet distributions: D, Smith's G1, and sampling (all normals or
// visible normals only).
#include <kiln/math.h>
#include <kiln/render/frame.h>
#include <kiln/render/microfacet.h>
#include <kiln/render/warp.h>

namespace kiln::render {
namespace {

/// Roughness below this is raised to it (Mitsuba's limit: D is a delta below).
constexpr float kMinAlpha = 1e-4f;
/// 1 / sqrt(π).
constexpr float kInvSqrtPi = 0.56418958354775628695f;
/// Four times single precision's machine epsilon (Dr.Jit's Epsilon<float> is 2^-24).
constexpr float kFourEpsilon = 4.0f / float(1 << 24);

/// sin φ and cos φ of unit vector `v`; (0, 1) along the normal.
std::pair<Float, Float> sincos_phi(const Array3f& v) {
  Float sin_theta_2 = render::sin_theta_2(v);
  Float inv_sin_theta = rsqrt(sin_theta_2);
  Bool at_pole = abs(sin_theta_2) <= kFourEpsilon;
  Float cos_phi = select(at_pole, Float(1.0f), clip(v.x * inv_sin_theta, -1.0f, 1.0f));
  Float sin_phi = select(at_pole, Float(0.0f), clip(v.y * inv_sin_theta, -1.0f, 1.0f));
  return {sin_phi, cos_phi};
}

}  // namespace

const char* microfacet_name(MicrofacetType type) {
  switch (type) {
    case MicrofacetType::Beckmann: return "beckmann";
    case MicrofacetType::GGX: return "ggx";
  }
  return "?";
}

MicrofacetDistribution::MicrofacetDistribution(MicrofacetType type, const Float& alpha, bool sample_visible)
    : MicrofacetDistribution(type, alpha, alpha, sample_visible) {}

MicrofacetDistribution::MicrofacetDistribution(MicrofacetType type, const Float& alpha_u, const Float& alpha_v,
                                               bool sample_visible)
    : type_(type),
      alpha_u_(max(alpha_u, Float(kMinAlpha))),
      sample_visible_(sample_visible),
      isotropic_(alpha_u.index() == alpha_v.index()) {
  alpha_v_ = isotropic_ ? alpha_u_ : max(alpha_v, Float(kMinAlpha));
}

void MicrofacetDistribution::scale_alpha(const Float& factor) {
  alpha_u_ = alpha_u_ * factor;
  alpha_v_ = isotropic_ ? alpha_u_ : alpha_v_ * factor;
}

Float MicrofacetDistribution::eval(const Array3f& m) const {
  Float cos_theta_2 = m.z * m.z;
  Float x = m.x / alpha_u_, y = m.y / alpha_v_;
  Float result;
  if (type_ == MicrofacetType::Beckmann) {
    result = exp(-(x * x + y * y) / cos_theta_2) / (kPi * alpha_u_ * alpha_v_ * (cos_theta_2 * cos_theta_2));
  } else {
    Float denominator = x * x + y * y + cos_theta_2;
    result = rcp(kPi * alpha_u_ * alpha_v_ * (denominator * denominator));
  }
  // Numerically tiny values would only cause trouble in the stages that divide by them.
  return select(result * m.z > 1e-20f, result, Float(0.0f));
}

Float MicrofacetDistribution::pdf(const Array3f& wi, const Array3f& m) const {
  if (sample_visible_) return eval(m) * smith_g1(wi, m) * abs(dot(wi, m)) / wi.z;
  return eval(m) * m.z;
}

std::pair<Array3f, Float> MicrofacetDistribution::sample(const Array3f& wi, const Array2f& u) const {
  if (sample_visible_) {
    // Stretch wi to the unit-roughness configuration, sample a slope there, rotate back
    // to wi's azimuth and unstretch (Heitz and d'Eon 2014).
    Array3f wi_p = normalize(Array3f(alpha_u_ * wi.x, alpha_v_ * wi.y, wi.z));
    auto [sin_phi, cos_phi] = sincos_phi(wi_p);
    Array2f slope = sample_visible_11(wi_p.z, u);
    Float slope_x = fma(cos_phi, slope.x, -(sin_phi * slope.y)) * alpha_u_;
    Float slope_y = fma(sin_phi, slope.x, cos_phi * slope.y) * alpha_v_;
    Array3f m = normalize(Array3f(-slope_x, -slope_y, Float(1.0f)));
    return {m, eval(m) * smith_g1(wi, m) * abs(dot(wi, m)) / wi.z};
  }

  // The azimuth (the same for both distributions), then the elevation by inversion.
  Float sin_phi, cos_phi, alpha_2;
  if (isotropic_) {
    std::tie(sin_phi, cos_phi) = sincos((2.0f * kPi) * u.y);
    alpha_2 = alpha_u_ * alpha_u_;
  } else {
    Float tmp = (alpha_v_ / alpha_u_) * tan((2.0f * kPi) * u.y);
    cos_phi = mulsign(rsqrt(fma(tmp, tmp, Float(1.0f))), abs(u.y - 0.5f) - 0.25f);
    sin_phi = cos_phi * tmp;
    Float cu = cos_phi / alpha_u_, sv = sin_phi / alpha_v_;
    alpha_2 = rcp(cu * cu + sv * sv);
  }
  Float cos_theta, pdf;
  if (type_ == MicrofacetType::Beckmann) {
    cos_theta = rsqrt(fma(-alpha_2, log(1.0f - u.x), Float(1.0f)));
    Float cos_theta_3 = max(cos_theta * cos_theta * cos_theta, Float(1e-20f));
    pdf = (1.0f - u.x) / (kPi * alpha_u_ * alpha_v_ * cos_theta_3);
  } else {
    Float tan_theta_m_2 = alpha_2 * u.x / (1.0f - u.x);
    cos_theta = rsqrt(1.0f + tan_theta_m_2);
    Float temp = 1.0f + tan_theta_m_2 / alpha_2;
    Float cos_theta_3 = max(cos_theta * cos_theta * cos_theta, Float(1e-20f));
    pdf = rcp(kPi * alpha_u_ * alpha_v_ * cos_theta_3 * (temp * temp));
  }
  Float sin_theta = sqrt(1.0f - cos_theta * cos_theta);
  return {Array3f(cos_phi * sin_theta, sin_phi * sin_theta, cos_theta), pdf};
}

Float MicrofacetDistribution::G(const Array3f& wi, const Array3f& wo, const Array3f& m) const {
  return smith_g1(wi, m) * smith_g1(wo, m);
}

Float MicrofacetDistribution::smith_g1(const Array3f& v, const Array3f& m) const {
  Float ax = alpha_u_ * v.x, ay = alpha_v_ * v.y;
  Float xy_alpha_2 = ax * ax + ay * ay;
  Float tan_theta_alpha_2 = xy_alpha_2 / (v.z * v.z);
  Float result;
  if (type_ == MicrofacetType::Beckmann) {
    // A rational fit of the exact expression (relative error below 0.35%).
    Float a = rsqrt(tan_theta_alpha_2), a_2 = a * a;
    result = select(a >= 1.6f, Float(1.0f), (3.535f * a + 2.181f * a_2) / (1.0f + 2.276f * a + 2.577f * a_2));
  } else {
    result = 2.0f / (1.0f + sqrt(1.0f + tan_theta_alpha_2));
  }
  result = select(xy_alpha_2 == 0.0f, Float(1.0f), result);
  // A direction cannot see the back of a microfacet, nor the front from below.
  return select(dot(v, m) * v.z <= 0.0f, Float(0.0f), result);
}

Array2f MicrofacetDistribution::sample_visible_11(const Float& cos_theta_i, const Array2f& sample) const {
  if (type_ == MicrofacetType::Beckmann) {
    // Jakob's numerical inversion of the visible-slope CDF, in the erf() domain: an
    // analytic first guess (exact at grazing incidence) and three Newton steps.
    Float tan_theta_i = safe_sqrt(fma(-cos_theta_i, cos_theta_i, Float(1.0f))) / cos_theta_i;
    Float cot_theta_i = rcp(tan_theta_i);
    Float maxval = erf(cot_theta_i);
    Float u1 = clip(sample.x, 1e-6f, 1.0f - 1e-6f), u2 = clip(sample.y, 1e-6f, 1.0f - 1e-6f);
    Float x = maxval - (maxval + 1.0f) * erf(sqrt(-log(u1)));
    u1 = u1 * (1.0f + maxval + kInvSqrtPi * tan_theta_i * exp(-(cot_theta_i * cot_theta_i)));
    for (int i = 0; i < 3; ++i) {
      Float slope = erfinv(x);
      Float value = 1.0f + x + kInvSqrtPi * tan_theta_i * exp(-(slope * slope)) - u1;
      Float derivative = 1.0f - slope * tan_theta_i;
      x = x - value / derivative;
    }
    return Array2f(erfinv(x), erfinv(fma(Float(2.0f), u2, Float(-1.0f))));
  }
  // GGX (Heitz 2018): a uniform point on the disk, squeezed onto the half facing wi,
  // lifted to the hemisphere and projected to a slope.
  Array2f p = warp::square_to_uniform_disk_concentric(sample);
  Float s = 0.5f * (1.0f + cos_theta_i);
  Float y = lerp(safe_sqrt(1.0f - p.x * p.x), p.y, s);
  Float z = safe_sqrt(1.0f - (p.x * p.x + y * y));
  Float sin_theta_i = safe_sqrt(1.0f - cos_theta_i * cos_theta_i);
  Float norm = rcp(fma(sin_theta_i, y, cos_theta_i * z));
  return Array2f(fma(cos_theta_i, y, -(sin_theta_i * z)) * norm, p.x * norm);
}

}  // namespace kiln::render
