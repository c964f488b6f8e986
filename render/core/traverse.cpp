// Objects without parameters: the defaults of Object::traverse and parameters_changed.
#include <kiln/render/properties.h>
#include <kiln/render/traverse.h>

namespace kiln::render {

void Object::traverse(TraversalCallback&) {}

void Object::parameters_changed(const std::vector<std::string>&) {}

}  // namespace kiln::render
