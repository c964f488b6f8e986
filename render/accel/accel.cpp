// Accel's Kiln-level queries: rays as Kiln arrays traced through the accelerator's host
// functions from inside kernels. Nothing here knows which accelerator it is.
#include <kiln/render/accel.h>
#include <kiln/render/common.h>

#include <tuple>

namespace kiln::render {
namespace {
/// The seven Float32 inputs of both host functions, in their registered order.
std::tuple<Float, Float, Float, Float, Float, Float, Float> ray_inputs(const Ray3f& ray) {
  return {ray.o.x, ray.o.y, ray.o.z, ray.d.x, ray.d.y, ray.d.z, ray.maxt};
}
}  // namespace

PreliminaryIntersection Accel::intersect(const Ray3f& ray, const Bool& active) const {
  HostCallTarget target = intersect_target();
  auto [t, u, v, prim_index, shape_index] =
      host_call<Float, Float, Float, UInt32, UInt32>(*target.function, target.context, ray_inputs(ray), active);
  // Inactive lanes read zeros from the call; they must read as misses.
  PreliminaryIntersection hit;
  hit.t = select(active, t, kInfinity);
  hit.prim_uv = Array2f(u, v);
  hit.prim_index = prim_index;
  hit.shape_index = select(active, shape_index, kNoShape);
  return hit;
}

Bool Accel::occluded(const Ray3f& ray, const Bool& active) const {
  HostCallTarget target = occluded_target();
  auto [hit] = host_call<Bool>(*target.function, target.context, ray_inputs(ray), active);
  return hit;
}

}  // namespace kiln::render
