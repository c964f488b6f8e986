// Triangle meshes on the host, as Mitsuba 3's mesh shapes build them: the obj and ply
// readers, the built-in rectangle and cube, and the processing Mitsuba applies after reading
// (to_world, normals when the file has none, areas). Shape plugins turn a MeshData into
// labelled Kiln arrays (`<id>.vertex_positions`, ...), so vertex counts and order here must
// be Mitsuba's.
//
// What an implementation guarantees:
// - Vertex count, vertex order and faces equal Mitsuba 3.9's for every file Mitsuba 3.9
//   loads (obj: one vertex per distinct (position, uv, normal) index triple, in order of
//   first use; ply: the file's vertices in file order). Values agree to float rounding.
// - Polygons become a fan of triangles around their first corner (as Mitsuba's obj reader).
// - Normals from files are unit length; texture coordinates are (u, v) as the file gives
//   them unless `flip_tex_coords` asks for v -> 1 - v (Mitsuba's default for obj only).
// - A missing, truncated or malformed file raises kiln::FileError naming the file, what is
//   wrong and where (line, or element and property); nothing crashes, hangs or is
//   silently read as a different value than the file holds.
// - flip_normals changes no array: Mitsuba keeps the stored normals (and hence
//   `<id>.vertex_normals`) as they are and negates the geometric and shading normal of each
//   interaction and position sample; shapes do the same.
#pragma once

#include <kiln/render/common.h>
#include <kiln/render/properties.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace kiln::render {

/// A mesh attribute as Mitsuba names it (`vertex_<name>`, `face_<name>`): `channels` values
/// per vertex or per face.
struct MeshAttributeData {
  size_t channels = 1;
  std::vector<float> values;
};

/// An indexed triangle mesh in single precision, laid out as Mitsuba's parameters are.
struct MeshData {
  std::vector<float> positions;  ///< 3 per vertex
  std::vector<float> normals;    ///< 3 per vertex, or empty
  std::vector<float> uvs;        ///< 2 per vertex, or empty
  std::vector<uint32_t> faces;   ///< 3 vertex indices per triangle, counterclockwise seen from the front
  std::map<std::string, MeshAttributeData> attributes;  ///< by name ("vertex_color")

  size_t vertex_count() const { return positions.size() / 3; }
  size_t face_count() const { return faces.size() / 3; }
};

/// The parameters of Mitsuba's obj and ply shapes that act while a file is read.
struct MeshReadOptions {
  /// Store 1 - v for every texture coordinate (Mitsuba's `flip_tex_coords`).
  bool flip_tex_coords = false;
  /// Discard the file's normals (Mitsuba's `face_normals`): the mesh then has none, and shading
  /// uses each triangle's geometric normal.
  bool face_normals = false;
};

/// Reads a Wavefront OBJ file (through tinyobjloader): every group and object merged, `v`,
/// `vt`, `vn` and `f` used, other statements ignored. uvs are kept when the file has `vt`
/// lines, normals when it has `vn` lines; a corner without a uv index gets (0, 0), a vertex
/// without a normal index the angle-weighted normal of its triangles (Mitsuba 3.9 leaves
/// both undefined). Negative (relative) indices are resolved. Raises FileError for a face of
/// fewer than 3 corners, corners of one face that differ in which indices they give, an index
/// out of range, or a non-finite position, normal or uv, naming the line.
MeshData read_obj(const std::string& path, const MeshReadOptions& options = {.flip_tex_coords = true});

/// Reads a Stanford PLY file (ascii, binary little- or big-endian; any scalar type for any
/// property). The `vertex` element gives x y z, optionally nx ny nz, and u v (or texture_u
/// texture_v, or s t); the `face` element a list `vertex_indices` (or `vertex_index`) of any
/// integer types. Other scalar properties of `vertex` and `face` become attributes by Mitsuba's
/// naming rules (render/shapes/ply_attributes.h: r g b is `vertex_color`, `<p>_x` `<p>_y`
/// `<p>_z` is `vertex_<p>` ...); the rest, and other elements, are skipped. Mitsuba 3.9
/// reads triangles only; other polygons are fanned here (each triangle keeps the face's
/// attributes).
MeshData read_ply(const std::string& path, const MeshReadOptions& options = {});
/// Writes `mesh` as a binary little-endian PLY file that read_ply() reads back as it is
/// (positions, normals and uvs when present, triangles, attributes of 1 or 3 channels). FileError naming the file when
/// it cannot be written or the mesh's arrays are inconsistent.
void write_ply(const MeshData& mesh, const std::string& path);

class Shape;

/// A triangle-mesh shape with `vertex_count` vertices and `face_count` faces, all zero (and
/// zero normals / uvs when asked), to fill through traverse() — Mitsuba's mi.Mesh(name,
/// vertex_count, face_count, ...). `props` (a shape's, its id the name) gives the other
/// parameters (bsdf, to_world ...). ValueError for no faces.
std::shared_ptr<Shape> make_mesh(size_t vertex_count, size_t face_count, bool vertex_normals, bool vertex_texcoords,
                                 const Properties& props);
/// The world-space arrays of a mesh shape (what write_ply() stores); TypeError naming the
/// shape when it is not a triangle mesh.
MeshData mesh_arrays(const Shape& shape);
/// Gives a mesh shape the attribute `name` (Mitsuba's Mesh.add_attribute): `vertex_<...>` or
/// `face_<...>`, `channels` values per vertex or face in `values`. ValueError for another
/// name, one the mesh has, or a size that does not fit; TypeError for a shape that is not a
/// triangle mesh.
void add_mesh_attribute(Shape& shape, const std::string& name, size_t channels, const Float& values);

/// Mitsuba's rectangle: [-1, 1]^2 at z = 0 facing +z; vertex i at
/// (2 (i & 1) - 1, 2 (i >> 1) - 1, 0) with uv (i & 1, i >> 1).
MeshData rectangle_mesh();
/// Mitsuba's cube: [-1, 1]^3 as 24 vertices, 4 per side with the side's normal and uvs.
MeshData cube_mesh();

/// Maps the mesh by `to_world` as Mitsuba's mesh shapes do: positions by its affine part (the
/// last row is not used: Mitsuba's to_world is an affine transform), normals by the inverse
/// transpose of its linear part, normalized. Raises ValueError naming `where` (the shape and
/// its parameter) when a position or normal comes out non-finite.
void transform_mesh(MeshData& mesh, const Matrix4d& to_world, const std::string& where);

/// What Mitsuba's obj and ply shapes do after reading, in its order: transform_mesh, then,
/// unless `face_normals`, vertex_normals() when the mesh has no normals.
void place_mesh(MeshData& mesh, const Matrix4d& to_world, bool face_normals, const std::string& where);

/// Each triangle's unit geometric normal, normalize(cross(p1 - p0, p2 - p0)) (3 per triangle;
/// (0, 0, 0) for a degenerate one): the shading normal of a mesh without vertex normals.
std::vector<float> triangle_normals(const MeshData& mesh);

/// Normals per vertex as Mitsuba computes them for a mesh without any: the sum of the unit
/// normals of the vertex's triangles weighted by the triangle's angle at the vertex
/// (Thürmer and Wüthrich 1998), normalized; (1, 0, 0) for a vertex of no proper triangle.
std::vector<float> vertex_normals(const MeshData& mesh);

/// Each triangle's area, |cross(p1 - p0, p2 - p0)| / 2 (the weights of area sampling).
std::vector<float> triangle_areas(const MeshData& mesh);
/// The sum of the triangle areas.
double surface_area(const MeshData& mesh);

}  // namespace kiln::render
