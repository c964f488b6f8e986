// Stanford PLY meshes, ASCII or binary (Mitsuba 3's `ply`): `filename`, plus the mesh parameters (to_world,
// flip_normals, face_normals).
#include "shapes/mesh.h"

#include <kiln/render/plugin.h>

namespace kiln::render {

KILN_REGISTER_PLUGIN(PluginKind::Shape, "ply", [](const Properties& props) {
  return std::make_shared<Mesh>(props, read_ply(props.get_string("filename")));
});

}  // namespace kiln::render
