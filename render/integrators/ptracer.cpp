// The particle tracer (Mitsuba 3's `ptracer`): light paths leave the emitters
// (Scene::sample_emitter_ray), scatter by BSDF sampling with importance transport, and at
// every surface vertex connect to the sensor, splatting what reaches it into the film
// unnormalized (ImageBlock::splat); emitters the sensor sees directly are connected too,
// unless `hide_emitters`. Parameters as Mitsuba's: `max_depth` (-1: unbounded; 1 renders
// only the visible emitters), `rr_depth` (5), `hide_emitters` (false), `samples_per_pass`
// (all in one pass; a divisor of the sample count, each pass evaluated on its own).
// A render traces spp light paths per pixel of the crop window, so a crop costs what it
// shows (Mitsuba traces spp per pixel of the whole film). The shading-normal correction of
// adjoint BSDFs (Veach, p. 155) applies at every vertex. Derivatives are plain AD through
// the loop, as in Mitsuba.
#include "core/parameter_checks.h"
#include "integrators/path_tools.h"

#include <kiln/control.h>
#include <kiln/errors.h>
#include <kiln/render/integrator.h>
#include <kiln/render/plugin.h>
#include <kiln/render/scene.h>
#include <kiln/render/sensor.h>

#include <string>

namespace kiln::render {
namespace {

/// What a light path carries from vertex to vertex.
struct LightPath {
  Bool active;
  UInt32 depth;  ///< vertices so far, the emitter's included
  Ray3f ray;
  Color3f throughput;
  Float eta;
  PCG32 rng;
  auto fields() { return std::tie(active, depth, ray, throughput, eta, rng); }
  auto fields() const { return std::tie(active, depth, ray, throughput, eta, rng); }
};

/// |cos θi · (wo · n_g)| / |cos θo · (wi · n_g)|, and whether the geometric and the shading
/// normal agree on both sides (where they do not, light would leak): the factor that turns
/// a BSDF with shading normals into its adjoint (Veach, p. 155). `wi` and `wo` are local.
std::pair<Float, Bool> shading_normal_correction(const SurfaceInteraction& si, const Array3f& wi, const Array3f& wo) {
  Float wi_dot_n = dot(si.n, si.to_world(wi)), wo_dot_n = dot(si.n, si.to_world(wo));
  Bool consistent = (wi_dot_n * wi.z > 0.0f) & (wo_dot_n * wo.z > 0.0f);
  Float correction = abs((wi.z * wo_dot_n) / (wo.z * wi_dot_n));
  return {select(consistent, correction, Float(0.0f)), consistent};
}

class ParticleTracer : public Integrator {
 public:
  explicit ParticleTracer(const Properties& props)
      : Integrator(props),
        max_depth_(max_depth_parameter(props)),
        rr_depth_(rr_depth_parameter(props)),
        hide_emitters_(props.get_bool("hide_emitters", false)) {
    if (props.has("samples_per_pass")) {
      int64_t per_pass = props.get_int("samples_per_pass");
      if (per_pass <= 0)
        throw_parameter_error(props, "samples_per_pass", "must be positive, got " + std::to_string(per_pass));
      samples_per_pass_ = uint32_t(std::min<int64_t>(per_pass, ~0u));
    }
  }

  TensorXf render(const Scene& scene, const Sensor& sensor, uint32_t seed, uint32_t spp) const override {
    return render_in(mode_, scene, sensor, seed, spp);
  }

  /// The gradient render traces its light paths evaluated, whatever `mode` says: they splat
  /// inside their loop, and the derivatives of scatters made in the body of a symbolic loop
  /// cannot leave it. (Evaluated loops also bound nothing: an unbounded max_depth works.)
  TensorXf render_for_derivatives(const Scene& scene, const Sensor& sensor, uint32_t seed,
                                  uint32_t spp) const override {
    return render_in(ControlMode::Evaluated, scene, sensor, seed, spp);
  }

 private:
  TensorXf render_in(std::optional<ControlMode> mode, const Scene& scene, const Sensor& sensor, uint32_t seed,
                     uint32_t spp) const {
    ControlModeScope mode_scope(mode);
    const Film& film = *sensor.film();
    if (spp == 0) spp = sensor.sampler()->sample_count();
    uint32_t per_pass = samples_per_pass_ == 0 ? spp : std::min(samples_per_pass_, spp);
    if (spp % per_pass != 0)
      throw_parameter_error(*this, "samples_per_pass",
                            "is " + std::to_string(per_pass) + ", which does not divide the " + std::to_string(spp) +
                                " samples per pixel of this render");
    auto [crop_width, crop_height] = film.crop_size();
    uint64_t pixels = uint64_t(crop_width) * crop_height;
    // A pass stays below 2^32 lanes: passes are split further where needed.
    while (pixels * per_pass >= (uint64_t(1) << 32) || spp % per_pass != 0) --per_pass;
    uint32_t passes = spp / per_pass;

    // Shared with the light path loop's body, which reverse mode may trace again later.
    auto block = std::make_shared<ImageBlock>(film.create_block(3 + film.has_alpha()));
    if (!scene.emitters().empty()) {
      // Each of the pixels · spp light paths adds its splats; the pinhole's importance
      // integrates to 1 over the crop window, hence the scale pixels / paths.
      Float scale = opaque<Float>(1.0f / float(spp));
      for (uint32_t pass = 0; pass < passes; ++pass) {
        PCG32 rng = sensor.sampler()->rng(seed * passes + pass, size_t(pixels * per_pass));
        // Traced before anything splats: a sensor light paths cannot reach raises while
        // nothing is pending that refers to the scene.
        Bool active(true);
        LightPath start = emit(scene, rng, active);
        if (max_depth_ != 0 && !hide_emitters_)
          connect_visible_emitters(scene, sensor, *block, start.rng, scale, active);
        trace_light_paths(scene, sensor, block, start, scale);
        if (passes > 1) block->evaluate();
      }
    }
    TensorXf image = film.develop(*block, true);
    kiln::eval(image.array());
    std::vector<std::string> channels{"R", "G", "B"};
    if (film.has_alpha()) channels.push_back("A");
    sensor.film()->keep_image(TensorXf(detach(image.array()), image.shape()), std::move(channels));
    return image;
  }

  /// Splats `value` · `scale` (and `alpha`) where the connection `to_sensor` from `si` lands
  /// on the film, unless something lies between them.
  void splat(const Scene& scene, const Sensor& sensor, ImageBlock& block, const SurfaceInteraction& si,
             const DirectionSample3f& to_sensor, const Color3f& value, float alpha, const Float& scale,
             const Bool& active) const {
    Bool visible = active & (to_sensor.pdf > 0.0f) & ((value.x != 0.0f) | (value.y != 0.0f) | (value.z != 0.0f));
    visible = visible & !scene.ray_test(si.spawn_ray_to(to_sensor.p), visible);
    auto [width, height] = sensor.film()->size();
    Array2f position(to_sensor.uv.x * opaque<Float>(float(width)), to_sensor.uv.y * opaque<Float>(float(height)));
    Color3f scaled = value * scale;
    std::vector<Float> values{scaled.x, scaled.y, scaled.z};
    if (sensor.film()->has_alpha()) values.push_back(Float(alpha));
    block.splat(position, values, visible);
  }

  /// Connects a point of a randomly chosen emitter to the sensor (emitters seen directly).
  void connect_visible_emitters(const Scene& scene, const Sensor& sensor, ImageBlock& block, PCG32& rng,
                                const Float& scale, const Bool& active) const {
    Array3f sensor_position = sensor.world_transform().apply_point(Array3f(0.0f, 0.0f, 0.0f));
    Float pick = rng.next_float32();
    auto [ps, weight] = scene.sample_emitter_position(sensor_position, pick, next_2d(rng), active);
    SurfaceInteraction si = surface_at(ps);
    auto [to_sensor, importance] = sensor.sample_direction(si.p, active);
    Float cos_theta = max(si.to_local(to_sensor.d).z, Float(0.0f));
    splat(scene, sensor, block, si, to_sensor, weight * importance * cos_theta, 0.0f, scale, active);
  }

  /// The light paths' first rays, leaving the emitters (the paths carry `rng` on).
  LightPath emit(const Scene& scene, PCG32 rng, const Bool& active) const {
    LightPath start;
    Float pick = rng.next_float32();
    Array2f position_sample = next_2d(rng);
    std::tie(start.ray, start.throughput) = scene.sample_emitter_ray(pick, position_sample, next_2d(rng), active);
    start.depth = UInt32(1u) + zeros<UInt32>(start.ray.o.x.size());
    start.active = active & any_nonzero(start.throughput) & Bool(max_depth_ > 1);
    start.eta = Float(1.0f) + zeros<Float>(start.ray.o.x.size());
    start.rng = rng;
    return start;
  }

  /// Traces the light paths, connecting each surface vertex to the sensor.
  void trace_light_paths(const Scene& scene, const Sensor& sensor, const std::shared_ptr<ImageBlock>& block,
                         const LightPath& start, const Float& scale) const {
    while_loop(
        std::tuple(start), [](const LightPath& path) { return path.active; },
        [this, &scene, &sensor, block, scale](const LightPath& path) {
          return std::tuple(scatter(scene, sensor, *block, path, scale));
        },
        std::nullopt, "ptracer", LoopDerivative{.max_iterations = max_depth_ == ~0u ? 0 : max_depth_});
  }

  /// One vertex of a light path: its connection to the sensor, then the BSDF sample on.
  LightPath scatter(const Scene& scene, const Sensor& sensor, ImageBlock& block, const LightPath& path,
                    const Float& scale) const {
    LightPath next = path;
    SurfaceInteraction si = scene.ray_intersect(path.ray, path.active);
    Bool hit = path.active & si.is_valid();

    BSDFContext ctx;
    ctx.mode = TransportMode::Importance;
    auto [to_sensor, importance] = sensor.sample_direction(si.p, hit);
    Array3f towards_sensor = si.to_local(to_sensor.d);
    Float sample1 = next.rng.next_float32();
    Array2f sample2 = next_2d(next.rng);
    auto [bsdf_value, bsdf_pdf, bs, bsdf_weight] =
        scene.bsdf_eval_pdf_sample(ctx, si, towards_sensor, sample1, sample2, hit);
    Float connection_correction = shading_normal_correction(si, si.wi, towards_sensor).first;
    splat(scene, sensor, block, si, to_sensor, path.throughput * importance * bsdf_value * connection_correction, 1.0f,
          scale, hit);

    auto [correction, consistent] = shading_normal_correction(si, si.wi, bs.wo);
    next.throughput = path.throughput * bsdf_weight * correction;
    next.eta = path.eta * bs.eta;
    next.depth = path.depth + 1u;
    next.active = hit & consistent & any_nonzero(next.throughput) & (next.depth < UInt32(max_depth_));
    // Russian roulette past rr_depth vertices: a sampling decision, detached.
    Float throughput_max = detach(max(max(next.throughput.x, next.throughput.y), next.throughput.z));
    Float q = min(throughput_max * detach(next.eta * next.eta), Float(0.95f));
    Bool roulette = next.depth > UInt32(rr_depth_);
    next.active = next.active & ((!roulette) | (next.rng.next_float32() < q));
    next.throughput = next.throughput * select(roulette & (q > 0.0f), rcp(q), Float(1.0f));
    next.ray = si.spawn_ray(continuation_direction(si, bs));
    return next;
  }

  static Bool any_nonzero(const Color3f& c) { return (c.x != 0.0f) | (c.y != 0.0f) | (c.z != 0.0f); }

  uint32_t max_depth_, rr_depth_;
  bool hide_emitters_;
  uint32_t samples_per_pass_ = 0;  ///< 0: every sample in one pass
};

}  // namespace

KILN_REGISTER_PLUGIN(PluginKind::Integrator, "ptracer",
                     [](const Properties& p) { return std::make_shared<ParticleTracer>(p); });

}  // namespace kiln::render
