// Spheres and disks as Embree user geometries: validation, bounds, and the intersect and
// occluded callbacks, which solve each ray in double precision.
#include "accel/embree_analytic.h"

#include "accel/embree_device.h"

#include <kiln/errors.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <string>

namespace kiln::render {
namespace {
constexpr double kInfinity = std::numeric_limits<double>::infinity();

double dot(const double a[3], const double b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

void cross(const double a[3], const double b[3], double out[3]) {
  out[0] = a[1] * b[2] - a[2] * b[1];
  out[1] = a[2] * b[0] - a[0] * b[2];
  out[2] = a[0] * b[1] - a[1] * b[0];
}

/// The float box [center - extent, center + extent], rounded outwards.
FloatBounds bounds_around(const double center[3], const double extent[3]) {
  FloatBounds bounds;
  for (int i = 0; i < 3; ++i) {
    bounds.lower[i] = std::nextafter(float(center[i] - extent[i]), -std::numeric_limits<float>::infinity());
    bounds.upper[i] = std::nextafter(float(center[i] + extent[i]), std::numeric_limits<float>::infinity());
  }
  return bounds;
}

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

std::string shape_name(size_t shape_index, const char* kind) {
  return "kiln.render: make_accel: shape " + std::to_string(shape_index) + " (" + kind + ")";
}

std::string to_text(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.9g", value);
  return text;
}
}  // namespace

GeometryHandle AnalyticShapes::add(const AccelSphere& sphere, size_t shape_index) {
  for (int i = 0; i < 3; ++i) {
    if (!std::isfinite(sphere.center[i])) {
      throw ValueError(shape_name(shape_index, "sphere") + ": center component " + std::to_string(i) + " is " +
                       to_text(sphere.center[i]) + "; it must be finite");
    }
  }
  if (!(sphere.radius >= 0) || !std::isfinite(sphere.radius)) {
    throw ValueError(shape_name(shape_index, "sphere") + ": radius is " + to_text(sphere.radius) +
                     "; it must be finite and >= 0");
  }
  if (sphere.radius == 0) return nullptr;
  AnalyticSphere& added = spheres_.emplace_back();
  for (int i = 0; i < 3; ++i) added.center[i] = sphere.center[i];
  added.radius = sphere.radius;
  double extent[3] = {sphere.radius, sphere.radius, sphere.radius};
  added.bounds = bounds_around(added.center, extent);
  return new_user_geometry(&added);
}

GeometryHandle AnalyticShapes::add(const AccelDisk& disk, size_t shape_index) {
  const std::array<double, 16>& m = disk.to_world;
  for (size_t i = 0; i < 16; ++i) {
    if (!std::isfinite(m[i])) {
      throw ValueError(shape_name(shape_index, "disk") + ": to_world[" + std::to_string(i / 4) + "][" +
                       std::to_string(i % 4) + "] is " + to_text(m[i]) + "; it must be finite");
    }
  }
  if (m[12] != 0 || m[13] != 0 || m[14] != 0 || m[15] != 1) {
    throw ValueError(shape_name(shape_index, "disk") + ": to_world's last row is (" + to_text(m[12]) + ", " +
                     to_text(m[13]) + ", " + to_text(m[14]) + ", " + to_text(m[15]) +
                     "); an affine transform's is (0, 0, 0, 1)");
  }
  double axis_x[3] = {m[0], m[4], m[8]}, axis_y[3] = {m[1], m[5], m[9]};
  double normal[3];
  cross(axis_x, axis_y, normal);
  double normal_squared = dot(normal, normal);
  if (normal_squared == 0) return nullptr;
  AnalyticDisk& added = disks_.emplace_back();
  double extent[3];
  for (int i = 0; i < 3; ++i) {
    added.origin[i] = m[4 * i + 3];
    added.normal[i] = normal[i];
    extent[i] = std::hypot(axis_x[i], axis_y[i]);
  }
  // A point p = x·axis_x + y·axis_y of the plane has x = (axis_y × n)·p / |n|² and
  // y = (n × axis_x)·p / |n|², as (axis_y × n)·axis_x = (n × axis_x)·axis_y = |n|².
  cross(axis_y, normal, added.to_local_x);
  cross(normal, axis_x, added.to_local_y);
  for (int i = 0; i < 3; ++i) {
    added.to_local_x[i] /= normal_squared;
    added.to_local_y[i] /= normal_squared;
  }
  added.bounds = bounds_around(added.origin, extent);
  return new_user_geometry(&added);
}

}  // namespace kiln::render
