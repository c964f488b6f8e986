// The unidirectional path tracer (Mitsuba 3's `path`): at every vertex, emitter sampling
// and BSDF sampling combined by multiple importance sampling (power heuristic), Russian
// roulette from `rr_depth` (5) on, paths of at most `max_depth` (-1: unbounded) vertices,
// `hide_emitters` (false) making directly seen emitters invisible. The path loop is one
// while_loop: a megakernel in symbolic mode, a wavefront in evaluated mode. Derivatives
// are plain AD through the loop (path_tracer.h).
#include "core/parameter_checks.h"
#include "integrators/path_tracer.h"

#include <kiln/render/integrator.h>
#include <kiln/render/plugin.h>

namespace kiln::render {
namespace {

class PathIntegrator : public SamplingIntegrator {
 public:
  explicit PathIntegrator(const Properties& props) : SamplingIntegrator(props), tracer_(props) {}

  void check_reverse_mode() const override {
    if (symbolic() && tracer_.max_depth() == ~0u)
      throw_parameter_error(*this, "max_depth",
                            "is -1 (unbounded), but reverse mode through the symbolic path loop stores each path's "
                            "vertices and needs a bound: set max_depth (e.g. 8), use the prb integrator, or "
                            "\"mode\": \"evaluated\"");
  }

  RaySample sample(const Scene& scene, PCG32& rng, const Ray3f& camera_ray, const Bool& active) const override {
    return tracer_.sample(scene, rng, camera_ray, active, "path");
  }

 private:
  PathTracer tracer_;
};

}  // namespace

KILN_REGISTER_PLUGIN(PluginKind::Integrator, "path",
                     [](const Properties& p) { return std::make_shared<PathIntegrator>(p); });

}  // namespace kiln::render
