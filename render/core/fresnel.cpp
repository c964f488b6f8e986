// Fresnel reflectance of dielectrics and conductors, and reflected/refracted directions.
#include <kiln/render/fresnel.h>

namespace kiln::render {
namespace {

/// One channel of the conductor's Fresnel reflectance (after Moeller, "Optics", 1988).
Float fresnel_conductor_channel(const Float& cos_theta_i, const Float& eta, const Float& k) {
  Float cos_theta_i_2 = cos_theta_i * cos_theta_i;
  Float sin_theta_i_2 = 1.0f - cos_theta_i_2;
  Float sin_theta_i_4 = sin_theta_i_2 * sin_theta_i_2;

  Float temp_1 = eta * eta - k * k - sin_theta_i_2;
  Float a_2_pb_2 = safe_sqrt(temp_1 * temp_1 + 4.0f * k * k * eta * eta);
  Float a = safe_sqrt(0.5f * (a_2_pb_2 + temp_1));

  Float term_1 = a_2_pb_2 + cos_theta_i_2;
  Float term_2 = 2.0f * cos_theta_i * a;
  Float r_s = (term_1 - term_2) / (term_1 + term_2);

  Float term_3 = a_2_pb_2 * cos_theta_i_2 + sin_theta_i_4;
  Float term_4 = term_2 * sin_theta_i_2;
  Float r_p = r_s * (term_3 - term_4) / (term_3 + term_4);

  return 0.5f * (r_s + r_p);
}

}  // namespace

FresnelResult fresnel(const Float& cos_theta_i, const Float& eta) {
  Bool outside = cos_theta_i >= 0.0f;
  Float rcp_eta = rcp(eta);
  Float eta_it = select(outside, eta, rcp_eta);
  Float eta_ti = select(outside, rcp_eta, eta);

  // Snell's law: the squared cosine of the transmitted direction (negative under total
  // internal reflection, where the square root below clamps it to 0 and F becomes 1).
  Float cos_theta_t_sqr = fma(-fma(-cos_theta_i, cos_theta_i, Float(1.0f)), eta_ti * eta_ti, Float(1.0f));
  Float cos_theta_i_abs = abs(cos_theta_i);
  Float cos_theta_t_abs = safe_sqrt(cos_theta_t_sqr);

  // Amplitudes of the reflected s- and p-polarized waves.
  Float a_s = fma(-eta_it, cos_theta_t_abs, cos_theta_i_abs) / fma(eta_it, cos_theta_t_abs, cos_theta_i_abs);
  Float a_p = fma(-eta_it, cos_theta_i_abs, cos_theta_t_abs) / fma(eta_it, cos_theta_i_abs, cos_theta_t_abs);
  Float r = 0.5f * (a_s * a_s + a_p * a_p);

  Bool index_matched = eta == 1.0f;
  Bool special_case = index_matched | (cos_theta_i_abs == 0.0f);
  r = select(special_case, select(index_matched, Float(0.0f), Float(1.0f)), r);

  return {r, -mulsign(cos_theta_t_abs, cos_theta_i), eta_it, eta_ti};
}

Color3f fresnel_conductor(const Float& cos_theta_i, const Color3f& eta, const Color3f& k) {
  return Color3f(fresnel_conductor_channel(cos_theta_i, eta.x, k.x), fresnel_conductor_channel(cos_theta_i, eta.y, k.y),
                 fresnel_conductor_channel(cos_theta_i, eta.z, k.z));
}

Float fresnel_diffuse_reflectance(const Float& eta) {
  Float inv_eta = rcp(eta);
  // Egan and Hilgeman (1973): accurate for eta < 1.
  Float approx_1 = fma(Float(0.0636f), inv_eta, fma(eta, fma(eta, Float(-1.4399f), Float(0.7099f)), Float(0.6681f)));
  // d'Eon and Irving (2011): a polynomial in 1/eta, accurate for eta > 1.
  Float approx_2 = Float(-1.36881f);
  for (float coefficient : {4.98554f, -7.80989f, 6.75335f, -3.4793f, 0.919317f})
    approx_2 = fma(approx_2, inv_eta, Float(coefficient));
  return select(eta < 1.0f, approx_1, approx_2);
}

Array3f reflect(const Array3f& wi, const Array3f& m) { return m * (2.0f * dot(wi, m)) - wi; }

Array3f refract(const Array3f& wi, const Float& cos_theta_t, const Float& eta_ti) {
  return Array3f(-eta_ti * wi.x, -eta_ti * wi.y, cos_theta_t);
}

Array3f refract(const Array3f& wi, const Array3f& m, const Float& cos_theta_t, const Float& eta_ti) {
  return m * fma(dot(wi, m), eta_ti, cos_theta_t) - wi * eta_ti;
}

}  // namespace kiln::render
