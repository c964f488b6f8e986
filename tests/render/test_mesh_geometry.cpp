// Built-in meshes and mesh processing: the rectangle and cube vertex for vertex as Mitsuba 3.9.1
// builds them, to_world on positions and normals, computed normals, triangle normals and areas,
// and the errors of each.
#include <kiln/errors.h>
#include <kiln/render/mesh_data.h>

#include <gtest/gtest.h>

#include <functional>
#include <numbers>

#include "mesh_test_files.h"

using namespace kiln;
using namespace kiln::render;
using mesh_test::expect_close;
using mesh_test::kIdentity;
using mesh_test::kMitsubaToWorld;

namespace {

/// kPlainObj of test_mesh_io.cpp as Mitsuba 3.9.1 welded it: a tetrahedron and one more triangle.
MeshData plain_mesh() {
  MeshData mesh;
  mesh.positions = {0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0, 1, 0.3f, 0.4f, 2};
  mesh.faces = {0, 1, 2, 0, 2, 3, 0, 3, 1, 2, 1, 3, 2, 4, 3};
  return mesh;
}

std::vector<double> widen(const std::vector<float>& values) { return {values.begin(), values.end()}; }

}  // namespace

TEST(MeshGeometry, RectangleIsMitsubas) {
  // Mitsuba 3.9.1: mi.load_dict({'type': 'rectangle'}).vertex_positions_buffer() etc.
  MeshData mesh = rectangle_mesh();
  expect_close(mesh.positions, {-1, -1, 0, 1, -1, 0, -1, 1, 0, 1, 1, 0});
  expect_close(mesh.normals, {0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1});
  expect_close(mesh.uvs, {0, 0, 1, 0, 0, 1, 1, 1});
  EXPECT_EQ(mesh.faces, (std::vector<uint32_t>{1, 2, 0, 1, 3, 2}));
  EXPECT_DOUBLE_EQ(surface_area(mesh), 4.0);
  // The same with to_world.
  transform_mesh(mesh, kMitsubaToWorld, "test");
  expect_close(mesh.positions, {-1.0405396223068237, -2.331707000732422, 1.6786062717437744, 2.4235620498657227,
                                -0.3317069709300995, 1.6786062717437744, -1.423561930656433, -1.6682929992675781,
                                2.3213937282562256, 2.0405397415161133, 0.3317069709300995, 2.3213937282562256});
  for (size_t i = 0; i < 4; ++i)
    expect_close({mesh.normals.begin() + 3 * i, mesh.normals.begin() + 3 * i + 3},
                 {0.32139378786087036, -0.5566703677177429, 0.7660444378852844});
  expect_close(mesh.uvs, {0, 0, 1, 0, 0, 1, 1, 1});
  EXPECT_NEAR(surface_area(mesh), 3.999999761581421, 2e-6);
}

TEST(MeshGeometry, CubeIsMitsubas) {
  // Mitsuba 3.9.1: mi.traverse(mi.load_dict({'type': 'cube'})).
  MeshData mesh = cube_mesh();
  EXPECT_EQ(mesh.faces,
            (std::vector<uint32_t>{0,  1,  2,  3,  0,  2,  4,  5,  6,  7,  4,  6,  8,  9,  10, 11, 8,  10,
                                   12, 13, 14, 15, 12, 14, 16, 17, 18, 19, 16, 18, 20, 21, 22, 23, 20, 22}));
  expect_close(mesh.positions,
               {1,  -1, -1, 1,  -1, 1,  -1, -1, 1,  -1, -1, -1, 1, 1,  -1, -1, 1,  -1, -1, 1,  1,  1,  1,  1,
                1,  -1, -1, 1,  1,  -1, 1,  1,  1,  1,  -1, 1,  1, -1, 1,  1,  1,  1,  -1, 1,  1,  -1, -1, 1,
                -1, -1, 1,  -1, 1,  1,  -1, 1,  -1, -1, -1, -1, 1, 1,  -1, 1,  -1, -1, -1, -1, -1, -1, 1,  -1});
  expect_close(mesh.normals, {0,  -1, 0, 0,  -1, 0, 0,  -1, 0, 0,  -1, 0, 0, 1, 0,  0, 1, 0,  0, 1, 0,  0, 1, 0,
                              1,  0,  0, 1,  0,  0, 1,  0,  0, 1,  0,  0, 0, 0, 1,  0, 0, 1,  0, 0, 1,  0, 0, 1,
                              -1, 0,  0, -1, 0,  0, -1, 0,  0, -1, 0,  0, 0, 0, -1, 0, 0, -1, 0, 0, -1, 0, 0, -1});
  for (size_t i = 0; i < 24; i += 4)
    expect_close({mesh.uvs.begin() + 2 * i, mesh.uvs.begin() + 2 * i + 8}, {0, 1, 1, 1, 1, 0, 0, 0});
  EXPECT_DOUBLE_EQ(surface_area(mesh), 24.0);
  // With to_world: the first side's corners and the normal of each side.
  transform_mesh(mesh, kMitsubaToWorld, "test");
  expect_close({mesh.positions.begin(), mesh.positions.begin() + 12},
               {1.9414713382720947, 0.5032985210418701, 0.5295395851135254, 2.9056527614593506, -1.1667125225067139,
                2.8276729583740234, -0.5584489107131958, -3.166712522506714, 2.8276729583740234, -1.5226303339004517,
                -1.4967014789581299, 0.5295395851135254});
  std::vector<float> side_normals;
  for (size_t side = 0; side < 6; ++side)
    side_normals.insert(side_normals.end(), mesh.normals.begin() + 12 * side, mesh.normals.begin() + 12 * side + 3);
  expect_close(side_normals, {0.3830222487449646, -0.663413941860199, -0.6427875757217407, -0.3830222487449646,
                              0.663413941860199, 0.6427875757217407, 0.866025447845459, 0.5, 0.0, 0.32139378786087036,
                              -0.5566703677177429, 0.7660444378852844, -0.866025447845459, -0.5, 0.0,
                              -0.32139378786087036, 0.5566703677177429, -0.7660444378852844});
  EXPECT_NEAR(surface_area(mesh), 38.0, 1e-5);
}

TEST(MeshGeometry, AreasMatchMitsuba) {
  MeshData mesh = plain_mesh();
  std::vector<float> areas = triangle_areas(mesh);
  ASSERT_EQ(areas.size(), 5u);
  EXPECT_FLOAT_EQ(areas[0], 0.5f);
  EXPECT_FLOAT_EQ(areas[3], float(std::sqrt(3.0) / 2));
  // Mitsuba 3.9.1: surface_area() of kPlainObj without and with to_world.
  EXPECT_NEAR(surface_area(mesh), 3.0748977661132812, 1e-6);
  transform_mesh(mesh, kMitsubaToWorld, "test");
  EXPECT_NEAR(surface_area(mesh), 5.965960502624512, 1e-5);
}

TEST(MeshGeometry, TriangleNormalsFollowTheWinding) {
  MeshData mesh = plain_mesh();
  mesh.faces.insert(mesh.faces.end(), {0, 0, 1});  // degenerate
  std::vector<float> normals = triangle_normals(mesh);
  expect_close({normals.begin(), normals.begin() + 9}, {0, 0, -1, 0, -1, 0, -1, 0, 0});
  float s = float(1 / std::sqrt(3.0));
  expect_close({normals.begin() + 9, normals.begin() + 12}, {s, s, s});
  expect_close({normals.end() - 3, normals.end()}, {0, 0, 0});
}

TEST(MeshGeometry, VertexNormalsWeighTrianglesByAngle) {
  // A vertex where a right angle and a 45° angle meet: weights pi/2 and pi/4.
  MeshData mesh;
  mesh.positions = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 0, 1, 5, 5, 5};
  mesh.faces = {0, 1, 2, 0, 4, 3};
  std::vector<float> normals = vertex_normals(mesh);
  double pi = std::numbers::pi;
  // Triangle 0 has normal +z; triangle 1 (x-z plane, corners (0,0,0), (1,0,1), (0,0,1)) has -y.
  double z = pi / 2, y = -pi / 4, length = std::hypot(z, y);
  expect_close({normals.begin(), normals.begin() + 3}, {0, y / length, z / length});
  expect_close({normals.begin() + 3, normals.begin() + 6}, {0, 0, 1});
  expect_close({normals.end() - 3, normals.end()}, {1, 0, 0});  // in no triangle: Mitsuba's stand-in
}

TEST(MeshGeometry, NormalsMapByTheInverseTranspose) {
  MeshData mesh;
  mesh.positions = {0, 0, 0, 1, 0, 0, 0, 1, 0};
  mesh.normals = {1, 1, 0, 1, 1, 0, 0, 0, 1};
  mesh.faces = {0, 1, 2};
  // Scale x by 2 and mirror z: (1, 1, 0) becomes (1/2, 1, 0) normalized, +z becomes -z.
  Matrix4d scale = {2, 0, 0, 1, 0, 1, 0, 0, 0, 0, -1, 0, 0, 0, 0, 1};
  transform_mesh(mesh, scale, "test");
  double n = 1 / std::sqrt(1.25);
  expect_close(mesh.normals, {0.5 * n, n, 0, 0.5 * n, n, 0, 0, 0, -1});
  expect_close(mesh.positions, {1, 0, 0, 3, 0, 0, 1, 1, 0});
  // The last row is not used (an affine to_world).
  MeshData again = rectangle_mesh();
  Matrix4d projective = kIdentity;
  projective[12] = 5;
  projective[15] = 3;
  transform_mesh(again, projective, "test");
  expect_close(again.positions, widen(rectangle_mesh().positions));
}

TEST(MeshGeometry, PlaceMeshComputesNormalsOnlyWhenAskedAndMissing) {
  MeshData mesh = plain_mesh();
  place_mesh(mesh, kIdentity, true, "test");
  EXPECT_TRUE(mesh.normals.empty());
  place_mesh(mesh, kIdentity, false, "test");
  expect_close(mesh.normals, widen(vertex_normals(plain_mesh())));
  MeshData rectangle = rectangle_mesh();
  rectangle.normals = {0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1, 0};  // given normals stay
  place_mesh(rectangle, kIdentity, false, "test");
  expect_close(rectangle.normals, {0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1, 0});
}

TEST(MeshGeometry, Errors) {
  auto expect_value_error = [](const std::function<void()>& call, const std::string& part) {
    try {
      call();
      ADD_FAILURE() << "no error, expected: " << part;
    } catch (const ValueError& error) {
      EXPECT_NE(std::string(error.what()).find(part), std::string::npos) << error.what();
    }
  };
  auto transform_cube = [](const Matrix4d& to_world, const std::string& where) {
    return [=] {
      MeshData mesh = cube_mesh();
      transform_mesh(mesh, to_world, where);
    };
  };
  Matrix4d singular = kIdentity;
  singular[10] = 0;
  expect_value_error(transform_cube(singular, "shape 'cube' (scene.xml:3): to_world"),
                     "shape 'cube' (scene.xml:3): to_world: maps the normal of vertex 0 to no direction");
  Matrix4d huge = kIdentity;
  huge[0] = 1e39;
  expect_value_error(transform_cube(huge, "to_world"), "to_world: maps vertex 0 to a non-finite position");
  MeshData bad_index = rectangle_mesh();
  bad_index.faces[4] = 4;
  expect_value_error([&] { triangle_areas(bad_index); }, "face 1 refers to vertex 4 of 4");
  MeshData bad_positions = rectangle_mesh();
  bad_positions.positions.pop_back();
  expect_value_error([&] { vertex_normals(bad_positions); }, "11 position values");
  MeshData bad_normals = rectangle_mesh();
  bad_normals.normals.pop_back();
  expect_value_error([&] { place_mesh(bad_normals, kIdentity, false, "x"); }, "11 normal values for 4 vertices");
  MeshData bad_uvs = rectangle_mesh();
  bad_uvs.uvs.push_back(0);
  expect_value_error([&] { triangle_normals(bad_uvs); }, "9 uv values for 4 vertices");
}
