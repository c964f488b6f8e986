// Projective sampling integrators (Mitsuba 3's `direct_projective` and `prb_projective`,
// after Zhang et al. 2023, "Projective Sampling for Differentiable Rendering of Geometry").
// Their images are `direct`'s and `prb`'s. Their derivatives add, to those integrators'
// interior terms (sppc samples per pixel), the primary visibility term (sppp): the
// derivative an image has because the silhouettes the camera sees move, which no pixel's
// interior derivative contains.
//
// The primary term is a line integral over the silhouettes in the image,
//   d/dθ I(pixel) = ∫ (L_inside - L_outside) · v_n · w(pixel) dl,
// with v_n the silhouette's speed across itself (outwards, pixels per unit θ) and w the
// film's filter. Points are sampled on the shapes' silhouettes seen from the camera
// (silhouette.h; samples shared among shapes by their silhouettes' image length), the
// radiance on either side is the interior integrator's along camera rays just inside and
// just outside (with the same random numbers), and v_n is the derivative of the point's
// film position, moving with the shape and the camera alike, so the camera's pose and
// field of view get the term too (Mitsuba has no camera derivatives).
#include "core/parameter_checks.h"
#include "integrators/path_tools.h"

#include <kiln/construct.h>
#include <kiln/control.h>
#include <kiln/math.h>
#include <kiln/render/film.h>
#include <kiln/render/integrator.h>
#include <kiln/render/plugin.h>
#include <kiln/render/sampler.h>
#include <kiln/render/scene.h>
#include <kiln/render/sensor.h>
#include <kiln/render/shape.h>

#include <cmath>
#include <optional>
#include <string>

namespace kiln::render {
namespace {

/// How far, relative to its distance, a point is moved off the silhouette to see either side
/// of it, and the step of the central differences that measure the silhouette in the image.
constexpr float kSideOffset = 1e-4f, kImageStep = 1e-3f;
/// How far (relative) the ray aimed inside may hit from the silhouette point and still count
/// as seeing it.
constexpr float kHitTolerance = 1e-2f;

/// A samples-per-pixel parameter of Mitsuba's projective integrators: empty when not given.
std::optional<uint32_t> spp_parameter(const Properties& props, const std::string& name) {
  if (!props.has(name)) return std::nullopt;
  int64_t spp = props.get_int(name);
  if (spp < 0 || spp > (int64_t(1) << 20))
    throw_parameter_error(props, name, "must be between 0 and 2^20, got " + std::to_string(spp));
  return uint32_t(spp);
}

/// Mitsuba's rule: 0 disables a term; otherwise the render's spp when given (nonzero), else
/// the parameter, else the sampler's count.
uint32_t effective_spp(std::optional<uint32_t> parameter, uint32_t render_spp, uint32_t sampler_spp) {
  if (parameter == 0u) return 0;
  if (render_spp != 0) return render_spp;
  return parameter.value_or(sampler_spp);
}

/// The interior integrator (`direct` or `prb`) made from the parameters that concern it.
std::shared_ptr<SamplingIntegrator> interior_integrator(const Properties& props, const std::string& plugin,
                                                        const std::vector<std::string>& names) {
  Properties interior(PluginKind::Integrator, plugin, props.id(), props.source());
  for (const std::string& name : names)
    if (props.has(name)) interior.set(name, props.get(name), props.source_of(name));
  return std::dynamic_pointer_cast<SamplingIntegrator>(create_object(interior));
}

class ProjectiveIntegrator : public SamplingIntegrator {
 public:
  ProjectiveIntegrator(const Properties& props, std::shared_ptr<SamplingIntegrator> interior)
      : SamplingIntegrator(props),
        interior_(std::move(interior)),
        sppc_(spp_parameter(props, "sppc")),
        sppp_(spp_parameter(props, "sppp")) {
    // The indirect visibility term's settings: read and checked as Mitsuba does; that term
    // is not computed yet (docs/scope.md).
    spp_parameter(props, "sppi");
    one_of(props, "guiding", "octree", {"none", "grid", "octree"});
    props.get_bool("guiding_proj", true);
    if (props.get_int("guiding_rounds", 1) < 1) throw_parameter_error(props, "guiding_rounds", "must be at least 1");
  }

  RaySample sample(const Scene& scene, PCG32& rng, const Ray3f& ray, const Bool& active) const override {
    return interior_->sample(scene, rng, ray, active);
  }

  TensorXf render(const Scene& scene, const Sensor& sensor, uint32_t seed, uint32_t spp) const override {
    return interior_->render(scene, sensor, seed, spp);
  }

  TensorXf render_for_derivatives(const Scene& scene, const Sensor& sensor, uint32_t seed,
                                  uint32_t spp) const override {
    uint32_t sampler_spp = sensor.sampler()->sample_count();
    uint32_t interior_spp = effective_spp(sppc_, spp, sampler_spp);
    uint32_t primary_spp = effective_spp(sppp_, spp, sampler_spp);
    if (interior_spp == 0) return primary_visibility(scene, sensor, seed, primary_spp);
    TensorXf image = interior_->render_for_derivatives(scene, sensor, seed, interior_spp);
    if (primary_spp != 0) image = image + primary_visibility(scene, sensor, seed, primary_spp);
    return image;
  }

 private:
  /// The primary visibility term's image (`spp` 0: none): its values are zero, its
  /// derivatives the term.
  TensorXf primary_visibility(const Scene& scene, const Sensor& sensor, uint32_t seed, uint32_t spp) const {
    const Film& film = *sensor.film();
    // A sensor that cannot project points onto its film raises here, before anything is traced.
    sensor.sample_direction(Array3f(Float(0.0f), Float(0.0f), Float(1.0f)), Bool(false));
    size_t channels = 3 + film.has_alpha() + interior_->aov_names().size();
    ImageBlock block = film.create_block(channels);
    Matrix4d camera = sensor.world_transform().to_rows();
    std::array<float, 3> eye{float(camera[3]), float(camera[7]), float(camera[11])};
    auto [probe, probe_weight] = sensor.sample_ray(Array2f(Float(0.5f), Float(0.5f)), Bool(true));
    bool camera_moves = grad_enabled(probe.o) || grad_enabled(probe.d);

    std::vector<std::unique_ptr<Silhouette>> silhouettes;
    double total = 0.0;
    for (const auto& shape : scene.shapes()) {
      if (!camera_moves && !shape->geometry_has_derivatives()) continue;
      if (auto silhouette = shape->silhouette(eye); silhouette && silhouette->weight() > 0.0f) {
        total += silhouette->weight();
        silhouettes.push_back(std::move(silhouette));
      }
    }
    auto [crop_width, crop_height] = film.crop_size();
    double samples = double(crop_width) * crop_height * spp;
    if (spp == 0) silhouettes.clear();
    for (size_t k = 0; k < silhouettes.size(); ++k) {
      double share = std::round(samples * silhouettes[k]->weight() / total);
      size_t lanes = size_t(std::clamp(share, 1.0, double(uint32_t(~0u))));
      splat_silhouette(scene, sensor, *silhouettes[k], eye, lanes, seed * 0x9e3779b9u + uint32_t(k) + 1u, block);
    }
    return film.develop(block, true);
  }

  /// The primary term of one shape's silhouette, estimated with `lanes` samples.
  void splat_silhouette(const Scene& scene, const Sensor& sensor, const Silhouette& silhouette,
                        const std::array<float, 3>& eye, size_t lanes, uint32_t seed, ImageBlock& block) const {
    auto [width, height] = sensor.film()->size();
    Array2f film_size(opaque<Float>(float(width)), opaque<Float>(float(height)));
    PCG32 rng = sensor.sampler()->rng(seed, lanes);
    SilhouetteSample ss = silhouette.sample(next_2d(rng));
    Bool valid = ss.valid;
    Color3f difference;
    Array2f normal_px;
    Float length_px;  // pixels of image per unit length of silhouette
    {
      GradScope detached = suspend_grad();
      Array3f p = detach(ss.p);
      Float distance = norm(p - opaque_point(eye));
      auto pixel = [&](const Array3f& q) {
        auto [ds, weight] = sensor.sample_direction(q, valid);
        valid = valid & (ds.pdf > 0.0f);
        return Array2f(ds.uv.x * film_size.x, ds.uv.y * film_size.y);
      };
      Array3f inner = p - ss.normal * (distance * kSideOffset), outer = p + ss.normal * (distance * kSideOffset);
      Array2f inner_px = pixel(inner), outer_px = pixel(outer);
      Float step = distance * kImageStep;
      Array2f along = (pixel(p + ss.tangent * step) - pixel(p - ss.tangent * step)) / (2.0f * step);
      length_px = norm(along);
      Array2f across(-along.y, along.x);
      Float orientation = copysign(rcp(length_px), dot(across, outer_px - inner_px));
      normal_px = Array2f(across.x * orientation, across.y * orientation);

      auto [ray_in, weight_in] = sensor.sample_ray(Array2f(inner_px.x / film_size.x, inner_px.y / film_size.y), valid);
      auto [ray_out, weight_out] =
          sensor.sample_ray(Array2f(outer_px.x / film_size.x, outer_px.y / film_size.y), valid);
      // The silhouette is seen: the ray inside meets the shape there and nothing hides it.
      SurfaceInteraction hit_in = scene.ray_intersect(ray_in, valid), hit_out = scene.ray_intersect(ray_out, valid);
      Float tolerance = distance * kHitTolerance;
      valid = valid & hit_in.is_valid() & (abs(hit_in.t - norm(inner - ray_in.o)) < tolerance) &
              ((!hit_out.is_valid()) | (hit_out.t > norm(outer - ray_out.o) - tolerance));
      ControlModeScope mode(interior_->mode());
      PCG32 rng_out = rng;  // the same random numbers on both sides
      Color3f inside = interior_->sample(scene, rng, ray_in, valid).radiance * weight_in;
      Color3f outside = interior_->sample(scene, rng_out, ray_out, valid).radiance * weight_out;
      difference = inside - outside;
    }
    // The point's film position moves with the shape's and the camera's parameters: its
    // derivative across the silhouette is v_n.
    auto [ds, weight] = sensor.sample_direction(ss.p, valid);
    Array2f position(ds.uv.x * film_size.x, ds.uv.y * film_size.y);
    Float motion = dot(position - detach(position), normal_px);
    Color3f value = difference * (motion * (length_px / (ss.pdf * opaque<Float>(float(lanes)))));
    std::vector<Float> values{value.x, value.y, value.z};
    values.resize(3 + sensor.film()->has_alpha() + interior_->aov_names().size(), zeros<Float>(lanes));
    block.splat(detach(position), values, valid);
  }

  std::shared_ptr<SamplingIntegrator> interior_;
  std::optional<uint32_t> sppc_, sppp_;
};

std::shared_ptr<Object> make_direct_projective(const Properties& props) {
  // Direct illumination whatever max_depth and rr_depth say, as in Mitsuba.
  props.get_int("max_depth", 2);
  props.get_int("rr_depth", 2);
  one_of(props, "project_seed", "both", {"both", "bsdf", "emitter"});
  return std::make_shared<ProjectiveIntegrator>(props, interior_integrator(props, "direct", {"hide_emitters", "mode"}));
}

std::shared_ptr<Object> make_prb_projective(const Properties& props) {
  return std::make_shared<ProjectiveIntegrator>(
      props, interior_integrator(props, "prb", {"max_depth", "rr_depth", "hide_emitters", "mode"}));
}

}  // namespace

KILN_REGISTER_PLUGIN(PluginKind::Integrator, "direct_projective", make_direct_projective);
KILN_REGISTER_PLUGIN(PluginKind::Integrator, "prb_projective", make_prb_projective);

}  // namespace kiln::render
