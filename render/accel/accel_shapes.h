// What every acceleration structure makes of make_accel's shape descriptions: the checks
// that turn malformed ones into ValueErrors naming the shape, and spheres and disks as the
// parameters their analytic intersections read. Private to render/accel/.
#pragma once

#include <kiln/render/accel.h>

#include <optional>
#include <string>
#include <vector>

namespace kiln::render {

/// Embree asserts that rays' and vertices' components are at most this large (RayK::valid()
/// in Embree's kernels/common/ray.h; Debian builds Embree with assertions): both
/// accelerators miss rays with a larger component and never hit triangles with one.
constexpr float kLargestComponent = 1.844e18f;

/// A box that contains a shape, rounded outwards to floats.
struct FloatBounds {
  float lower[3], upper[3];
};

/// A sphere as its intersection reads it.
struct AnalyticSphere {
  double center[3];
  double radius;
  FloatBounds bounds;
};

/// A disk as its intersection reads it: the plane through `origin` spanned by to_world's x
/// and y axes, its normal, and the rows that map a point of the plane (relative to
/// `origin`) to the disk's local x and y.
struct AnalyticDisk {
  double origin[3], normal[3], to_local_x[3], to_local_y[3];
  FloatBounds bounds;
};

/// "triangle mesh", "sphere" or "disk".
const char* kind_name(const AccelGeometry& shape);

/// "shape 3 (disk)".
std::string shape_name(size_t shape_index, const char* kind);

/// a · b.
inline double dot(const double a[3], const double b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

/// What a position update needs to know of a shape.
struct ShapeSummary {
  const char* kind;
  bool is_mesh;
  size_t vertex_count;  // meshes only
};

/// `shape`'s summary; for a mesh, ValueError naming the shape when its arrays do not come
/// in threes or a face refers to a vertex that does not exist.
ShapeSummary summarize(const AccelGeometry& shape, size_t shape_index);

/// ValueError naming the shape unless `float_count` positions can replace the vertex
/// positions of the shape at `shape_index` (Accel::update_mesh_positions' checks).
void check_position_update(const std::vector<ShapeSummary>& shapes, size_t shape_index, size_t float_count);

/// `sphere`'s parameters, or none for a radius of 0 (never hit); ValueError naming
/// `shape_index` for a malformed one.
std::optional<AnalyticSphere> analytic_sphere(const AccelSphere& sphere, size_t shape_index);

/// `disk`'s parameters, or none when to_world flattens it to a segment or a point (never
/// hit); ValueError naming `shape_index` for a malformed one.
std::optional<AnalyticDisk> analytic_disk(const AccelDisk& disk, size_t shape_index);

}  // namespace kiln::render
