// Reading scene files: Mitsuba 3's XML format (version 3) turned into a scene description
// (scene_description.h), which instantiate() then builds. Start reading the loader here;
// render/scene/xml.cpp holds the format's rules.
//
// What an implementation guarantees:
// - The format as Mitsuba 3 reads it: object tags (scene shape bsdf emitter texture sensor
//   film rfilter sampler integrator) with `type`, `id` and `name`; value tags (float
//   integer boolean string rgb spectrum point vector transform); `<ref>`, `<include>`,
//   `<default>`, `<path>`; `$name` substitution in every attribute, where the `defaults`
//   given here override the file's `<default>`s and `\$` is a literal dollar sign.
// - `<transform>` composes its children in order, each multiplying on the left, in double
//   precision; a `<rotate>` axis is used as given (not normalized), as in Mitsuba.
// - A `filename` string parameter is made absolute: relative to the directory of the XML
//   file that holds it, else to a `<path>` folder, else to the top file's directory (the
//   first where the file exists; the XML file's directory when none has it).
// - RGB only: `<spectrum>` with a single value is a gray RGB; spectral data is an error.
//   Volumes (`<medium>`, `<volume>`, `<phase>`) are an error.
// - An error about an element names the file and line, the element, and the plugin it
//   sits in: FileError for a file that is missing or not well-formed XML, ValueError for
//   anything else (a malformed string included). A load-time default that no attribute uses is an
//   error too, so a misspelt name does not pass unnoticed.
#pragma once

#include <kiln/render/scene_description.h>

#include <map>
#include <string>

namespace kiln::render {

/// The scene description in the XML file `path`; `defaults` give `$name` values.
PluginNode parse_xml_file(const std::string& path, const std::map<std::string, std::string>& defaults = {});
/// The scene description in `xml` (relative paths start from the working directory).
PluginNode parse_xml_string(const std::string& xml, const std::map<std::string, std::string>& defaults = {});

}  // namespace kiln::render
