// The cube (Mitsuba 3's `cube`): [-1, 1]³ with a normal per face, placed by `to_world`.
#include "shapes/mesh.h"

#include <kiln/render/plugin.h>

namespace kiln::render {

KILN_REGISTER_PLUGIN(PluginKind::Shape, "cube",
                     [](const Properties& props) { return std::make_shared<Mesh>(props, cube_mesh()); });

}  // namespace kiln::render
