// Mitsuba 3's rules for naming a PLY element's other properties as mesh attributes.
#include "shapes/ply_attributes.h"

#include <algorithm>
#include <set>

namespace kiln::render {
namespace {

/// The channel suffixes of each kind of group: x y z w, r g b a, 0 1 2 3, 1 2 3 4.
constexpr const char* kSuffixes[] = {"xyzw", "rgba", "0123", "1234"};
constexpr size_t kRgb = 1;

/// The index of `name` among `names`, or names.size().
size_t find(const std::vector<std::string>& names, const std::string& name) {
  return size_t(std::find(names.begin(), names.end(), name) - names.begin());
}

}  // namespace

std::vector<PlyAttributeGroup> ply_attribute_groups(const std::string& element, const std::vector<std::string>& names) {
  std::vector<PlyAttributeGroup> groups;
  std::set<size_t> taken;
  // A color without prefix: r g b [a], or red green blue [alpha].
  for (const auto& channels : {std::vector<std::string>{"r", "g", "b", "a"}, {"red", "green", "blue", "alpha"}}) {
    size_t r = find(names, channels[0]), g = find(names, channels[1]), b = find(names, channels[2]),
           a = find(names, channels[3]);
    if (r == names.size() || g == names.size() || b == names.size()) continue;
    PlyAttributeGroup color{element + "_color", {r, g, b}};
    if (a < names.size()) color.properties.push_back(a);
    taken.insert(color.properties.begin(), color.properties.end());
    groups.push_back(color);
    break;
  }
  // Runs of `<prefix>_<suffix>` with the suffixes of one kind in order.
  std::set<std::string> prefixes;
  for (size_t k = 0; k < names.size();) {
    size_t split = names[k].rfind('_');
    if (names[k].empty() || taken.count(k) || split == std::string::npos || split + 2 != names[k].size()) {
      ++k;
      continue;
    }
    std::string prefix = names[k].substr(0, split);
    const char* kind = nullptr;
    size_t kind_index = 0;
    for (size_t s = 0; s < 4; ++s)
      if (names[k].back() == kSuffixes[s][0]) kind = kSuffixes[s], kind_index = s;
    size_t length = 0;
    while (kind && length < 4 && k + length < names.size() && !taken.count(k + length) &&
           names[k + length] == prefix + "_" + kind[length])
      ++length;
    if (kind && (length == 1 || length == 3) && prefixes.insert(prefix).second) {
      PlyAttributeGroup group{element + "_" + prefix + (kind_index == kRgb ? "_color" : ""), {}};
      for (size_t c = 0; c < length; ++c) group.properties.push_back(k + c);
      groups.push_back(group);
    }
    k += std::max<size_t>(length, 1);
  }
  return groups;
}

}  // namespace kiln::render
