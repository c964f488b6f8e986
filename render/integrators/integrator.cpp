// What every integrator shares: the control-flow mode, and the sampling integrators'
// render(): camera rays for every sample of the crop window (camera_samples(), which
// integrators written in Python use too), splatted into the film.
// Everything a render varies per call (film size, crop, samples per pixel, seed) reaches
// kernels as opaque parameters, so a new value compiles nothing (story 1).
#include "core/parameter_checks.h"
#include "core/recording.h"

#include <kiln/construct.h>
#include <kiln/control.h>
#include <kiln/errors.h>
#include <kiln/render/integrator.h>
#include <kiln/render/scene.h>
#include <kiln/runtime.h>

#include <optional>

namespace kiln::render {
namespace {

/// Each sample's δL: the derivative of <image, adjoint> with respect to the first three
/// values the samples splat at `position` (a block of `channels` developed by `film`).
Color3f splat_adjoints(const Film& film, const Array2f& position, size_t channels, bool color,
                       const TensorXf& adjoint) {
  GradScope recording = resume_grad();
  GradScope isolation = isolate_grad();
  std::vector<Float> probes(channels, zeros<Float>(position.x.size()));
  for (Float& probe : probes) enable_grad(probe);
  ImageBlock block = film.create_block(channels);
  block.put(position, probes, Bool(true));
  backward_from(film.develop(block, color).array(), adjoint.array());
  return Color3f(grad(probes[0]), grad(probes[1]), grad(probes[2]));
}
std::optional<ControlMode> parse_mode(const Properties& props) {
  if (!props.has("mode")) return std::nullopt;
  return one_of(props, "mode", "symbolic", {"symbolic", "evaluated"}) == "symbolic" ? ControlMode::Symbolic
                                                                                    : ControlMode::Evaluated;
}

}  // namespace

Integrator::Integrator(const Properties& props) : mode_(parse_mode(props)) {}

bool Integrator::symbolic() const { return mode_.value_or(default_mode()) == ControlMode::Symbolic; }

TensorXf SamplingIntegrator::render(const Scene& scene, const Sensor& sensor, uint32_t seed, uint32_t spp) const {
  return render_samples(scene, sensor, seed, spp, false);
}

TensorXf SamplingIntegrator::render_for_derivatives(const Scene& scene, const Sensor& sensor, uint32_t seed,
                                                    uint32_t spp) const {
  return render_samples(scene, sensor, seed, spp, true);
}

CameraSamples camera_samples(const Sensor& sensor, uint32_t seed, uint32_t spp) {
  const Film& film = *sensor.film();
  if (spp == 0) spp = sensor.sampler()->sample_count();
  // With sample_border, the window sampled reaches the filter's radius beyond the crop.
  uint32_t border = film.border();
  auto [crop_width, crop_height] = film.crop_size();
  crop_width += 2 * border;
  crop_height += 2 * border;
  auto [width, height] = film.size();
  auto [offset_x, offset_y] = film.crop_offset();
  uint64_t wavefront = uint64_t(crop_width) * crop_height * spp;
  if (wavefront >= (uint64_t(1) << 32))
    throw ValueError("kiln.render: render(): " + std::to_string(crop_width) + " x " + std::to_string(crop_height) +
                     " pixels at " + std::to_string(spp) + " samples each exceed 2^32 samples; render fewer");

  CameraSamples samples;
  samples.rng = sensor.sampler()->rng(seed, size_t(wavefront));
  samples.pixel = arange<UInt32>(size_t(wavefront)) / opaque<UInt32>(spp);
  samples.sample_index = arange<UInt32>(size_t(wavefront)) - samples.pixel * opaque<UInt32>(spp);
  UInt32 row = samples.pixel / opaque<UInt32>(crop_width);
  UInt32 column = samples.pixel - row * opaque<UInt32>(crop_width);
  samples.position = Array2f(cast<float>(column) + opaque<Float>(float(offset_x) - float(border)),
                             cast<float>(row) + opaque<Float>(float(offset_y) - float(border)));
  Float jitter_x = samples.rng.next_float32();
  samples.sample_position = Array2f(samples.position.x + jitter_x, samples.position.y + samples.rng.next_float32());
  // With the box filter a sample belongs to its pixel: it splats at the pixel's own position.
  samples.splat_position = film.rfilter()->is_box() ? samples.position : samples.sample_position;
  Array2f film_position(samples.sample_position.x * opaque<Float>(1.0f / float(width)),
                        samples.sample_position.y * opaque<Float>(1.0f / float(height)));
  samples.active = Bool(true);
  std::tie(samples.ray, samples.weight) = sensor.sample_ray(film_position, samples.active);
  return samples;
}

Color3f sample_adjoints(const Film& film, const CameraSamples& samples, size_t channels, bool color,
                        const TensorXf& adjoint) {
  return splat_adjoints(film, samples.splat_position, channels, color, adjoint);
}

namespace {
/// A block of the film with the samples' values put in it (pending: developing it runs the splats).
ImageBlock splat_samples(const Film& film, const CameraSamples& samples, const std::vector<Float>& values) {
  ImageBlock block = film.create_block(values.size());
  block.put(samples.splat_position, values, samples.active);
  return block;
}
}  // namespace

TensorXf develop_samples(const Film& film, const CameraSamples& samples, const std::vector<Float>& values, bool color) {
  return film.develop(splat_samples(film, samples, values), color);
}

std::vector<Float> SamplingIntegrator::sample_values(const Scene& scene, const Film& film, CameraSamples& samples,
                                                     bool for_derivatives) const {
  std::optional<VertexRecording> recording;
  if (const RecordingRequest* request = recording_request()) {
    Color3f ray_adjoint(0.0f, 0.0f, 0.0f);
    if (request->image_adjoint()) {
      size_t channels = (returns_color() ? 3 + film.has_alpha() : 0) + aov_names().size();
      ray_adjoint =
          sample_adjoints(film, samples, channels, returns_color(), *request->image_adjoint()) * samples.weight;
    }
    recording = VertexRecording{&request->records(), request->pass(), samples.pixel, samples.sample_index, ray_adjoint};
  }
  RaySample result;
  {
    VertexRecordingScope recording_scope(recording ? &*recording : nullptr);
    result = for_derivatives ? sample_for_derivatives(scene, samples.rng, samples.ray, samples.active)
                             : sample(scene, samples.rng, samples.ray, samples.active);
  }

  std::vector<Float> values;
  if (returns_color()) {
    Color3f radiance = result.radiance * samples.weight;
    values = {radiance.x, radiance.y, radiance.z};
    if (film.has_alpha()) values.push_back(select(result.valid, Float(1.0f), Float(0.0f)));
  }
  values.insert(values.end(), result.aovs.begin(), result.aovs.end());
  // A gradient render's image only carries a traversal: its values are never read, so
  // the samples' values (a path replay's primal pass) need not be computed.
  if (for_derivatives)
    for (Float& value : values) value = derivatives_without_values(value);
  return values;
}

TensorXf SamplingIntegrator::render_samples(const Scene& scene, const Sensor& sensor, uint32_t seed, uint32_t spp,
                                            bool for_derivatives) const {
  // Every loop and call the render traces (the scene's queries included) defaults to the
  // integrator's `mode`; their derivatives keep it, whenever a traversal reaches them.
  ControlModeScope mode_scope(mode_);
  const Film& film = *sensor.film();
  // The samples (rays, generators, the integrator's results) go before developing the
  // block runs its splats, so that their kernel stores none of them.
  ImageBlock block = [&] {
    CameraSamples samples = camera_samples(sensor, seed, spp);
    return splat_samples(film, samples, sample_values(scene, film, samples, for_derivatives));
  }();
  TensorXf image = film.develop(block, returns_color());
  // Evaluated here, as Mitsuba's render() does: nothing pending refers to the scene after.
  kiln::eval(image.array());
  if (!for_derivatives) {  // film.bitmap()'s copy: values only, so it holds no derivative graph
    std::vector<std::string> channels;
    if (returns_color())
      channels =
          film.has_alpha() ? std::vector<std::string>{"R", "G", "B", "A"} : std::vector<std::string>{"R", "G", "B"};
    for (const std::string& aov : aov_names()) channels.push_back(aov);
    sensor.film()->keep_image(TensorXf(detach(image.array()), image.shape()), std::move(channels));
  }
  return image;
}

}  // namespace kiln::render
