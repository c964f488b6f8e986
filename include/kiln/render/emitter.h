// Light sources (Mitsuba 3's Emitter interface).
//
// What an implementation guarantees:
// - Radiance is linear RGB in W/(m² sr) per channel; a point or spot light's intensity in
//   W/sr; a directional light's irradiance in W/m².
// - sample_direction() picks a point of the emitter as seen from `ref_p` and returns the
//   sample (pdf per unit solid angle at `ref_p`, or a discrete 1 for delta emitters) with
//   the weight radiance / pdf, already including the 1/dist² and cosine terms; it does not
//   test visibility. Lanes where the emitter faces away get weight 0.
// - pdf_direction() is the density sample_direction() gives to `ds` (0 for delta emitters).
// - eval() is the radiance leaving the surface point `si` towards -si.wi (area lights:
//   zero on the back side) or, for infinite emitters, arriving along -si.wi on a miss.
// - sample_ray() starts a light path (the particle tracer's): the ray leaves the emitter
//   with weight emitted power / density, so that the mean weight over many rays is the
//   emitter's total power (infinite emitters: the power entering the scene's bounding
//   sphere).
// - sample_position() gives a point of the emitter for a connection to an observer at
//   `ref_p`, with the weight radiance / density per unit area; the observer applies the
//   cosine at the point. Only non-delta emitters are connected this way.
// - Every parameter is a texture or Kiln array registered in traverse().
// - tests/render/test_emitter_*.cpp check sample_direction() against pdf_direction() with a
//   chi-square test.
#pragma once

#include <kiln/render/interaction.h>
#include <kiln/render/properties.h>

#include <array>
#include <cstdint>
#include <utility>

namespace kiln::render {

class Shape;

/// Emitter kinds, combined as bit masks (Mitsuba's EmitterFlags).
namespace emitter_flags {
inline constexpr uint32_t kNone = 0;
inline constexpr uint32_t kDeltaPosition = 1u << 0;
inline constexpr uint32_t kDeltaDirection = 1u << 1;
inline constexpr uint32_t kInfinite = 1u << 2;
inline constexpr uint32_t kSurface = 1u << 3;
inline constexpr uint32_t kSpatiallyVarying = 1u << 4;
inline constexpr uint32_t kDelta = kDeltaPosition | kDeltaDirection;
}  // namespace emitter_flags

class Emitter : public Object {
 public:
  PluginKind kind() const override { return PluginKind::Emitter; }

  /// A point of the emitter seen from `ref_p`, and its weight radiance / pdf.
  virtual std::pair<DirectionSample3f, Color3f> sample_direction(const Array3f& ref_p, const Array2f& sample,
                                                                 const Bool& active) const = 0;
  /// The density of `ds` under sample_direction() from `ref_p`.
  virtual Float pdf_direction(const Array3f& ref_p, const DirectionSample3f& ds, const Bool& active) const = 0;
  /// The emitted radiance at `si` towards -si.wi.
  virtual Color3f eval(const SurfaceInteraction& si, const Bool& active) const = 0;
  /// A ray leaving the emitter from 2D samples of its position and direction, and its
  /// weight (power / density).
  virtual std::pair<Ray3f, Color3f> sample_ray(const Array2f& position_sample, const Array2f& direction_sample,
                                               const Bool& active) const = 0;
  /// A point of the emitter seen from `ref_p` and its weight, radiance over the density per
  /// unit area. By default sample_direction()'s point, facing `ref_p` (infinite emitters).
  virtual std::pair<PositionSample3f, Color3f> sample_position(const Array3f& ref_p, const Array2f& sample,
                                                               const Bool& active) const;

  uint32_t flags() const { return flags_; }
  bool is_environment() const { return (flags_ & emitter_flags::kInfinite) != 0 && !(flags_ & emitter_flags::kDelta); }

  /// Called once by the scene for an emitter attached to a shape (area lights).
  virtual void set_shape(Shape* shape);
  /// Called once the scene is complete with the bounding sphere of its shapes (infinite
  /// emitters sample positions on it).
  virtual void set_scene_bounds(const std::array<float, 3>& center, float radius);

 protected:
  uint32_t flags_ = 0;
};

}  // namespace kiln::render
