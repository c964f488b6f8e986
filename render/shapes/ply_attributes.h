// Which of a PLY element's properties become mesh attributes, by Mitsuba 3's naming rules:
// r g b [a] (or red green blue [alpha]) are `<element>_color`; consecutive properties
// `<prefix>_<x|y|z|w>`, `_<r|g|b|a>` (named `<prefix>_color`), `_<0|1|2|3>` or `_<1|2|3|4>`
// are `<element>_<prefix>` when there are 1 or 3 of them. Others are not attributes (Mitsuba
// skips them with a warning). Private to render/shapes.
#pragma once

#include <string>
#include <vector>

namespace kiln::render {

struct PlyAttributeGroup {
  std::string name;                ///< "vertex_color", "face_density"
  std::vector<size_t> properties;  ///< indices of its channels' properties, in order
};

/// The attributes of an element named `element` ("vertex", "face") whose properties are
/// `names` in file order; an empty name marks a property already used (x, a list ...).
std::vector<PlyAttributeGroup> ply_attribute_groups(const std::string& element, const std::vector<std::string>& names);

}  // namespace kiln::render
