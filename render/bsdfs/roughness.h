// The roughness parameters of the rough BSDFs (Mitsuba 3's `distribution`, `alpha` or
// `alpha_u` + `alpha_v`, `sample_visible`), read once and shared by the plugins.
#pragma once

#include <kiln/render/microfacet.h>
#include <kiln/render/texture.h>

#include <memory>

namespace kiln::render {

class TraversalCallback;

/// `distribution`: "beckmann" (the default) or "ggx", in any case; anything else is a
/// ValueError naming the plugin and what is accepted.
MicrofacetType microfacet_type(const Properties& props);

/// Roughness given as textures (roughconductor, roughdielectric): `alpha` (default 0.1)
/// or both `alpha_u` and `alpha_v`; numbers must be >= 0.
class TexturedRoughness {
 public:
  explicit TexturedRoughness(const Properties& props);

  /// Anisotropic when alpha_u and alpha_v were given (Mitsuba's test: two textures).
  bool anisotropic() const { return alpha_u_ != alpha_v_; }
  /// The distribution at `si`, with the roughness textures evaluated there.
  MicrofacetDistribution distribution(const SurfaceInteraction& si, const Bool& active) const;
  bool sample_visible() const { return sample_visible_; }
  /// Lists "alpha", or "alpha_u" and "alpha_v", as Mitsuba names them.
  void traverse(TraversalCallback& callback) const;

 private:
  MicrofacetType type_;
  bool sample_visible_;
  std::shared_ptr<Texture> alpha_u_, alpha_v_;  ///< one texture when isotropic
};

/// Roughness given as one number (roughplastic): `alpha` (default 0.1), or `alpha_u` and
/// `alpha_v` when they are equal (anisotropy is a ValueError); it must be >= 0.
float isotropic_alpha(const Properties& props);

}  // namespace kiln::render
