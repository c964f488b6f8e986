// Triangle meshes (Mitsuba 3's Mesh): the shape behind `obj`, `ply`, `rectangle` and `cube`.
// Vertex data are Kiln arrays (`vertex_positions`, `vertex_normals`, `vertex_texcoords`,
// `faces`: flat, 3, 3, 2 and 3 values per element), so a render differentiates with
// respect to them; the ray tracer and the area distribution get host copies, refreshed by
// parameters_changed().
#pragma once

#include <kiln/render/distribution.h>
#include <kiln/render/mesh_data.h>
#include <kiln/render/shape.h>

namespace kiln::render {

class Mesh : public Shape {
 public:
  /// `data` as read, in object space. Reads `to_world`, `face_normals` (which drops vertex
  /// normals) and `flip_normals` (which negates normals where they are used, as Mitsuba,
  /// leaving `vertex_normals` as stored); throws ValueError for a mesh without faces.
  Mesh(const Properties& props, MeshData data);

  AccelGeometry accel_geometry() const override;
  SurfaceInteraction compute_surface_interaction(const Ray3f& ray, const PreliminaryIntersection& hit,
                                                 const Bool& active) const override;
  PositionSample3f sample_position(const Array2f& sample, const Bool& active) const override;
  Float pdf_position(const PositionSample3f& ps, const Bool& active) const override;
  Float surface_area() const override;
  std::pair<std::array<float, 3>, std::array<float, 3>> bounding_box() const override;

  void traverse(TraversalCallback& callback) override;
  void parameters_changed(const std::vector<std::string>& keys) override;

 private:
  /// Host copies of positions and faces, and the area distribution, from the Kiln arrays.
  void refresh_host_data();
  /// `n` turned to the side flip_normals asks for.
  Array3f oriented(const Array3f& n) const;

  Float positions_, normals_, texcoords_;
  UInt32 faces_;
  bool flip_normals_ = false, has_normals_ = false, has_texcoords_ = false;
  MeshData host_;  ///< positions and faces as the ray tracer sees them
  DiscreteDistribution area_;
};

}  // namespace kiln::render
