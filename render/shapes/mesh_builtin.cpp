// The built-in meshes: Mitsuba 3's rectangle and cube, vertex for vertex (mesh_data.h).
#include <kiln/render/mesh_data.h>

namespace kiln::render {

MeshData rectangle_mesh() {
  MeshData mesh;
  mesh.positions = {-1, -1, 0, 1, -1, 0, -1, 1, 0, 1, 1, 0};
  mesh.normals = {0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1};
  mesh.uvs = {0, 0, 1, 0, 0, 1, 1, 1};
  mesh.faces = {1, 2, 0, 1, 3, 2};
  return mesh;
}

MeshData cube_mesh() {
  MeshData mesh;
  // Sides in Mitsuba's order: -y, +y, +x, +z, -x, -z; each side's 4 corners share its normal
  // and run through uvs (0, 1), (1, 1), (1, 0), (0, 0).
  mesh.positions = {
      1,  -1, -1, 1,  -1, 1,  -1, -1, 1,  -1, -1, -1,  // -y
      1,  1,  -1, -1, 1,  -1, -1, 1,  1,  1,  1,  1,   // +y
      1,  -1, -1, 1,  1,  -1, 1,  1,  1,  1,  -1, 1,   // +x
      1,  -1, 1,  1,  1,  1,  -1, 1,  1,  -1, -1, 1,   // +z
      -1, -1, 1,  -1, 1,  1,  -1, 1,  -1, -1, -1, -1,  // -x
      1,  1,  -1, 1,  -1, -1, -1, -1, -1, -1, 1,  -1,  // -z
  };
  const float side_normals[6][3] = {{0, -1, 0}, {0, 1, 0}, {1, 0, 0}, {0, 0, 1}, {-1, 0, 0}, {0, 0, -1}};
  for (const auto& normal : side_normals) {
    for (int corner = 0; corner < 4; ++corner) mesh.normals.insert(mesh.normals.end(), normal, normal + 3);
    mesh.uvs.insert(mesh.uvs.end(), {0, 1, 1, 1, 1, 0, 0, 0});
  }
  for (uint32_t side = 0; side < 6; ++side) {
    uint32_t first = 4 * side;
    mesh.faces.insert(mesh.faces.end(), {first, first + 1, first + 2, first + 3, first, first + 2});
  }
  return mesh;
}

}  // namespace kiln::render
