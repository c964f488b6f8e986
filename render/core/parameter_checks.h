// Checks plugins apply to their parameters, with errors in one format: the plugin, where
// it was declared, the parameter, where that came from, and what is accepted.
#pragma once

#include <kiln/render/image.h>
#include <kiln/render/properties.h>

#include <string>
#include <vector>

namespace kiln::render {

/// "kiln.render: <kind> '<plugin>' (<source>): '<name>' (<its source>)": how errors about
/// parameter `name` begin.
std::string parameter_context(const Properties& props, const std::string& name);
/// ValueError "<parameter_context> <message>".
[[noreturn]] void throw_parameter_error(const Properties& props, const std::string& name, const std::string& message);
/// The same for a parameter changed after loading (through traverse()), naming the object.
[[noreturn]] void throw_parameter_error(const Object& object, const std::string& name, const std::string& message);

/// ValueError "kiln.render: <kind> '<plugin>' (<source>): <message>", for errors about the
/// parameters together (which nested objects, which combination) rather than one of them.
[[noreturn]] void throw_plugin_error(const Properties& props, const std::string& message);

/// The float `name` (or `fallback`), which must be positive and finite.
float positive_float(const Properties& props, const std::string& name, double fallback);

/// The string `name` (or `fallback`), which must be one of `accepted` (listed in the error).
std::string one_of(const Properties& props, const std::string& name, const std::string& fallback,
                   const std::vector<std::string>& accepted);

/// The file the string `name` names, found through the file resolver (file_resolver.h).
std::string file_parameter(const Properties& props, const std::string& name);
/// The image file the string `name` names (read_image(), found as file_parameter()); its
/// FileError also names the plugin and the parameter.
Bitmap image_parameter(const Properties& props, const std::string& name, bool raw);
/// The image a `bitmap` texture or an `envmap` reads: the file `filename` (read with
/// `raw`), or one given in memory as `data` or `bitmap` (linear values, already as the
/// caller wants them); exactly one of the three.
Bitmap image_source(const Properties& props, bool raw);

}  // namespace kiln::render
