// Named indices of refraction and the int_ior / ext_ior parameters of dielectric BSDFs.
#include <kiln/errors.h>
#include <kiln/render/ior.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <optional>
#include <sstream>

#include "core/parameter_checks.h"

namespace kiln::render {
namespace {

std::string to_lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return text;
}

/// The table's index for `name` (any case), if it has one.
std::optional<float> find_ior(const std::string& name) {
  std::string key = to_lower(name);
  for (const auto& [entry, value] : ior_table())
    if (entry == key) return value;
  return std::nullopt;
}

std::string known_names() {
  std::string names;
  for (const auto& [name, value] : ior_table()) names += (names.empty() ? "\"" : ", \"") + name + "\"";
  return names;
}

/// Parameter `name`: a number, or a material name from the table; `fallback` when absent.
float ior_parameter(const Properties& props, const std::string& name, const std::string& fallback) {
  float ior = 0;
  if (!props.has(name)) return lookup_ior(fallback);
  const Properties::Value& value = props.get(name);
  if (const auto* text = std::get_if<std::string>(&value)) {
    std::optional<float> found = find_ior(*text);
    if (!found)
      throw_parameter_error(props, name,
                            "names no known material: \"" + *text + "\"; give a number or one of " + known_names());
    ior = *found;
  } else if (std::holds_alternative<double>(value) || std::holds_alternative<int64_t>(value)) {
    ior = float(props.get_float(name));
  } else {
    throw TypeError(props.describe(name) +
                    ": expected an index of refraction (float) or a material name (string), found " +
                    describe_value(value));
  }
  if (!(ior > 0) || !std::isfinite(ior)) {
    std::ostringstream got;
    got << ior;
    throw_parameter_error(props, name, "must be a positive index of refraction, got " + got.str());
  }
  return ior;
}

}  // namespace

const std::vector<std::pair<std::string, float>>& ior_table() {
  static const std::vector<std::pair<std::string, float>> table = {
      {"vacuum", 1.0f},      {"helium", 1.000036f},        {"hydrogen", 1.000132f},
      {"air", 1.000277f},    {"carbon dioxide", 1.00045f}, {"water", 1.3330f},
      {"acetone", 1.36f},    {"ethanol", 1.361f},          {"carbon tetrachloride", 1.461f},
      {"glycerol", 1.4729f}, {"benzene", 1.501f},          {"silicone oil", 1.52045f},
      {"bromine", 1.661f},   {"water ice", 1.31f},         {"fused quartz", 1.458f},
      {"pyrex", 1.470f},     {"acrylic glass", 1.49f},     {"polypropylene", 1.49f},
      {"bk7", 1.5046f},      {"sodium chloride", 1.544f},  {"amber", 1.55f},
      {"pet", 1.5750f},      {"diamond", 2.419f},
  };
  return table;
}

float lookup_ior(const std::string& name) {
  if (std::optional<float> found = find_ior(name)) return *found;
  throw ValueError("kiln.render: no index of refraction is known for \"" + name +
                   "\"; known materials: " + known_names());
}

InterfaceIor interface_ior(const Properties& props, const std::string& default_int_ior) {
  return {ior_parameter(props, "int_ior", default_int_ior), ior_parameter(props, "ext_ior", "air")};
}

void require_refracting(const Properties& props, const InterfaceIor& ior) {
  if (ior.int_ior != ior.ext_ior) return;
  std::ostringstream text;
  text << "int_ior (" << props.source_of("int_ior") << ") and ext_ior (" << props.source_of("ext_ior") << ") are both "
       << ior.int_ior << ": the indices must differ (use a smooth BSDF or none for an interface "
       << "that does not refract)";
  throw_plugin_error(props, text.str());
}

}  // namespace kiln::render
