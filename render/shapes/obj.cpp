// Wavefront OBJ meshes (Mitsuba 3's `obj`): `filename`, plus the mesh parameters (to_world, flip_normals,
// face_normals).
#include "shapes/mesh.h"

#include <kiln/render/plugin.h>

namespace kiln::render {

KILN_REGISTER_PLUGIN(PluginKind::Shape, "obj", [](const Properties& props) {
  return std::make_shared<Mesh>(props, read_obj(props.get_string("filename")));
});

}  // namespace kiln::render
