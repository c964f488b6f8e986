// Spheres and disks as Embree user geometries: bounds, and the intersect and occluded
// callbacks, which solve each ray in double precision.
#include "accel/embree_analytic.h"

#include "accel/embree_device.h"

#include <cmath>
#include <limits>
#include <optional>
#include <string>

namespace kiln::render {
namespace {
constexpr double kInfinity = std::numeric_limits<double>::infinity();

/// A ray of an Embree packet, in double precision.
struct RayD {
  double o[3], d[3], tmin, tmax;
};

/// Where a ray hits a shape: t and the shape's (u, v).
struct HitD {
  double t, u, v;
};

/// The first t in [tmin, tmax] where the ray meets the sphere.
std::optional<HitD> hit(const AnalyticSphere& sphere, const RayD& ray) {
  // Solve from the point of the ray closest to the center: the quadratic's terms then stay
  // the size of the sphere however far away the origin is.
  double to_origin[3] = {ray.o[0] - sphere.center[0], ray.o[1] - sphere.center[1], ray.o[2] - sphere.center[2]};
  double dd = dot(ray.d, ray.d);
  double t_closest = -dot(to_origin, ray.d) / dd;
  double closest[3];
  for (int i = 0; i < 3; ++i) closest[i] = to_origin[i] + t_closest * ray.d[i];
  double half_chord_squared = (sphere.radius * sphere.radius - dot(closest, closest)) / dd;
  if (!(half_chord_squared >= 0)) return std::nullopt;
  double half_chord = std::sqrt(half_chord_squared);
  for (double t : {t_closest - half_chord, t_closest + half_chord}) {
    if (t >= ray.tmin && t <= ray.tmax) return HitD{t, 0.0, 0.0};
  }
  return std::nullopt;
}

/// Where the ray crosses the disk's plane for t in [tmin, tmax], if inside the unit disk.
std::optional<HitD> hit(const AnalyticDisk& disk, const RayD& ray) {
  double to_plane[3] = {disk.origin[0] - ray.o[0], disk.origin[1] - ray.o[1], disk.origin[2] - ray.o[2]};
  double t = dot(disk.normal, to_plane) / dot(disk.normal, ray.d);
  if (!(t >= ray.tmin && t <= ray.tmax)) return std::nullopt;
  double in_plane[3];
  for (int i = 0; i < 3; ++i) in_plane[i] = ray.o[i] + t * ray.d[i] - disk.origin[i];
  double x = dot(disk.to_local_x, in_plane), y = dot(disk.to_local_y, in_plane);
  if (!(x * x + y * y <= 1.0)) return std::nullopt;
  return HitD{t, x, y};
}

RayD ray_of(RTCRayN* rays, unsigned n, unsigned lane) {
  return {{RTCRayN_org_x(rays, n, lane), RTCRayN_org_y(rays, n, lane), RTCRayN_org_z(rays, n, lane)},
          {RTCRayN_dir_x(rays, n, lane), RTCRayN_dir_y(rays, n, lane), RTCRayN_dir_z(rays, n, lane)},
          RTCRayN_tnear(rays, n, lane),
          RTCRayN_tfar(rays, n, lane)};
}

template <typename Shape> void bounds_callback(const RTCBoundsFunctionArguments* args) {
  const FloatBounds& bounds = static_cast<const Shape*>(args->geometryUserPtr)->bounds;
  *args->bounds_o = {bounds.lower[0], bounds.lower[1], bounds.lower[2], 0.0f,
                     bounds.upper[0], bounds.upper[1], bounds.upper[2], 0.0f};
}

/// Records a closer hit on each valid lane (Embree passes tfar = the closest hit so far).
template <typename Shape> void intersect_callback(const RTCIntersectFunctionNArguments* args) {
  const Shape& shape = *static_cast<const Shape*>(args->geometryUserPtr);
  RTCRayN* rays = RTCRayHitN_RayN(args->rayhit, args->N);
  RTCHitN* hits = RTCRayHitN_HitN(args->rayhit, args->N);
  for (unsigned lane = 0; lane < args->N; ++lane) {
    if (!args->valid[lane]) continue;
    std::optional<HitD> found = hit(shape, ray_of(rays, args->N, lane));
    if (!found) continue;
    // Rounding to float keeps t within [tnear, tfar]: both bounds are floats.
    RTCRayN_tfar(rays, args->N, lane) = float(found->t);
    RTCHitN_u(hits, args->N, lane) = float(found->u);
    RTCHitN_v(hits, args->N, lane) = float(found->v);
    RTCHitN_primID(hits, args->N, lane) = args->primID;
    RTCHitN_geomID(hits, args->N, lane) = args->geomID;
    RTCHitN_instID(hits, args->N, lane, 0) = args->context->instID[0];
  }
}

/// Marks each valid lane that hits the shape as occluded (tfar = -inf, Embree's convention).
template <typename Shape> void occluded_callback(const RTCOccludedFunctionNArguments* args) {
  const Shape& shape = *static_cast<const Shape*>(args->geometryUserPtr);
  for (unsigned lane = 0; lane < args->N; ++lane) {
    if (args->valid[lane] && hit(shape, ray_of(args->ray, args->N, lane))) {
      RTCRayN_tfar(args->ray, args->N, lane) = -std::numeric_limits<float>::infinity();
    }
  }
}

/// A committed user geometry of one primitive whose callbacks read `shape`.
template <typename Shape> GeometryHandle new_user_geometry(Shape* shape) {
  GeometryHandle geometry(rtcNewGeometry(embree_device(), RTC_GEOMETRY_TYPE_USER));
  throw_on_embree_error("create a user geometry");
  rtcSetGeometryUserPrimitiveCount(geometry.get(), 1);
  rtcSetGeometryUserData(geometry.get(), shape);
  rtcSetGeometryBoundsFunction(geometry.get(), bounds_callback<Shape>, nullptr);
  rtcSetGeometryIntersectFunction(geometry.get(), intersect_callback<Shape>);
  rtcSetGeometryOccludedFunction(geometry.get(), occluded_callback<Shape>);
  rtcCommitGeometry(geometry.get());
  throw_on_embree_error("commit a user geometry");
  return geometry;
}

}  // namespace

GeometryHandle AnalyticShapes::add(const AccelSphere& sphere, size_t shape_index) {
  std::optional<AnalyticSphere> parameters = analytic_sphere(sphere, shape_index);
  return parameters ? new_user_geometry(&spheres_.emplace_back(*parameters)) : nullptr;
}

GeometryHandle AnalyticShapes::add(const AccelDisk& disk, size_t shape_index) {
  std::optional<AnalyticDisk> parameters = analytic_disk(disk, shape_index);
  return parameters ? new_user_geometry(&disks_.emplace_back(*parameters)) : nullptr;
}

}  // namespace kiln::render
