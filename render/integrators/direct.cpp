// Direct illumination (Mitsuba 3's `direct`): light arriving straight from emitters,
// estimated with `emitter_samples` emitter samples and `bsdf_samples` BSDF samples per
// camera ray (both `shading_samples`, 1, by default), combined by multiple importance
// sampling; `hide_emitters` makes directly seen emitters invisible.
#include "core/parameter_checks.h"
#include "integrators/path_tools.h"

#include <kiln/render/plugin.h>
#include <kiln/render/scene.h>

namespace kiln::render {
namespace {

class DirectIntegrator : public SamplingIntegrator {
 public:
  explicit DirectIntegrator(const Properties& props) : SamplingIntegrator(props) {
    if (props.has("shading_samples") && (props.has("emitter_samples") || props.has("bsdf_samples")))
      throw_parameter_error(props, "shading_samples", "and 'emitter_samples'/'bsdf_samples' exclude each other");
    int64_t shading = sample_count(props, "shading_samples", 1);
    emitter_samples_ = uint32_t(sample_count(props, "emitter_samples", shading));
    bsdf_samples_ = uint32_t(sample_count(props, "bsdf_samples", shading));
    if (emitter_samples_ + bsdf_samples_ == 0)
      throw_parameter_error(props, "emitter_samples", "and 'bsdf_samples' are both 0: at least one sample is needed");
    hide_emitters_ = props.get_bool("hide_emitters", false);
    float total = float(emitter_samples_ + bsdf_samples_);
    fraction_emitter_ = float(emitter_samples_) / total;
    fraction_bsdf_ = float(bsdf_samples_) / total;
  }

  RaySample sample(const Scene& scene, PCG32& rng, const Ray3f& camera_ray, const Bool& active) const override {
    Ray3f ray = hide_emitters_ ? skip_area_emitters(scene, camera_ray, active) : camera_ray;
    SurfaceInteraction si = scene.ray_intersect(ray, active);
    Color3f result = hide_emitters_ ? Color3f(0.0f, 0.0f, 0.0f) : scene.eval_emitter(si, active);
    Bool hit = active & si.is_valid();
    BSDFContext ctx;

    Bool smooth = hit & ((scene.bsdf_flags(si) & UInt32(bsdf_flags::kSmooth)) != 0u);
    for (uint32_t i = 0; i < emitter_samples_; ++i) {
      auto [ds, emitter_weight] = scene.sample_emitter_direction(si, next_2d(rng), true, smooth);
      Bool valid = smooth & (ds.pdf != 0.0f);
      auto [bsdf_value, bsdf_pdf] = scene.bsdf_eval_pdf(ctx, si, si.to_local(ds.d), valid);
      Float mis = select(ds.delta, Float(1.0f),
                         mis_weight(ds.pdf * fraction_emitter_, bsdf_pdf * fraction_bsdf_) * (1.0f / emitter_samples_));
      result = select(valid, result + bsdf_value * emitter_weight * mis, result);
    }
    for (uint32_t i = 0; i < bsdf_samples_; ++i) {
      Float sample1 = rng.next_float32();
      auto [bs, bsdf_weight] = scene.bsdf_sample(ctx, si, sample1, next_2d(rng), hit);
      Bool delta = (bs.sampled_type & UInt32(bsdf_flags::kDelta)) != 0u;
      Bool valid = hit & ((bsdf_weight.x != 0.0f) | (bsdf_weight.y != 0.0f) | (bsdf_weight.z != 0.0f));
      Array3f direction = continuation_direction(si, bs);
      Ray3f ray = si.spawn_ray(direction);
      SurfaceInteraction found;
      if (grad_enabled(si.p)) {
        // The area form: as the shading point moves, what is found stays the same material
        // point and emits the same, so only occluders moving across the segment change it
        // (the indirect visibility term of direct_projective), not the shading point's
        // motion across the edges of what it sees.
        Bool smooth_sample = valid & !delta;
        found =
            scene.compute_surface_interaction(ray, scene.ray_intersect_preliminary(ray, valid), valid, smooth_sample);
        Color3f area_form = detach(bsdf_weight) * area_form_relative(scene, si, found, direction, smooth_sample);
        bsdf_weight = select(smooth_sample, area_form, bsdf_weight);
      } else {
        found = scene.ray_intersect(ray, valid);
      }
      DirectionSample3f ds = scene.hit_direction_sample(found, si.p);
      valid = valid & (ds.emitter != 0u);
      Float emitter_pdf = select(delta, Float(0.0f), scene.pdf_emitter_direction(si.p, ds, valid & !delta));
      Color3f emitted = scene.eval_emitter(found, valid);
      Float mis = mis_weight(bs.pdf * fraction_bsdf_, emitter_pdf * fraction_emitter_) * (1.0f / bsdf_samples_);
      result = select(valid, result + bsdf_weight * emitted * mis, result);
    }
    return {result, hit, {}};
  }

 private:
  static int64_t sample_count(const Properties& props, const std::string& name, int64_t fallback) {
    int64_t count = props.get_int(name, fallback);
    if (count < 0 || count > 1024) throw_parameter_error(props, name, "must be between 0 and 1024");
    return count;
  }

  uint32_t emitter_samples_ = 1, bsdf_samples_ = 1;
  float fraction_emitter_ = 0.5f, fraction_bsdf_ = 0.5f;
  bool hide_emitters_ = false;
};

}  // namespace

KILN_REGISTER_PLUGIN(PluginKind::Integrator, "direct",
                     [](const Properties& p) { return std::make_shared<DirectIntegrator>(p); });

}  // namespace kiln::render
