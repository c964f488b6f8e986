// Integrators (Mitsuba 3's `path`, `direct`, `aov`): how a render turns rays into pixel values.
//
// What an implementation guarantees:
// - render() returns the sensor's crop window as a TensorXf (crop height, crop width,
//   channels), channels as the film names them, for `spp` samples per pixel (the
//   sampler's count when 0) and `seed`.
// - The same scene, seed and spp give the same image in symbolic and evaluated mode.
// - A render compiles nothing new when only film size, crop, seed, spp or scene
//   parameter values changed since an earlier render of the same scene structure.
#pragma once

#include <kiln/control.h>
#include <kiln/random.h>
#include <kiln/render/common.h>
#include <kiln/render/properties.h>
#include <kiln/render/ray.h>
#include <kiln/tensor.h>

#include <optional>
#include <string>
#include <vector>

namespace kiln::render {

class Film;
class Scene;
class Sensor;

class Integrator : public Object {
 public:
  /// Reads `mode` ("symbolic" or "evaluated"; the global flag when absent).
  explicit Integrator(const Properties& props);
  PluginKind kind() const override { return PluginKind::Integrator; }

  virtual TensorXf render(const Scene& scene, const Sensor& sensor, uint32_t seed, uint32_t spp) const = 0;
  /// An image with the render's derivatives (what kr.render's gradient render
  /// differentiates); its values are not the render's (a sampling integrator's are zeros,
  /// never computed). By default the render itself.
  virtual TensorXf render_for_derivatives(const Scene& scene, const Sensor& sensor, uint32_t seed, uint32_t spp) const {
    return render(scene, sensor, seed, spp);
  }
  /// Raises a ValueError naming the integrator when its render cannot be differentiated in
  /// reverse mode as configured (called before a gradient render); nothing by default.
  virtual void check_reverse_mode() const {}
  /// The integrator's `mode` (empty: its loops and calls follow the default in effect).
  std::optional<ControlMode> mode() const { return mode_; }

 protected:
  /// Whether the integrator's loops run symbolic (its `mode`, else the global flag).
  bool symbolic() const;

  /// The control-flow mode of the integrator's loops and calls (the global flag when empty).
  std::optional<ControlMode> mode_;
};

/// The camera samples of a render: `spp` per pixel of the sensor's crop window (the
/// sampler's count when 0), pixel by pixel, with the rays through them.
struct CameraSamples {
  PCG32 rng;                ///< one generator per sample, seeded for `seed` (advanced past the jitter)
  UInt32 pixel;             ///< the pixel in the window sampled (the crop window and Film::border()), row-major
  UInt32 sample_index;      ///< the sample within its pixel
  Array2f position;         ///< the pixel's corner on the film (pixels)
  Array2f sample_position;  ///< position plus the sample's jitter
  Array2f splat_position;   ///< where the sample splats: its pixel with the box filter, else sample_position
  Ray3f ray;
  Color3f weight;  ///< the sensor's weight of the ray
  Bool active;
};

/// The samples a render at `seed` with `spp` samples per pixel traces (what every sampling
/// integrator's render() starts from); ValueError past 2^32 samples.
CameraSamples camera_samples(const Sensor& sensor, uint32_t seed, uint32_t spp);
/// The film's image of the samples' `values` (one Float per channel; the color channels
/// first when `color`).
TensorXf develop_samples(const Film& film, const CameraSamples& samples, const std::vector<Float>& values, bool color);
/// Each sample's δL: the derivative of <image, adjoint> with respect to the first three
/// values the samples splat (`channels` of them, developed as develop_samples() does).
Color3f sample_adjoints(const Film& film, const CameraSamples& samples, size_t channels, bool color,
                        const TensorXf& adjoint);

/// What a sampling integrator estimates for one camera ray.
struct RaySample {
  Color3f radiance;
  Bool valid;               ///< the ray hit something visible (the film's alpha)
  std::vector<Float> aovs;  ///< one value per aov_names() entry
};

/// An integrator that estimates each camera ray's value independently: render() generates
/// the rays, calls sample() and splats the results into the film's image block.
class SamplingIntegrator : public Integrator {
 public:
  using Integrator::Integrator;

  TensorXf render(const Scene& scene, const Sensor& sensor, uint32_t seed, uint32_t spp) const override;
  TensorXf render_for_derivatives(const Scene& scene, const Sensor& sensor, uint32_t seed, uint32_t spp) const override;

  /// Names of the values sample() returns beyond RGB (AOVs), in order.
  virtual std::vector<std::string> aov_names() const { return {}; }
  /// Whether the image starts with the radiance's color channels (the aov integrator's
  /// images hold only its channels).
  virtual bool returns_color() const { return true; }
  /// The radiance along `ray` and any AOVs; `rng` is advanced.
  virtual RaySample sample(const Scene& scene, PCG32& rng, const Ray3f& ray, const Bool& active) const = 0;
  /// A sample whose derivatives are sample()'s (see render_for_derivatives); sample() by default.
  virtual RaySample sample_for_derivatives(const Scene& scene, PCG32& rng, const Ray3f& ray, const Bool& active) const {
    return sample(scene, rng, ray, active);
  }

 private:
  /// render() with sample() or sample_for_derivatives().
  TensorXf render_samples(const Scene& scene, const Sensor& sensor, uint32_t seed, uint32_t spp,
                          bool for_derivatives) const;
  /// The values `samples` splat (the color channels, alpha, the aovs), from sample() or
  /// sample_for_derivatives(); records their vertices when a recording is requested.
  std::vector<Float> sample_values(const Scene& scene, const Film& film, CameraSamples& samples,
                                   bool for_derivatives) const;
};

}  // namespace kiln::render
