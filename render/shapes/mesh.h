// Triangle meshes (Mitsuba 3's Mesh): the shape behind `obj`, `ply`, `rectangle` and `cube`.
// Vertex data are Kiln arrays (`vertex_positions`, `vertex_normals`, `vertex_texcoords`,
// `faces`: flat, 3, 3, 2 and 3 values per element; attributes `vertex_*` and `face_*`
// of any number of channels), so a render differentiates with respect to them; the ray tracer and the area distribution
// get host copies, refreshed by parameters_changed(). A scene joins the arrays of its meshes of one layout
// (pool_meshes), and hits read those.
#pragma once

#include <kiln/autodiff.h>
#include <kiln/render/distribution.h>
#include <kiln/render/mesh_data.h>
#include <kiln/render/shape.h>

#include <map>
#include <memory>

namespace kiln::render {

/// The vertex data of a scene's meshes of one layout joined in shared arrays, faces
/// renumbered to the joined vertices: hits on any of them then trace one body in a
/// symbolic dispatch (the meshes differ only in one-element values), instead of one each.
struct MeshPool {
  Float positions, normals, texcoords;
  UInt32 faces;
};

class Mesh : public Shape {
 public:
  /// `data` as read, in object space. Reads `to_world`, `face_normals` (which drops vertex
  /// normals) and `flip_normals` (which negates normals where they are used, as Mitsuba,
  /// leaving `vertex_normals` as stored); throws ValueError for a mesh without faces.
  Mesh(const Properties& props, MeshData data);

  AccelGeometry accel_geometry() const override;
  SurfaceInteraction compute_surface_interaction(const Ray3f& ray, const PreliminaryIntersection& hit,
                                                 const Bool& active, const Bool& follow_shape) const override;
  PositionSample3f sample_position(const Array2f& sample, const Bool& active) const override;
  Float pdf_position(const PositionSample3f& ps, const Bool& active) const override;
  Float surface_area() const override;
  std::pair<std::array<float, 3>, std::array<float, 3>> bounding_box() const override;
  std::unique_ptr<Silhouette> silhouette(const std::array<float, 3>& eye) const override;
  std::unique_ptr<Silhouette> silhouettes() const override;
  bool geometry_has_derivatives() const override { return grad_enabled(positions_); }

  void traverse(TraversalCallback& callback) override;
  void parameters_changed(const std::vector<std::string>& keys) override;

  /// Adds attribute `name` (as add_mesh_attribute() in mesh_data.h says).
  void add_attribute(const std::string& name, size_t channels, const Float& values);
  bool has_attribute(const std::string& name) const override;
  /// A `vertex_*` attribute interpolated at si.p with the hit triangle's barycentric
  /// coordinates (recomputed from the mesh's own positions, as Mitsuba), a `face_*` one of
  /// the hit triangle; ValueError for an attribute of other than 1 or 3 channels.
  Color3f eval_attribute(const std::string& name, const SurfaceInteraction& si, const Bool& active) const override;

  /// Hits read vertex data from `pool`, where this mesh's faces start at `first_face`
  /// (null: from the mesh's own arrays).
  void use_pool(std::shared_ptr<const MeshPool> pool, uint32_t first_face);
  /// Meshes share a pool when their layouts are equal: vertex normals or not, texture
  /// coordinates or not.
  std::pair<bool, bool> layout() const { return {has_normals_, has_texcoords_}; }
  /// The mesh's own arrays (vertex_positions, vertex_normals, vertex_texcoords, faces).
  MeshPool own_arrays() const { return {positions_, normals_, texcoords_, faces_}; }
  size_t vertex_count() const { return positions_.size() / 3; }
  size_t face_count() const { return faces_.size() / 3; }
  /// The mesh as the ply reader reads it back (world space, as Mitsuba's write_ply).
  MeshData host_data() const;

 private:
  /// Host copies of positions and faces, and the area distribution, from the Kiln arrays
  /// (none while every triangle is degenerate); ValueError naming the mesh, and nothing
  /// changed, unless the faces are triangles of vertices the mesh has.
  void refresh_host_data();
  /// Vertex normals from the positions and faces, as a mesh read without them gets.
  Float computed_vertex_normals() const;
  /// Drops the vertex values (has = false) when `values` is empty; otherwise ValueError
  /// naming the mesh unless they hold `per_vertex` values per vertex.
  void check_vertex_values(const char* name, bool& has, const Float& values, size_t per_vertex);
  /// ValueError naming the shape when it has no area distribution to sample.
  void require_area() const;
  /// `n` turned to the side flip_normals asks for.
  Array3f oriented(const Array3f& n) const;

  struct Attribute {
    size_t channels;
    Float values;
  };
  /// "kiln.render: shape '<plugin>' (<source>): attribute '<name>'", how messages begin.
  std::string describe_attribute(const std::string& name) const;
  /// ValueError naming the mesh unless `attribute` holds `channels` values per vertex (a
  /// `vertex_` name) or per face.
  void check_attribute(const std::string& name, const Attribute& attribute) const;

  Float positions_, normals_, texcoords_;
  UInt32 faces_;
  bool has_normals_ = false, has_texcoords_ = false;
  /// -1 with flip_normals, else 1: a one-element value, so that flipped and unflipped
  /// meshes trace the same body.
  Float orientation_;
  std::shared_ptr<const MeshPool> pool_;
  UInt32 first_face_;  ///< in pool_'s faces (one element, 0 without a pool)
  MeshData host_;      ///< positions and faces as the ray tracer sees them
  DiscreteDistribution area_;
  std::map<std::string, Attribute> attributes_;
};

/// Gives each group of two or more meshes of one layout among `shapes` a MeshPool (the
/// others read their own arrays). Called again when a mesh's arrays change.
void pool_meshes(const std::vector<std::shared_ptr<Shape>>& shapes);

}  // namespace kiln::render
