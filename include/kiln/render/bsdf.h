// Bidirectional scattering distribution functions (Mitsuba 3's BSDF interface).
//
// What an implementation guarantees:
// - Directions are unit vectors in the shading frame of `si` (local: the normal is +z);
//   `si.wi` is the incident direction, `wo` the outgoing one. Rendering from the camera
//   (TransportMode::Radiance) samples `wo` towards the light.
// - eval() returns the BSDF value times the foreshortening |cos θo| (0 for directions the
//   BSDF cannot scatter into, and 0 for every delta component: those are only sampled).
// - pdf() is the density of sample()'s `wo` with respect to solid angle, for the same
//   context; 0 for delta components.
// - sample() returns the sampled direction and its weight eval()/pdf() (for delta
//   components: the component's throughput), and marks in `sampled_type` which lobe it
//   chose. Lanes that fail to sample get pdf 0 and weight 0.
// - A BSDF is one-sided unless it says otherwise: with si.wi below the surface
//   (cos θi <= 0) reflection is zero; `twosided` wraps one to make both sides alike.
// - Every parameter is a texture or Kiln array registered in traverse(), so it carries
//   gradients; results are differentiable with respect to them.
// - tests/render/test_bsdf_*.cpp check sample() against eval()/pdf() with a chi-square test.
#pragma once

#include <kiln/render/interaction.h>
#include <kiln/render/properties.h>

#include <cstdint>
#include <tuple>
#include <utility>
#include <vector>

namespace kiln::render {

/// Which way light flows along the path being traced.
enum class TransportMode : uint8_t { Radiance, Importance };

/// Lobe types, combined as bit masks (Mitsuba's BSDFFlags).
namespace bsdf_flags {
inline constexpr uint32_t kNone = 0;
inline constexpr uint32_t kNull = 1u << 0;
inline constexpr uint32_t kDiffuseReflection = 1u << 1;
inline constexpr uint32_t kDiffuseTransmission = 1u << 2;
inline constexpr uint32_t kGlossyReflection = 1u << 3;
inline constexpr uint32_t kGlossyTransmission = 1u << 4;
inline constexpr uint32_t kDeltaReflection = 1u << 5;
inline constexpr uint32_t kDeltaTransmission = 1u << 6;
inline constexpr uint32_t kAnisotropic = 1u << 7;
inline constexpr uint32_t kSpatiallyVarying = 1u << 8;
inline constexpr uint32_t kNonSymmetric = 1u << 9;
inline constexpr uint32_t kFrontSide = 1u << 10;
inline constexpr uint32_t kBackSide = 1u << 11;
inline constexpr uint32_t kReflection = kDiffuseReflection | kGlossyReflection | kDeltaReflection;
inline constexpr uint32_t kTransmission = kDiffuseTransmission | kGlossyTransmission | kDeltaTransmission | kNull;
inline constexpr uint32_t kDiffuse = kDiffuseReflection | kDiffuseTransmission;
inline constexpr uint32_t kGlossy = kGlossyReflection | kGlossyTransmission;
inline constexpr uint32_t kSmooth = kDiffuse | kGlossy;
inline constexpr uint32_t kDelta = kNull | kDeltaReflection | kDeltaTransmission;
inline constexpr uint32_t kAll = kDiffuse | kGlossy | kDelta;
}  // namespace bsdf_flags

/// What a query asks of a BSDF: the transport mode, and optionally only some lobes.
struct BSDFContext {
  TransportMode mode = TransportMode::Radiance;
  uint32_t type_mask = bsdf_flags::kAll;  ///< lobes to consider
  uint32_t component = ~0u;               ///< one component index, or ~0u for all

  /// True when lobe `type_flags` of component `index` takes part in this query.
  bool is_enabled(uint32_t type_flags, uint32_t index = 0) const {
    return (type_mask & type_flags) != 0 && (component == ~0u || component == index);
  }
};

/// A sampled outgoing direction.
struct BSDFSample3f {
  Array3f wo;                ///< local, unit
  Float pdf;                 ///< solid-angle density (a delta lobe's discrete probability)
  Float eta;                 ///< relative index of refraction along the sampled path (1: none)
  UInt32 sampled_type;       ///< the bsdf_flags lobe chosen
  UInt32 sampled_component;  ///< the component index chosen

  auto fields() { return std::tie(wo, pdf, eta, sampled_type, sampled_component); }
  auto fields() const { return std::tie(wo, pdf, eta, sampled_type, sampled_component); }
};

class BSDF : public Object {
 public:
  PluginKind kind() const override { return PluginKind::Bsdf; }

  /// Samples `wo` from one uniform number (lobe choice) and a 2D sample (direction);
  /// returns the sample and its weight eval()/pdf().
  virtual std::pair<BSDFSample3f, Color3f> sample(const BSDFContext& ctx, const SurfaceInteraction& si,
                                                  const Float& sample1, const Array2f& sample2,
                                                  const Bool& active) const = 0;
  /// BSDF · |cos θo| for the pair (si.wi, wo).
  virtual Color3f eval(const BSDFContext& ctx, const SurfaceInteraction& si, const Array3f& wo,
                       const Bool& active) const = 0;
  /// The density with which sample() picks `wo`.
  virtual Float pdf(const BSDFContext& ctx, const SurfaceInteraction& si, const Array3f& wo,
                    const Bool& active) const = 0;
  /// eval() and pdf() together (override when sharing work pays).
  virtual std::pair<Color3f, Float> eval_pdf(const BSDFContext& ctx, const SurfaceInteraction& si, const Array3f& wo,
                                             const Bool& active) const;
  /// eval_pdf() for `wo` and sample() together, as the path integrator asks at each vertex.
  virtual std::tuple<Color3f, Float, BSDFSample3f, Color3f> eval_pdf_sample(const BSDFContext& ctx,
                                                                            const SurfaceInteraction& si,
                                                                            const Array3f& wo, const Float& sample1,
                                                                            const Array2f& sample2,
                                                                            const Bool& active) const;
  /// The diffuse reflectance at `si` (the aov integrator's "albedo"); by default
  /// π · eval() towards the normal.
  virtual Color3f eval_diffuse_reflectance(const SurfaceInteraction& si, const Bool& active) const;

  /// The union of the lobes' flags.
  uint32_t flags() const { return flags_; }
  /// Flags of component `index`.
  uint32_t flags(size_t index) const { return components_.at(index); }
  size_t component_count() const { return components_.size(); }

 protected:
  /// Declares the components' flags (in the order `component` indices refer to).
  void set_components(std::vector<uint32_t> components);
  /// Sets the union of the lobes' flags apart from the components (a BSDF written in
  /// Python sets both, as Mitsuba's m_flags and m_components).
  void set_flags(uint32_t flags) { flags_ = flags; }

 private:
  std::vector<uint32_t> components_;
  uint32_t flags_ = 0;
};

}  // namespace kiln::render
