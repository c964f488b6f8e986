// Stanford PLY meshes, ASCII or binary (Mitsuba 3's `ply`): `filename`, `flip_tex_coords`
// (false), plus the mesh parameters (to_world, face_normals, flip_normals).
#include "core/parameter_checks.h"
#include "shapes/mesh.h"

#include <kiln/render/plugin.h>

namespace kiln::render {

KILN_REGISTER_PLUGIN(PluginKind::Shape, "ply", [](const Properties& props) {
  MeshReadOptions options{.flip_tex_coords = props.get_bool("flip_tex_coords", false),
                          .face_normals = props.get_bool("face_normals", false)};
  return std::make_shared<Mesh>(props, read_ply(file_parameter(props, "filename"), options));
});

}  // namespace kiln::render
