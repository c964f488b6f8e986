// The Kiln BVH's primitive tests, written as Kiln code: triangles by the watertight test of
// Woop, Benthin and Wald (2013), spheres and disks solved in double precision as the Embree
// path's callbacks do. Each kind keeps its primitives' data as arrays in leaf order and makes
// the leaf test that bvh_traverse.h's loop calls. Private to render/accel/.
#pragma once

#include "accel/accel_shapes.h"
#include "accel/bvh_traverse.h"

#include <vector>

namespace kiln::render {

/// Triangles in leaf order: their corners, mesh (shape) and face (primitive) indices.
struct TriangleArrays {
  Array3f p0, p1, p2;
  UInt32 shape, face;

  /// The triangles `corners` (p0, p1, p2 as 9 floats each) with their shape and face
  /// indices, placed in the order of `leaf_order` (bvh.primitives).
  TriangleArrays(const std::vector<float>& corners, const std::vector<uint32_t>& shapes,
                 const std::vector<uint32_t>& faces, const std::vector<uint32_t>& leaf_order);

  /// The watertight test against the triangles, for `ray`'s lanes.
  LeafTest leaf_test(const TraversalRay& ray) const;
};

/// Spheres in leaf order.
struct SphereArrays {
  Array3f64 center;
  Float64 radius;
  UInt32 shape;

  SphereArrays(const std::vector<AnalyticSphere>& spheres, const std::vector<uint32_t>& shapes,
               const std::vector<uint32_t>& leaf_order);
  LeafTest leaf_test(const TraversalRay& ray) const;
};

/// Disks in leaf order.
struct DiskArrays {
  Array3f64 origin, normal, to_local_x, to_local_y;
  UInt32 shape;

  DiskArrays(const std::vector<AnalyticDisk>& disks, const std::vector<uint32_t>& shapes,
             const std::vector<uint32_t>& leaf_order);
  LeafTest leaf_test(const TraversalRay& ray) const;
};

}  // namespace kiln::render
