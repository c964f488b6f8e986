// Checking make_accel's shape descriptions and deriving the analytic shapes' parameters
// (accel_shapes.h), shared by the Embree and the Kiln acceleration structures.
#include "accel/accel_shapes.h"

#include <kiln/errors.h>

#include <cmath>
#include <cstdio>
#include <iterator>
#include <limits>
#include <type_traits>

namespace kiln::render {
namespace {

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

std::string where(size_t shape_index, const char* kind) {
  return "kiln.render: make_accel: " + shape_name(shape_index, kind);
}

std::string to_text(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.9g", value);
  return text;
}
/// The number of vertices of `mesh`, checked as summarize() says.
size_t checked_vertex_count(const AccelTriangles& mesh, size_t shape_index) {
  std::string prefix = where(shape_index, "triangle mesh");
  if (mesh.positions.size() % 3 != 0) {
    throw ValueError(prefix + ": positions holds " + std::to_string(mesh.positions.size()) +
                     " floats, which is not 3 (x, y, z) per vertex");
  }
  if (mesh.faces.size() % 3 != 0) {
    throw ValueError(prefix + ": faces holds " + std::to_string(mesh.faces.size()) +
                     " indices, which is not 3 per triangle");
  }
  size_t vertex_count = mesh.positions.size() / 3;
  for (size_t i = 0; i < mesh.faces.size(); ++i) {
    if (mesh.faces[i] >= vertex_count) {
      throw ValueError(prefix + ": face " + std::to_string(i / 3) + " refers to vertex " +
                       std::to_string(mesh.faces[i]) + ", but the mesh has " + std::to_string(vertex_count) +
                       " vertices (indices start at 0)");
    }
  }
  return vertex_count;
}

}  // namespace

const char* kind_name(const AccelGeometry& shape) {
  constexpr const char* kNames[] = {"triangle mesh", "sphere", "disk"};
  static_assert(std::variant_size_v<AccelGeometry> == std::size(kNames));
  return kNames[shape.index()];
}

std::string shape_name(size_t shape_index, const char* kind) {
  return "shape " + std::to_string(shape_index) + " (" + kind + ")";
}

ShapeSummary summarize(const AccelGeometry& shape, size_t shape_index) {
  const auto* mesh = std::get_if<AccelTriangles>(&shape);
  return {kind_name(shape), mesh != nullptr, mesh ? checked_vertex_count(*mesh, shape_index) : 0};
}

void check_position_update(const std::vector<ShapeSummary>& shapes, size_t shape_index, size_t float_count) {
  std::string prefix = "kiln.render: Accel::update_mesh_positions: ";
  if (shape_index >= shapes.size()) {
    throw ValueError(prefix + "shape index " + std::to_string(shape_index) + " is out of range: the accel has " +
                     std::to_string(shapes.size()) + " shapes");
  }
  const ShapeSummary& shape = shapes[shape_index];
  prefix += shape_name(shape_index, shape.kind);
  if (!shape.is_mesh) {
    throw ValueError(prefix + " is not a triangle mesh: only meshes have vertex positions to update");
  }
  if (float_count != 3 * shape.vertex_count) {
    throw ValueError(prefix + ": got " + std::to_string(float_count) + " floats; the mesh has " +
                     std::to_string(shape.vertex_count) + " vertices, so it takes " +
                     std::to_string(3 * shape.vertex_count) + " (x, y, z per vertex)");
  }
}

std::optional<AnalyticSphere> analytic_sphere(const AccelSphere& sphere, size_t shape_index) {
  for (int i = 0; i < 3; ++i) {
    if (!std::isfinite(sphere.center[i])) {
      throw ValueError(where(shape_index, "sphere") + ": center component " + std::to_string(i) + " is " +
                       to_text(sphere.center[i]) + "; it must be finite");
    }
  }
  if (!(sphere.radius >= 0) || !std::isfinite(sphere.radius)) {
    throw ValueError(where(shape_index, "sphere") + ": radius is " + to_text(sphere.radius) +
                     "; it must be finite and >= 0");
  }
  if (sphere.radius == 0) return std::nullopt;
  AnalyticSphere out;
  for (int i = 0; i < 3; ++i) out.center[i] = sphere.center[i];
  out.radius = sphere.radius;
  double extent[3] = {sphere.radius, sphere.radius, sphere.radius};
  out.bounds = bounds_around(out.center, extent);
  return out;
}

std::optional<AnalyticDisk> analytic_disk(const AccelDisk& disk, size_t shape_index) {
  const std::array<double, 16>& m = disk.to_world;
  for (size_t i = 0; i < 16; ++i) {
    if (!std::isfinite(m[i])) {
      throw ValueError(where(shape_index, "disk") + ": to_world[" + std::to_string(i / 4) + "][" +
                       std::to_string(i % 4) + "] is " + to_text(m[i]) + "; it must be finite");
    }
  }
  if (m[12] != 0 || m[13] != 0 || m[14] != 0 || m[15] != 1) {
    throw ValueError(where(shape_index, "disk") + ": to_world's last row is (" + to_text(m[12]) + ", " +
                     to_text(m[13]) + ", " + to_text(m[14]) + ", " + to_text(m[15]) +
                     "); an affine transform's is (0, 0, 0, 1)");
  }
  double axis_x[3] = {m[0], m[4], m[8]}, axis_y[3] = {m[1], m[5], m[9]};
  double normal[3];
  cross(axis_x, axis_y, normal);
  double normal_squared = dot(normal, normal);
  if (normal_squared == 0) return std::nullopt;
  AnalyticDisk out;
  double extent[3];
  for (int i = 0; i < 3; ++i) {
    out.origin[i] = m[4 * i + 3];
    out.normal[i] = normal[i];
    extent[i] = std::hypot(axis_x[i], axis_y[i]);
  }
  // A point p = x·axis_x + y·axis_y of the plane has x = (axis_y × n)·p / |n|² and
  // y = (n × axis_x)·p / |n|², as (axis_y × n)·axis_x = (n × axis_x)·axis_y = |n|².
  cross(axis_y, normal, out.to_local_x);
  cross(normal, axis_x, out.to_local_y);
  for (int i = 0; i < 3; ++i) {
    out.to_local_x[i] /= normal_squared;
    out.to_local_y[i] /= normal_squared;
  }
  out.bounds = bounds_around(out.origin, extent);
  return out;
}

}  // namespace kiln::render
