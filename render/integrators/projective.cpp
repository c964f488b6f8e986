// Projective sampling integrators (Mitsuba 3's `direct_projective` and `prb_projective`,
// after Zhang et al. 2023, "Projective Sampling for Differentiable Rendering of Geometry").
// Their images are `direct`'s and `prb`'s. Their derivatives add, to those integrators'
// interior terms (sppc samples per pixel), the visibility terms (visibility_terms.h): primary
// (sppp), from silhouettes the camera sees, and indirect (sppi), from silhouettes of moving
// shapes seen from the points the camera sees, guided as Mitsuba's `guiding` settings say.
#include "core/parameter_checks.h"
#include "integrators/visibility_terms.h"

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

/// A sampling integrator `plugin` with the parameters `names` of `props` and `settings`.
std::shared_ptr<SamplingIntegrator> nested_integrator(
    const Properties& props, const std::string& plugin, const std::vector<std::string>& names,
    const std::vector<std::pair<std::string, int64_t>>& settings = {}) {
  Properties nested(PluginKind::Integrator, plugin, props.id(), props.source());
  for (const std::string& name : names)
    if (props.has(name)) nested.set(name, props.get(name), props.source_of(name));
  for (const auto& [name, value] : settings) nested.set(name, value);
  return std::dynamic_pointer_cast<SamplingIntegrator>(create_object(nested));
}

class ProjectiveIntegrator : public SamplingIntegrator {
 public:
  /// `interior`: the image's integrator; `arriving`: the radiance arriving at the first
  /// vertex of a path (null: the paths end there).
  ProjectiveIntegrator(const Properties& props, std::shared_ptr<SamplingIntegrator> interior,
                       std::shared_ptr<SamplingIntegrator> arriving, bool area_form)
      : SamplingIntegrator(props),
        interior_(std::move(interior)),
        arriving_(std::move(arriving)),
        area_form_(area_form),
        sppc_(spp_parameter(props, "sppc")),
        sppp_(spp_parameter(props, "sppp")),
        sppi_(spp_parameter(props, "sppi")),
        guiding_(guiding_settings(props)) {}

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
    uint32_t indirect_spp = arriving_ ? effective_spp(sppi_, spp, sampler_spp) : 0;
    TensorXf image = primary_visibility(scene, sensor, *interior_, seed, primary_spp);
    if (indirect_spp != 0)
      image = image + indirect_visibility(scene, sensor, *arriving_, area_form_, guiding_, seed, indirect_spp);
    if (interior_spp != 0) image = image + interior_->render_for_derivatives(scene, sensor, seed, interior_spp);
    return image;
  }

 private:
  std::shared_ptr<SamplingIntegrator> interior_, arriving_;
  bool area_form_;  ///< the interior terms hold a segment's far end fixed (direct's), not its direction
  std::optional<uint32_t> sppc_, sppp_, sppi_;
  GuidingSettings guiding_;
};

std::shared_ptr<Object> make_direct_projective(const Properties& props) {
  // Direct illumination whatever max_depth and rr_depth say, as in Mitsuba: what arrives at
  // the first vertex is emission alone (a path of one segment).
  props.get_int("max_depth", 2);
  props.get_int("rr_depth", 2);
  one_of(props, "project_seed", "both", {"both", "bsdf", "emitter"});
  return std::make_shared<ProjectiveIntegrator>(props, nested_integrator(props, "direct", {"hide_emitters", "mode"}),
                                                nested_integrator(props, "path", {"mode"}, {{"max_depth", 1}}), true);
}

std::shared_ptr<Object> make_prb_projective(const Properties& props) {
  auto interior = nested_integrator(props, "prb", {"max_depth", "rr_depth", "hide_emitters", "mode"});
  // What arrives at the first vertex: the path's remaining segments (path's estimator, which
  // is prb's), none when the path ends there.
  int64_t max_depth = props.get_int("max_depth", -1);
  std::shared_ptr<SamplingIntegrator> arriving;
  if (max_depth == -1 || max_depth > 1) {
    int64_t rr_depth = props.get_int("rr_depth", 5);
    arriving = nested_integrator(
        props, "path", {"mode"},
        {{"max_depth", max_depth == -1 ? -1 : max_depth - 1}, {"rr_depth", std::max<int64_t>(1, rr_depth - 1)}});
  }
  return std::make_shared<ProjectiveIntegrator>(props, std::move(interior), std::move(arriving), false);
}

}  // namespace

KILN_REGISTER_PLUGIN(PluginKind::Integrator, "direct_projective", make_direct_projective);
KILN_REGISTER_PLUGIN(PluginKind::Integrator, "prb_projective", make_prb_projective);

}  // namespace kiln::render
