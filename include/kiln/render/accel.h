// Ray tracing against a scene's shapes, called from inside Kiln kernels: the interface every
// acceleration structure implements. make_accel builds one of two: Embree 3, called from
// kernels as a host function (CPU only), or Kiln's own BVH, built on the host by Embree's
// builder and traversed by Kiln code fused into the kernel (any device). Shapes are
// described in world space as plain host data; rays and hits are Kiln arrays (ray.h).
//
// What an implementation guarantees:
// - A ray is o + t·d for 0 <= t <= maxt; d need not be unit length and t is in units of d
//   (Mitsuba's convention; there is no tmin: offset the origin instead).
// - intersect() finds the closest hit. On a miss, and on lanes where `active` is false:
//   t = +inf, prim_uv = (0, 0), prim_index = 0 and shape_index = kNoShape (~0u).
// - shape_index is the shape's position in the list given to make_accel. prim_index is the
//   triangle's index within its mesh, 0 for a sphere or a disk. prim_uv is Mitsuba's: the
//   barycentric coordinates (u, v) of vertices 1 and 2 for a triangle (the hit is
//   (1-u-v)·p0 + u·p1 + v·p2), (0, 0) for a sphere, the local (x, y) of the hit on a disk.
// - A sphere's and a disk's t is accurate to float precision: they are intersected
//   analytically in double precision (a disk in its local space: exact under any affine
//   to_world). A triangle's t is a single-precision test: Embree's, or for the Kiln BVH
//   the watertight test of Woop, Benthin and Wald (2013), whose edge tests are exact (a
//   ray through an edge or a vertex shared by two triangles hits one of them).
// - occluded() is true exactly where intersect() would find a hit.
// - A ray whose origin or direction has a component that is not finite or exceeds 1.8e18 in
//   magnitude, whose direction is zero, or whose maxt is NaN or negative misses everything.
// - Degenerate shapes are never hit but keep their index: a mesh without faces, a triangle
//   of zero area or with a vertex that is not finite or exceeds 1.8e18, a sphere of radius 0, a disk that
//   to_world flattens to a segment. Malformed descriptions (a face index past the last
//   vertex, positions or faces not in threes, a negative or non-finite radius, a center or
//   to_world with a component that is not finite, a to_world whose last row is not
//   (0, 0, 0, 1)) make make_accel throw ValueError naming the shape's index.
// - The results carry no derivatives: recompute differentiable quantities from prim_index
//   and prim_uv.
// - Tracing reads the structure from kernels when they run: evaluate the arrays that trace
//   an Accel before updating or destroying it.
#pragma once

#include <kiln/host_call.h>
#include <kiln/render/ray.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <variant>
#include <vector>

namespace kiln::render {

/// A triangle mesh in world space: x, y, z per vertex, three vertex indices per face.
struct AccelTriangles {
  std::vector<float> positions;
  std::vector<uint32_t> faces;
};

/// A sphere in world space.
struct AccelSphere {
  std::array<double, 3> center;
  double radius;
};

/// Mitsuba's disk: the unit disk at z = 0 of local space, placed in the world by an affine
/// map given as a row-major 4×4 matrix.
struct AccelDisk {
  std::array<double, 16> to_world;
};

/// One shape of a scene, as make_accel takes it.
using AccelGeometry = std::variant<AccelTriangles, AccelSphere, AccelDisk>;

/// A host function that kernels call, and the context pointer it is called with.
struct HostCallTarget {
  const HostFunction* function;
  void* context;
};

/// Which acceleration structure make_accel builds.
enum class AccelKind : uint8_t {
  Embree,  ///< Embree 3 through host calls: the CPU only
  Kiln,    ///< Kiln's BVH, traversed by Kiln code on the arrays' device
};

/// "embree" or "kiln".
const char* accel_kind_name(AccelKind kind);
/// The kind named "embree" or "kiln"; ValueError listing them for another name, which
/// `where` names (e.g. "scene (scene.xml:1)").
AccelKind parse_accel_kind(const std::string& name, const std::string& where);
/// What a scene builds without an `accel` property: KILN_ACCEL (embree, kiln) when set
/// (read once; ValueError for another value), else Embree on the CPU device and the Kiln
/// BVH on any other (the default device, device.h).
AccelKind default_accel_kind();

/// A scene's shapes, ready to be traced from kernels (see the guarantees above).
class Accel {
 public:
  virtual ~Accel() = default;
  Accel() = default;
  Accel(const Accel&) = delete;
  Accel& operator=(const Accel&) = delete;

  virtual AccelKind kind() const = 0;

  /// The closest hit of each active ray.
  virtual PreliminaryIntersection intersect(const Ray3f& ray, const Bool& active = Bool(true)) const = 0;
  /// Whether each active ray hits anything (false on inactive lanes).
  virtual Bool occluded(const Ray3f& ray, const Bool& active = Bool(true)) const = 0;

  /// Replaces the vertex positions of the mesh at `shape_index` (as many floats as before;
  /// non-finite values make their triangles unhittable) and rebuilds what depends on them.
  virtual void update_mesh_positions(size_t shape_index, const std::vector<float>& positions) = 0;
};

/// An Accel that kernels trace by calling host functions (Embree's).
class HostCallAccel : public Accel {
 public:
  PreliminaryIntersection intersect(const Ray3f& ray, const Bool& active = Bool(true)) const final;
  Bool occluded(const Ray3f& ray, const Bool& active = Bool(true)) const final;

  /// What intersect() calls: inputs Float32 ox, oy, oz, dx, dy, dz, maxt; outputs Float32 t,
  /// u, v, UInt32 prim_index, shape_index (a miss as above, also on inactive lanes).
  virtual HostCallTarget intersect_target() const = 0;
  /// What occluded() calls: the same inputs; output Bool hit (false on inactive lanes).
  virtual HostCallTarget occluded_target() const = 0;
};

/// Builds the acceleration structure of `kind` over `shapes` (shape index = position in the
/// list). A Kiln BVH's arrays are made on the default device (device.h); Embree works only
/// when that is the CPU (ValueError otherwise).
std::unique_ptr<Accel> make_accel(std::vector<AccelGeometry> shapes, AccelKind kind = AccelKind::Embree);

}  // namespace kiln::render
