// What make_accel's callers see of every accelerator: the kinds by name, make_accel choosing
// one, and HostCallAccel's queries (rays as Kiln arrays traced through an accelerator's host
// functions from inside kernels).
#include <kiln/device.h>
#include <kiln/errors.h>
#include <kiln/render/accel.h>
#include <kiln/render/common.h>

#include "accel/embree.h"
#include "accel/kiln_accel.h"

#include <cstdlib>
#include <optional>
#include <tuple>

namespace kiln::render {
namespace {
/// The seven Float32 inputs of both host functions, in their registered order.
std::tuple<Float, Float, Float, Float, Float, Float, Float> ray_inputs(const Ray3f& ray) {
  return {ray.o.x, ray.o.y, ray.o.z, ray.d.x, ray.d.y, ray.d.z, ray.maxt};
}
}  // namespace

PreliminaryIntersection HostCallAccel::intersect(const Ray3f& ray, const Bool& active) const {
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

Bool HostCallAccel::occluded(const Ray3f& ray, const Bool& active) const {
  HostCallTarget target = occluded_target();
  auto [hit] = host_call<Bool>(*target.function, target.context, ray_inputs(ray), active);
  return hit;
}

const char* accel_kind_name(AccelKind kind) { return kind == AccelKind::Embree ? "embree" : "kiln"; }

AccelKind parse_accel_kind(const std::string& name, const std::string& where) {
  for (AccelKind kind : {AccelKind::Embree, AccelKind::Kiln})
    if (name == accel_kind_name(kind)) return kind;
  throw ValueError("kiln.render: " + where + ": accel \"" + name +
                   "\" is not one of \"embree\" (Embree through host calls, CPU only) and \"kiln\" (Kiln's "
                   "BVH, any device)");
}

AccelKind default_accel_kind() {
  // The renderer sees only Kiln's public headers, so it reads its one variable itself.
  static const std::optional<AccelKind> chosen = []() -> std::optional<AccelKind> {
    const char* name = std::getenv("KILN_ACCEL");
    if (!name || !*name) return std::nullopt;
    return parse_accel_kind(name, "KILN_ACCEL");
  }();
  return chosen.value_or(default_device() == Device::CPU ? AccelKind::Embree : AccelKind::Kiln);
}

std::unique_ptr<Accel> make_accel(std::vector<AccelGeometry> shapes, AccelKind kind) {
  if (kind == AccelKind::Embree && default_device() != Device::CPU) {
    throw ValueError(
        std::string("kiln.render: accel \"embree\" traces rays on the CPU only, and the scene's device is ") +
        device_name(default_device()) + ": use accel \"kiln\" (the default there)");
  }
  return kind == AccelKind::Embree ? make_embree_accel(shapes) : make_kiln_accel(std::move(shapes));
}

}  // namespace kiln::render
