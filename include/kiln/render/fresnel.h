// Fresnel equations and the mirror/refraction directions they go with (Mitsuba 3's
// mitsuba/render/fresnel.h, unpolarized and RGB only).
//
// What an implementation guarantees:
// - Directions are unit vectors in the local frame (+z the normal); cosines are signed:
//   cos θi < 0 means the light arrives from below, inside the material of index `eta`.
// - fresnel() returns Mitsuba's quadruple (F, cos θt, eta_it, eta_ti): F is 0 for
//   index-matched interfaces (eta = 1), 1 under total internal reflection and at grazing
//   incidence; cos θt has the sign opposite to cos θi (the transmitted side).
// - fresnel_conductor() assumes light arrives from outside (cos θi >= 0).
// - Every function is traced Kiln code: it fuses into kernels and differentiates.
#pragma once

#include <kiln/render/common.h>

namespace kiln::render {

/// The dielectric Fresnel reflectance and the refraction data that come with it.
struct FresnelResult {
  Float reflectance;  ///< F, the unpolarized reflection coefficient
  Float cos_theta_t;  ///< cosine of the transmitted direction (sign opposite to cos θi)
  Float eta_it;       ///< relative index along the direction of travel (eta or 1/eta)
  Float eta_ti;       ///< its reciprocal: the scale of the refracted direction's x and y
};

/// The unpolarized Fresnel reflectance of a dielectric interface of relative index `eta`
/// (interior / exterior) seen at cos θi.
FresnelResult fresnel(const Float& cos_theta_i, const Float& eta);

/// The unpolarized Fresnel reflectance of a conductor of complex index eta + i k, per
/// color channel, at cos θi >= 0.
Color3f fresnel_conductor(const Float& cos_theta_i, const Color3f& eta, const Color3f& k);

/// The dielectric Fresnel reflectance averaged over a diffuse (cosine-weighted) hemisphere
/// of incident light ("Fdr"), by the fits Mitsuba uses (Egan and Hilgeman for eta < 1,
/// d'Eon and Irving above).
Float fresnel_diffuse_reflectance(const Float& eta);

/// `wi` mirrored about the microfacet normal `m`.
Array3f reflect(const Array3f& wi, const Array3f& m);
/// `wi` refracted through the surface normal +z, from fresnel()'s cos θt and eta_ti.
Array3f refract(const Array3f& wi, const Float& cos_theta_t, const Float& eta_ti);
/// `wi` refracted through the microfacet normal `m`, from fresnel()'s cos θt and eta_ti
/// (evaluated with cos θi = dot(wi, m)).
Array3f refract(const Array3f& wi, const Array3f& m, const Float& cos_theta_t, const Float& eta_ti);

}  // namespace kiln::render
