// What Mitsuba does to a mesh after building it: to_world, normals when there are none,
// triangle normals and areas (mesh_data.h). Computed in double, stored in float.
#include <kiln/errors.h>
#include <kiln/render/mesh_data.h>

#include <array>
#include <cmath>
#include <numbers>

namespace kiln::render {
namespace {

using Vec3 = std::array<double, 3>;

Vec3 operator-(const Vec3& a, const Vec3& b) { return {a[0] - b[0], a[1] - b[1], a[2] - b[2]}; }
Vec3 operator+(const Vec3& a, const Vec3& b) { return {a[0] + b[0], a[1] + b[1], a[2] + b[2]}; }
Vec3 operator*(const Vec3& a, double s) { return {a[0] * s, a[1] * s, a[2] * s}; }
double dot(const Vec3& a, const Vec3& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
double norm(const Vec3& a) { return std::sqrt(dot(a, a)); }
Vec3 cross(const Vec3& a, const Vec3& b) {
  return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}
/// `a` scaled to unit length; (0, 0, 0) when it has none.
Vec3 normalize(const Vec3& a) {
  double length = norm(a);
  return length > 0 ? a * (1 / length) : Vec3{0, 0, 0};
}

Vec3 load(const std::vector<float>& values, size_t i) { return {values[3 * i], values[3 * i + 1], values[3 * i + 2]}; }
void store(std::vector<float>& values, size_t i, const Vec3& a) {
  for (size_t k = 0; k < 3; ++k) values[3 * i + k] = float(a[k]);
}

/// Raises ValueError unless the arrays agree: whole vertices and triangles, normals and uvs
/// per vertex or absent, every face index a vertex.
void check_mesh(const MeshData& mesh) {
  size_t vertices = mesh.vertex_count();
  auto fail = [](const std::string& what) { throw ValueError("kiln.render: inconsistent MeshData: " + what); };
  if (mesh.positions.size() % 3 || mesh.faces.size() % 3)
    fail(std::to_string(mesh.positions.size()) + " position values and " + std::to_string(mesh.faces.size()) +
         " face indices (each must be a multiple of 3)");
  if (!mesh.normals.empty() && mesh.normals.size() != 3 * vertices)
    fail(std::to_string(mesh.normals.size()) + " normal values for " + std::to_string(vertices) + " vertices");
  if (!mesh.uvs.empty() && mesh.uvs.size() != 2 * vertices)
    fail(std::to_string(mesh.uvs.size()) + " uv values for " + std::to_string(vertices) + " vertices");
  for (size_t i = 0; i < mesh.faces.size(); ++i)
    if (mesh.faces[i] >= vertices)
      fail("face " + std::to_string(i / 3) + " refers to vertex " + std::to_string(mesh.faces[i]) + " of " +
           std::to_string(vertices));
}

/// A triangle's corner positions.
std::array<Vec3, 3> corners(const MeshData& mesh, size_t triangle) {
  const uint32_t* face = &mesh.faces[3 * triangle];
  return {load(mesh.positions, face[0]), load(mesh.positions, face[1]), load(mesh.positions, face[2])};
}

/// cross(p1 - p0, p2 - p0): the triangle's normal with twice its area as length.
Vec3 area_vector(const std::array<Vec3, 3>& p) { return cross(p[1] - p[0], p[2] - p[0]); }

/// The angle between two unit vectors, accurate also when it is near 0 or pi.
double unit_angle(const Vec3& a, const Vec3& b) {
  return dot(a, b) < 0 ? std::numbers::pi - 2 * std::asin(norm(a + b) / 2) : 2 * std::asin(norm(b - a) / 2);
}

}  // namespace

void transform_mesh(MeshData& mesh, const Matrix4d& to_world, const std::string& where) {
  check_mesh(mesh);
  const Matrix4d& m = to_world;
  auto fail = [&](const std::string& what) { throw ValueError("kiln.render: " + where + ": " + what); };
  for (size_t i = 0; i < mesh.vertex_count(); ++i) {
    Vec3 p = load(mesh.positions, i), mapped;
    for (size_t r = 0; r < 3; ++r)
      mapped[r] = m[4 * r] * p[0] + m[4 * r + 1] * p[1] + m[4 * r + 2] * p[2] + m[4 * r + 3];
    store(mesh.positions, i, mapped);
    if (!std::isfinite(mesh.positions[3 * i]) || !std::isfinite(mesh.positions[3 * i + 1]) ||
        !std::isfinite(mesh.positions[3 * i + 2]))
      fail("maps vertex " + std::to_string(i) + " to a non-finite position");
  }
  if (mesh.normals.empty()) return;
  // The inverse transpose of the linear part A is cofactor(A) / det(A); the cofactor rows are
  // the cross products of A's rows.
  Vec3 rows[3] = {{m[0], m[1], m[2]}, {m[4], m[5], m[6]}, {m[8], m[9], m[10]}};
  Vec3 cofactor[3] = {cross(rows[1], rows[2]), cross(rows[2], rows[0]), cross(rows[0], rows[1])};
  double determinant = dot(rows[0], cofactor[0]);
  for (size_t i = 0; i < mesh.vertex_count(); ++i) {
    Vec3 n = load(mesh.normals, i);
    Vec3 mapped = normalize(Vec3{dot(cofactor[0], n), dot(cofactor[1], n), dot(cofactor[2], n)} * (1 / determinant));
    if (!std::isfinite(mapped[0]) || norm(mapped) == 0)
      fail("maps the normal of vertex " + std::to_string(i) + " to no direction (is its linear part singular?)");
    store(mesh.normals, i, mapped);
  }
}

void place_mesh(MeshData& mesh, const Matrix4d& to_world, bool face_normals, const std::string& where) {
  transform_mesh(mesh, to_world, where);
  if (!face_normals && mesh.normals.empty()) mesh.normals = vertex_normals(mesh);
}

std::vector<float> triangle_normals(const MeshData& mesh) {
  check_mesh(mesh);
  std::vector<float> normals(3 * mesh.face_count());
  for (size_t t = 0; t < mesh.face_count(); ++t) store(normals, t, normalize(area_vector(corners(mesh, t))));
  return normals;
}

std::vector<float> vertex_normals(const MeshData& mesh) {
  check_mesh(mesh);
  std::vector<Vec3> sums(mesh.vertex_count(), Vec3{0, 0, 0});
  for (size_t t = 0; t < mesh.face_count(); ++t) {
    std::array<Vec3, 3> p = corners(mesh, t);
    Vec3 n = normalize(area_vector(p));
    if (norm(n) == 0) continue;  // a degenerate triangle adds nothing
    for (size_t k = 0; k < 3; ++k) {
      const Vec3& at = p[k];
      double angle = unit_angle(normalize(p[(k + 1) % 3] - at), normalize(p[(k + 2) % 3] - at));
      Vec3& sum = sums[mesh.faces[3 * t + k]];
      sum = sum + n * angle;
    }
  }
  std::vector<float> normals(3 * mesh.vertex_count());
  for (size_t i = 0; i < sums.size(); ++i) store(normals, i, norm(sums[i]) > 0 ? normalize(sums[i]) : Vec3{1, 0, 0});
  return normals;
}

std::vector<float> triangle_areas(const MeshData& mesh) {
  check_mesh(mesh);
  std::vector<float> areas(mesh.face_count());
  for (size_t t = 0; t < mesh.face_count(); ++t) areas[t] = float(norm(area_vector(corners(mesh, t))) / 2);
  return areas;
}

double surface_area(const MeshData& mesh) {
  double total = 0;
  for (float area : triangle_areas(mesh)) total += area;
  return total;
}

}  // namespace kiln::render
