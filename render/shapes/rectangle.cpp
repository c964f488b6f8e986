// The rectangle (Mitsuba 3's `rectangle`): [-1, 1]² in the z = 0 plane facing +z, placed by `to_world`.
#include "shapes/mesh.h"

#include <kiln/render/plugin.h>

namespace kiln::render {

KILN_REGISTER_PLUGIN(PluginKind::Shape, "rectangle",
                     [](const Properties& props) { return std::make_shared<Mesh>(props, rectangle_mesh()); });

}  // namespace kiln::render
