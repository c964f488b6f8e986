// Parameter checks shared by plugins, and their error format.
#include "core/parameter_checks.h"

#include <kiln/errors.h>
#include <kiln/render/file_resolver.h>

#include <algorithm>
#include <cmath>

namespace kiln::render {

namespace {
/// "kiln.render: <kind> '<plugin>' (<source>): '<name>'".
std::string context(PluginKind kind, const std::string& plugin, const std::string& source, const std::string& name) {
  return "kiln.render: " + std::string(kind_tag(kind)) + " '" + plugin + "' (" + source + "): '" + name + "'";
}
}  // namespace

std::string parameter_context(const Properties& props, const std::string& name) {
  return context(props.kind(), props.plugin(), props.source(), name) + " (" + props.source_of(name) + ")";
}

void throw_parameter_error(const Properties& props, const std::string& name, const std::string& message) {
  throw ValueError(parameter_context(props, name) + " " + message);
}

void throw_parameter_error(const Object& object, const std::string& name, const std::string& message) {
  throw ValueError(context(object.kind(), object.plugin(), object.source(), name) + " " + message);
}

void throw_plugin_error(const Properties& props, const std::string& message) {
  throw ValueError("kiln.render: " + std::string(kind_tag(props.kind())) + " '" + props.plugin() + "' (" +
                   props.source() + "): " + message);
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

std::string file_parameter(const Properties& props, const std::string& name) {
  return file_resolver().resolve(props.get_string(name)).string();
}

Bitmap image_parameter(const Properties& props, const std::string& name, bool raw) {
  std::string path = file_parameter(props, name);
  try {
    return read_image(path, raw);
  } catch (const FileError& e) {
    std::string why = e.what();  // "kiln.render: <path>: <what failed>"
    const std::string prefix = "kiln.render: ";
    if (why.compare(0, prefix.size(), prefix) == 0) why.erase(0, prefix.size());
    throw FileError(parameter_context(props, name) + ": " + why);
  }
}

Bitmap image_source(const Properties& props, bool raw) {
  std::vector<std::string> given;
  for (const char* name : {"filename", "data", "bitmap"})
    if (props.has(name)) given.push_back(name);
  if (given.size() != 1)
    throw_plugin_error(props, given.empty()
                                  ? "needs an image: 'filename', or 'data' (a TensorXf) or 'bitmap' (a "
                                    "Bitmap) in load_dict"
                                  : "takes one image: '" + given[0] + "' and '" + given[1] + "' exclude each other");
  if (given[0] == "filename") return image_parameter(props, "filename", raw);
  const ImageValue& image = props.get_image(given[0]);
  if (image->width == 0 || image->height == 0 || image->pixels.size() != image->width * image->height * image->channels)
    throw_parameter_error(props, given[0], "is an empty or inconsistent image");
  return *image;
}

}  // namespace kiln::render
