// What every emitter shares: the scene's hooks, which most emitters ignore, and the
// default of sample_position() (infinite emitters' points, from sample_direction()).
#include <kiln/render/emitter.h>

namespace kiln::render {

void Emitter::set_shape(Shape*) {}

void Emitter::set_scene_bounds(const std::array<float, 3>&, float) {}

std::pair<PositionSample3f, Color3f> Emitter::sample_position(const Array3f& ref_p, const Array2f& sample,
                                                              const Bool& active) const {
  auto [ds, weight] = sample_direction(ref_p, sample, active);
  PositionSample3f ps;
  ps.p = ds.p;
  ps.n = -ds.d;
  ps.uv = ds.uv;
  ps.delta = ds.delta;
  // Radiance / solid-angle density times dist² / cos, the cosine being 1 towards ref_p.
  Float dist2 = ds.dist * ds.dist;
  ps.pdf = select(dist2 > 0.0f, ds.pdf / dist2, Float(0.0f));
  return {ps, weight * dist2};
}

}  // namespace kiln::render
