// Wavefront OBJ meshes (Mitsuba 3's `obj`): `filename`, `flip_tex_coords` (true), plus the mesh
// parameters (to_world, face_normals, flip_normals).
#include "core/parameter_checks.h"
#include "shapes/mesh.h"

#include <kiln/render/plugin.h>

namespace kiln::render {

KILN_REGISTER_PLUGIN(PluginKind::Shape, "obj", [](const Properties& props) {
  MeshReadOptions options{.flip_tex_coords = props.get_bool("flip_tex_coords", true),
                          .face_normals = props.get_bool("face_normals", false)};
  return std::make_shared<Mesh>(props, read_obj(file_parameter(props, "filename"), options));
});

}  // namespace kiln::render
