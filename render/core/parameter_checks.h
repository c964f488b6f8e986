// Checks plugins apply to their parameters, with errors in one format: the plugin, where
// it was declared, the parameter, where that came from, and what is accepted.
#pragma once

#include <kiln/render/properties.h>

#include <string>

namespace kiln::render {

/// ValueError "kiln.render: <kind> '<plugin>' (<source>): '<name>' (<its source>) <message>".
[[noreturn]] void throw_parameter_error(const Properties& props, const std::string& name, const std::string& message);

/// The float `name` (or `fallback`), which must be positive and finite.
float positive_float(const Properties& props, const std::string& name, double fallback);

/// The string `name` (or `fallback`), which must be one of `accepted` (listed in the error).
std::string one_of(const Properties& props, const std::string& name, const std::string& fallback,
                   const std::vector<std::string>& accepted);

}  // namespace kiln::render
