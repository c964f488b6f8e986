// Parameter checks shared by plugins, and their error format.
#include "core/parameter_checks.h"

#include <kiln/errors.h>

#include <algorithm>
#include <cmath>

namespace kiln::render {

void throw_parameter_error(const Properties& props, const std::string& name, const std::string& message) {
  throw ValueError("kiln.render: " + std::string(kind_tag(props.kind())) + " '" + props.plugin() + "' (" +
                   props.source() + "): '" + name + "' (" + props.source_of(name) + ") " + message);
}

float positive_float(const Properties& props, const std::string& name, double fallback) {
  double value = props.get_float(name, fallback);
  if (!(value > 0.0) || !std::isfinite(value))
    throw_parameter_error(props, name, "must be a positive number, got " + std::to_string(value));
  return float(value);
}

std::string one_of(const Properties& props, const std::string& name, const std::string& fallback,
                   const std::vector<std::string>& accepted) {
  std::string value = props.get_string(name, fallback);
  if (std::find(accepted.begin(), accepted.end(), value) != accepted.end()) return value;
  std::string list;
  for (const std::string& option : accepted) list += (list.empty() ? "\"" : ", \"") + option + "\"";
  throw_parameter_error(props, name, "is \"" + value + "\"; accepted: " + list);
}

}  // namespace kiln::render
