// What every emitter shares: the scene's hooks, which most emitters ignore.
#include <kiln/render/emitter.h>

namespace kiln::render {

void Emitter::set_shape(Shape*) {}

void Emitter::set_scene_bounds(const std::array<float, 3>&, float) {}

}  // namespace kiln::render
