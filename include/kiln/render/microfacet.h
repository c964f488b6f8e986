// Microfacet distributions (Mitsuba 3's MicrofacetDistribution): Beckmann and GGX
// (Trowbridge-Reitz), isotropic or anisotropic, with Smith shadowing-masking and sampling of
// all normals or of the visible ones only. The rough BSDFs are built on it.
//
// What an implementation guarantees:
// - Directions and normals are unit vectors in the local frame (+z the mean normal).
// - eval(m) is D(m), normalized so that ∫ D(m) cos θm dm = 1; values with D · cos θm <=
//   1e-20 are 0. Roughness below 1e-4 is raised to 1e-4, as Mitsuba does.
// - sample(wi, u) returns a normal m and pdf(wi, m): with visible-normal sampling the
//   density D(m) G1(wi, m) |wi · m| / cos θi (Heitz 2018's exact method for GGX; Jakob's
//   numerical inversion for Beckmann), otherwise D(m) cos θm. wi must lie above the surface.
// - smith_g1(v, m) is 0 when v sees the back of the microfacet (v · m and cos θv differ in
//   sign), 1 at normal incidence; G = G1(wi) G1(wo) (the separable form).
// - Everything is traced Kiln code: it fuses into kernels and differentiates in alpha.
#pragma once

#include <kiln/render/common.h>

#include <cstdint>
#include <utility>
#include <vector>

namespace kiln::render {

/// The distribution of microfacet normals.
enum class MicrofacetType : uint8_t {
  Beckmann,  ///< Gaussian random surfaces
  GGX,       ///< Trowbridge-Reitz: longer tails
};

/// "beckmann" or "ggx", the names the `distribution` parameter takes.
const char* microfacet_name(MicrofacetType type);

class MicrofacetDistribution {
 public:
  /// An isotropic distribution of roughness `alpha` (the RMS slope for Beckmann).
  MicrofacetDistribution(MicrofacetType type, const Float& alpha, bool sample_visible = true);
  /// An anisotropic one: `alpha_u` along the tangent (x), `alpha_v` along the bitangent (y).
  /// It counts as isotropic when both are the same Kiln array, as in Mitsuba's JIT modes.
  MicrofacetDistribution(MicrofacetType type, const Float& alpha_u, const Float& alpha_v, bool sample_visible = true);

  MicrofacetType type() const { return type_; }
  const Float& alpha_u() const { return alpha_u_; }
  const Float& alpha_v() const { return alpha_v_; }
  bool sample_visible() const { return sample_visible_; }
  bool is_isotropic() const { return isotropic_; }
  /// Multiplies both roughness values by `factor` (Walter et al.'s widening of the
  /// sampling lobe when visible normals are not sampled).
  void scale_alpha(const Float& factor);

  /// D(m), the density of microfacet normals.
  Float eval(const Array3f& m) const;
  /// The density with which sample(wi, ·) returns `m` (solid angle of normals).
  Float pdf(const Array3f& wi, const Array3f& m) const;
  /// A microfacet normal for incident direction `wi` from a uniform 2D sample, and its pdf.
  std::pair<Array3f, Float> sample(const Array3f& wi, const Array2f& sample) const;
  /// Smith's shadowing-masking G1(wi, m) G1(wo, m).
  Float G(const Array3f& wi, const Array3f& wo, const Array3f& m) const;
  /// Smith's masking function for one direction `v` and microfacet normal `m`.
  Float smith_g1(const Array3f& v, const Array3f& m) const;

 private:
  /// Samples the slopes of visible normals for the unit-roughness distribution seen at cos θi.
  Array2f sample_visible_11(const Float& cos_theta_i, const Array2f& sample) const;

  MicrofacetType type_;
  Float alpha_u_, alpha_v_;
  bool sample_visible_;
  bool isotropic_;
};

/// Directional albedos of a rough dielectric interface (Mitsuba's eval_reflectance and
/// eval_transmittance), used by roughplastic: for each cos θi in `cos_theta_i` (incidence
/// in the x-z plane), the fraction of light the isotropic distribution (`type`, `alpha`,
/// visible normals) reflects, or transmits into a medium of relative index `eta`, after
/// one scattering. Gauss-Legendre quadrature over the sampling square (32² nodes when
/// eta > 1, else 128²); traced, then summed on the host.
std::vector<double> microfacet_reflectance(MicrofacetType type, float alpha, float eta,
                                           const std::vector<float>& cos_theta_i);
std::vector<double> microfacet_transmittance(MicrofacetType type, float alpha, float eta,
                                             const std::vector<float>& cos_theta_i);

}  // namespace kiln::render
