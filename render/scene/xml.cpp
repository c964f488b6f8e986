// Mitsuba 3's XML scene format, read with pugixml into a scene description: one walk over
// the elements that substitutes `$name`s, turns object tags into nodes and value tags into
// parameters, composes transforms and follows includes. Errors name file:line, the element
// and the plugin it sits in.
#include <kiln/errors.h>
#include <kiln/render/file_resolver.h>
#include <kiln/render/load.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>
#include <pugixml.hpp>
#include <set>
#include <sstream>

#include "scene/matrix4d.h"

namespace kiln::render {
namespace {

namespace fs = std::filesystem;

/// One XML text being read: its name in messages, the directory its relative paths start
/// from, and where its lines start (pugixml reports byte offsets).
class XmlText {
 public:
  XmlText(std::string label, fs::path directory, const std::string& content)
      : label_(std::move(label)), directory_(std::move(directory)) {
    for (size_t i = 0; i < content.size(); ++i)
      if (content[i] == '\n') line_starts_.push_back(i + 1);
  }
  const std::string& label() const { return label_; }
  const fs::path& directory() const { return directory_; }
  /// "scene.xml:12" for the byte at `offset`.
  std::string where(ptrdiff_t offset) const {
    size_t line = std::upper_bound(line_starts_.begin(), line_starts_.end(), size_t(std::max<ptrdiff_t>(offset, 0))) -
                  line_starts_.begin();
    return label_ + ":" + std::to_string(line);
  }
  std::string where(pugi::xml_node node) const { return where(node.offset_debug()); }

 private:
  std::string label_;
  fs::path directory_;
  std::vector<size_t> line_starts_ = {0};
};

/// An element being read and the plugin node it belongs to (nullptr for a root element):
/// what an error message names.
struct Site {
  const XmlText& text;
  pugi::xml_node element;
  const PluginNode* plugin;

  std::string where() const { return text.where(element); }
};

/// `<float name="alpha">`, or `<rotate> in <transform name="to_world">`.
std::string describe_element(pugi::xml_node element) {
  std::string text = std::string("<") + element.name();
  if (pugi::xml_attribute name = element.attribute("name")) text += std::string(" name=\"") + name.value() + "\"";
  text += ">";
  if (std::string_view(element.parent().name()) == "transform") text += " in " + describe_element(element.parent());
  return text;
}

/// "kiln.render: <file:line>: <element> in <plugin>": how errors about the site begin.
std::string context_of(const Site& site) {
  std::string context = site.where() + ": " + describe_element(site.element);
  if (site.plugin)
    context += " in " + describe_plugin(site.plugin->kind, site.plugin->plugin, site.plugin->id, site.plugin->source);
  return "kiln.render: " + context;
}

/// Throws `Error` naming the site's file:line, element and plugin, then `problem`.
template <typename Error = ValueError> [[noreturn]] void fail(const Site& site, const std::string& problem) {
  throw Error(context_of(site) + ": " + problem);
}

/// Fails unless every attribute of the element is in `required` or `optional` and every
/// one in `required` is there.
void check_attributes(const Site& site, std::initializer_list<std::string_view> required,
                      std::initializer_list<std::string_view> optional) {
  for (pugi::xml_attribute attribute : site.element.attributes()) {
    std::string_view name = attribute.name();
    if (std::find(required.begin(), required.end(), name) != required.end()) continue;
    if (std::find(optional.begin(), optional.end(), name) != optional.end()) continue;
    std::string accepted;
    for (auto list : {required, optional})
      for (std::string_view known : list) accepted += (accepted.empty() ? "" : ", ") + std::string(known);
    fail(site, "unexpected attribute '" + std::string(name) + "' (accepted: " + accepted + ")");
  }
  for (std::string_view name : required)
    if (!site.element.attribute(std::string(name).c_str()))
      fail(site, "the attribute '" + std::string(name) + "' is missing");
}

/// Fails when `node`, a child of the element at `site`, is text other than white space
/// (pugixml drops comments).
void check_not_text(const Site& site, pugi::xml_node node) {
  if (node.type() != pugi::node_pcdata && node.type() != pugi::node_cdata) return;
  std::string_view value = node.value();
  auto is_space = [](unsigned char c) { return std::isspace(c) != 0; };
  auto first = std::find_if_not(value.begin(), value.end(), is_space);
  if (first == value.end()) return;
  auto last = std::find_if_not(value.rbegin(), value.rend(), is_space).base();
  fail(site, "unexpected text '" + std::string(first, last) + "' (values go in attributes)");
}

/// Fails when a value element has elements inside it.
void check_no_children(const Site& site) {
  for (pugi::xml_node child : site.element.children()) {
    check_not_text(site, child);
    if (child.type() == pugi::node_element)
      fail(site, std::string("unexpected <") + child.name() + "> inside a value element");
  }
}

/// The words of an attribute value, split at white space and commas.
std::vector<std::string_view> split_words(std::string_view text) {
  std::vector<std::string_view> words;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i < text.size() && !std::isspace((unsigned char)text[i]) && text[i] != ',') continue;
    if (i > start) words.push_back(text.substr(start, i - start));
    start = i + 1;
  }
  return words;
}

/// `word` as a number (a leading '+' allowed), or nullopt.
std::optional<double> to_number(std::string_view word) {
  if (!word.empty() && word[0] == '+') word.remove_prefix(1);
  double value = 0;
  auto [end, error] = std::from_chars(word.data(), word.data() + word.size(), value);
  if (word.empty() || error != std::errc() || end != word.data() + word.size()) return std::nullopt;
  return value;
}

/// The numbers in attribute `name`; fails unless there are as many as one of `counts`
/// (any number when `counts` is empty).
std::vector<double> parse_numbers(const Site& site, const char* name, std::initializer_list<size_t> counts) {
  std::string_view text = site.element.attribute(name).value();
  std::vector<double> numbers;
  for (std::string_view word : split_words(text)) {
    std::optional<double> number = to_number(word);
    if (!number)
      fail(site, "'" + std::string(word) + "' in " + name + "=\"" + std::string(text) + "\" is not a number");
    numbers.push_back(*number);
  }
  if (counts.size() != 0 && std::find(counts.begin(), counts.end(), numbers.size()) == counts.end()) {
    std::string expected;
    for (size_t count : counts) expected += (expected.empty() ? "" : " or ") + std::to_string(count);
    fail(site, std::string(name) + "=\"" + std::string(text) + "\" has " + std::to_string(numbers.size()) +
                   " numbers, expected " + expected);
  }
  return numbers;
}

/// A 3-vector from `value` (one number for all three, or three) or from `x`, `y`, `z`
/// (each `fallback` when missing, unless `all_required`).
Vector3d parse_xyz(const Site& site, double fallback, bool all_required) {
  const pugi::xml_node& element = site.element;
  if (element.attribute("value")) {
    if (element.attribute("x") || element.attribute("y") || element.attribute("z"))
      fail(site, "give either value or x, y, z, not both");
    std::vector<double> numbers = parse_numbers(site, "value", {1, 3});
    if (numbers.size() == 1) return {numbers[0], numbers[0], numbers[0]};
    return {numbers[0], numbers[1], numbers[2]};
  }
  Vector3d result{fallback, fallback, fallback};
  const char* axes[3] = {"x", "y", "z"};
  for (int i = 0; i < 3; ++i) {
    if (element.attribute(axes[i]))
      result[i] = parse_numbers(site, axes[i], {1})[0];
    else if (all_required)
      fail(site, std::string("needs value=\"...\" or all of x, y, z (") + axes[i] + " is missing)");
  }
  return result;
}

/// The three numbers in attribute `name`.
Vector3d parse_vector3(const Site& site, const char* name) {
  std::vector<double> numbers = parse_numbers(site, name, {3});
  return {numbers[0], numbers[1], numbers[2]};
}

/// One child of a `<transform>` as a matrix.
Matrix4d parse_transform_step(const Site& site) {
  std::string_view tag = site.element.name();
  if (tag == "translate") {
    check_attributes(site, {}, {"value", "x", "y", "z"});
    return matrix4d::translate(parse_xyz(site, 0.0, false));
  }
  if (tag == "scale") {
    check_attributes(site, {}, {"value", "x", "y", "z"});
    return matrix4d::scale(parse_xyz(site, 1.0, false));
  }
  if (tag == "rotate") {
    check_attributes(site, {"angle"}, {"value", "x", "y", "z"});
    Vector3d axis = parse_xyz(site, 0.0, false);
    if (axis[0] == 0 && axis[1] == 0 && axis[2] == 0) fail(site, "the rotation axis is zero");
    return matrix4d::rotate(axis, parse_numbers(site, "angle", {1})[0]);
  }
  if (tag == "matrix") {
    check_attributes(site, {"value"}, {});
    std::vector<double> numbers = parse_numbers(site, "value", {16, 9});
    if (numbers.size() == 16) {
      Matrix4d matrix{};
      std::copy(numbers.begin(), numbers.end(), matrix.begin());
      return matrix;
    }
    Matrix4d matrix = matrix4d::identity();
    for (int row = 0; row < 3; ++row)
      for (int column = 0; column < 3; ++column) matrix[row * 4 + column] = numbers[row * 3 + column];
    return matrix;
  }
  if (tag == "lookat") {
    check_attributes(site, {"origin", "target"}, {"up"});
    Vector3d origin = parse_vector3(site, "origin"), target = parse_vector3(site, "target");
    Vector3d up = site.element.attribute("up") ? parse_vector3(site, "up") : Vector3d{0, 0, 0};
    Matrix4d matrix = matrix4d::look_at(origin, target, up);
    if (std::any_of(matrix.begin(), matrix.end(), [](double x) { return std::isnan(x); }))
      fail(site, "origin and target coincide, or up is parallel to the viewing direction");
    return matrix;
  }
  fail(site, "is not a transform step (accepted: translate, rotate, scale, matrix, lookat)");
}

/// "3.0.0" → 3; nullopt unless the version is one to three dot-separated numbers.
std::optional<int> major_version(std::string_view version) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  for (size_t dot; (dot = version.find('.', start)) != std::string_view::npos; start = dot + 1)
    parts.push_back(version.substr(start, dot - start));
  parts.push_back(version.substr(start));
  if (parts.size() > 3) return std::nullopt;
  for (std::string_view part : parts)
    if (part.empty() || !std::all_of(part.begin(), part.end(), [](unsigned char c) { return std::isdigit(c); }))
      return std::nullopt;
  int major = 0;
  std::from_chars(parts[0].data(), parts[0].data() + parts[0].size(), major);
  return major;
}

/// The kind an object tag makes ("bsdf" → Bsdf), or nullopt.
std::optional<PluginKind> object_kind(std::string_view tag) {
  for (PluginKind kind : {PluginKind::Scene, PluginKind::Shape, PluginKind::Bsdf, PluginKind::Emitter,
                          PluginKind::Texture, PluginKind::Sensor, PluginKind::Film, PluginKind::Filter,
                          PluginKind::Sampler, PluginKind::Integrator, PluginKind::Volume})
    if (tag == kind_tag(kind)) return kind;
  return std::nullopt;
}

/// The content of a scene file; FileError when it cannot be read.
std::string read_file(const fs::path& path) {
  std::ifstream stream(path, std::ios::binary);
  if (!stream || fs::is_directory(path))
    throw FileError("kiln.render: cannot read the scene file '" + path.string() + "'" +
                    (fs::exists(path) ? "" : " (no such file)"));
  std::ostringstream content;
  content << stream.rdbuf();
  return content.str();
}

/// Reads one scene: the top text and every file it includes, with the `$name` values in
/// force and the `<path>` folders declared so far.
class XmlParser {
 public:
  XmlParser(const std::map<std::string, std::string>& defaults, fs::path top_directory)
      : parameters_(defaults), top_directory_(std::move(top_directory)) {
    for (const auto& [name, value] : defaults) unused_defaults_.insert(name);
  }

  /// The scene in file `path`, called `label` in messages.
  PluginNode parse_file(const fs::path& path, const std::string& label) {
    std::string content = read_file(path);
    open_files_.push_back(fs::weakly_canonical(path));
    PluginNode root = parse_document(content, XmlText(label, fs::absolute(path).parent_path(), content), true);
    open_files_.pop_back();
    return root;
  }

  /// The scene in `content`, whose relative paths start from the working directory.
  PluginNode parse_string(const std::string& content) {
    return parse_document(content, XmlText("<string>", fs::current_path(), content), false);
  }

  /// Fails when a load-time default was never substituted.
  void check_defaults_used() const {
    if (unused_defaults_.empty()) return;
    std::string names;
    for (const std::string& name : unused_defaults_) names += (names.empty() ? "'" : ", '") + name + "'";
    throw ValueError("kiln.render: the scene uses no $name for the load-time parameter(s) " + names +
                     " (check the spelling against the scene's $names)");
  }

 private:
  /// The root node of one XML text, after the checks on its root element and version.
  PluginNode parse_document(const std::string& content, const XmlText& text, bool from_file) {
    pugi::xml_document document;
    // As a fragment, so that text outside the root element is kept (and reported below).
    pugi::xml_parse_result result = document.load_buffer(
        content.data(), content.size(), pugi::parse_default | pugi::parse_fragment, pugi::encoding_utf8);
    if (!result) {
      std::string message = "kiln.render: " + text.where(result.offset) + ": malformed XML: " + result.description();
      if (from_file) throw FileError(message);
      throw ValueError(message);
    }
    pugi::xml_node root = document.document_element();
    if (!root) throw ValueError("kiln.render: " + text.label() + ": no root element (e.g. <scene version=\"3.0.0\">)");
    Site site{text, root, nullptr};
    for (pugi::xml_node node : document.children()) {
      check_not_text(site, node);
      if (node.type() == pugi::node_element && node != root)
        fail(Site{text, node, nullptr}, "a second root element (a scene file has one)");
    }
    substitute(site);
    std::optional<PluginKind> kind = object_kind(root.name());
    if (!kind) fail(site, "the root element must be <scene> or another object tag");
    pugi::xml_attribute version = root.attribute("version");
    if (!version) fail(site, "the attribute 'version' is missing (e.g. version=\"3.0.0\")");
    std::optional<int> major = major_version(version.value());
    if (!major) fail(site, std::string("version=\"") + version.value() + "\" is not a version number");
    if (*major != 2 && *major != 3)
      fail(site, std::string("version ") + version.value() +
                     " is not supported: kiln.render reads Mitsuba 3's format (versions 2.x and 3.x)");
    return parse_object(site, *kind);
  }

  /// The node of an object element (of `kind`) with everything nested in it.
  PluginNode parse_object(const Site& site, PluginKind kind) {
    bool is_root = site.plugin == nullptr;
    if (is_root && kind == PluginKind::Scene)
      check_attributes(site, {"version"}, {"type", "id"});
    else if (is_root)
      check_attributes(site, {"version", "type"}, {"id"});
    else
      check_attributes(site, {"type"}, {"id", "name"});
    pugi::xml_attribute type = site.element.attribute("type");
    PluginNode node{kind, type ? type.value() : "scene", site.element.attribute("id").value(), "", site.where(), {}};
    size_t unnamed = 0;
    for (pugi::xml_node child : site.element.children()) {
      check_not_text(site, child);
      if (child.type() == pugi::node_element) parse_child(Site{site.text, child, &node}, node, unnamed, is_root);
    }
    return node;
  }

  /// The element's `name`, or the next "_arg_<unnamed>" when it has none (as Mitsuba names
  /// unnamed children).
  static std::string parameter_name(const Site& site, size_t& unnamed) {
    pugi::xml_attribute name = site.element.attribute("name");
    return name ? std::string(name.value()) : "_arg_" + std::to_string(unnamed++);
  }

  /// Reads the element `site.element` into `parent`, its plugin node; `unnamed` counts the node's
  /// unnamed children ("_arg_0", ...); `in_root` says whether the parent is the root.
  void parse_child(const Site& site, PluginNode& parent, size_t& unnamed, bool in_root) {
    substitute(site);
    pugi::xml_attribute name = site.element.attribute("name");
    if (name && std::string_view(name.value()).empty()) fail(site, "the name is empty");
    std::string_view tag = site.element.name();
    if (std::optional<PluginKind> kind = object_kind(tag)) {
      if (*kind == PluginKind::Scene) fail(site, "<scene> can only be the root element");
      parent.add_child(parameter_name(site, unnamed), parse_object(site, *kind));
    } else if (tag == "ref") {
      check_attributes(site, {"id"}, {"name"});
      check_no_children(site);
      parent.add_reference(parameter_name(site, unnamed),
                           Reference{site.element.attribute("id").value(), site.where()});
    } else if (tag == "include") {
      include(site, parent, unnamed);
    } else if (tag == "default") {
      check_attributes(site, {"name", "value"}, {});
      check_no_children(site);
      parameters_.emplace(name.value(), site.element.attribute("value").value());
    } else if (tag == "path") {
      add_search_path(site, in_root);
    } else if (tag == "medium" || tag == "phase") {
      fail(site, "is not supported (participating media are out of scope for kiln.render)");
    } else if (tag == "alias") {
      fail(site, "is not supported (give the object the id that references use)");
    } else if (tag == "translate" || tag == "rotate" || tag == "scale" || tag == "matrix" || tag == "lookat") {
      fail(site, "can only appear inside a <transform>");
    } else {
      Properties::Value value = parse_value(site);
      parent.add_value(name.value(), std::move(value), site.where());
    }
  }

  /// A value element (`<float>`, `<rgb>`, ...) as a parameter value.
  /// `<spectrum type="..." name="...">` with its `<float>` parameters (`scale` of a `d65`),
  /// as scene_description.h's rules make it.
  Color3d spectrum_plugin_value(const Site& site) {
    check_attributes(site, {"name", "type"}, {});
    auto read_parameters = [&] {
      std::vector<std::pair<std::string, double>> parameters;
      for (pugi::xml_node child : site.element.children()) {
        check_not_text(site, child);
        if (child.type() != pugi::node_element) continue;
        Site child_site{site.text, child, site.plugin};
        substitute(child_site);
        if (std::string_view(child.name()) != "float") fail(child_site, "a spectrum's parameters are <float> elements");
        check_attributes(child_site, {"name", "value"}, {});
        check_no_children(child_site);
        parameters.emplace_back(child.attribute("name").value(), parse_numbers(child_site, "value", {1})[0]);
      }
      return parameters;
    };
    return spectrum_plugin(site.element.attribute("type").value(), read_parameters, context_of(site));
  }

  Properties::Value parse_value(const Site& site) {
    std::string_view tag = site.element.name();
    auto attribute = [&](const char* name) { return std::string(site.element.attribute(name).value()); };
    if (tag == "transform") {
      check_attributes(site, {"name"}, {});
      Matrix4d matrix = matrix4d::identity();
      for (pugi::xml_node step : site.element.children()) {
        check_not_text(site, step);
        if (step.type() != pugi::node_element) continue;
        Site step_site{site.text, step, site.plugin};
        substitute(step_site);
        check_no_children(step_site);
        matrix = matrix4d::multiply(parse_transform_step(step_site), matrix);
      }
      return matrix;
    }
    bool is_value_tag = tag == "float" || tag == "integer" || tag == "boolean" || tag == "string" || tag == "rgb" ||
                        tag == "spectrum" || tag == "point" || tag == "vector";
    if (!is_value_tag)
      fail(site,
           "is not an element of Mitsuba 3's scene format that kiln.render reads (objects: scene, shape, bsdf, "
           "emitter, texture, volume, sensor, film, rfilter, sampler, integrator; values: float, integer, boolean, "
           "string, "
           "rgb, spectrum, point, vector, transform; also ref, include, default, path)");
    if (tag == "spectrum" && site.element.attribute("type")) return spectrum_plugin_value(site);
    check_no_children(site);
    if (tag == "point" || tag == "vector") {
      check_attributes(site, {"name"}, {"value", "x", "y", "z"});
      return Vector3d{parse_xyz(site, 0.0, true)};
    }
    if (tag == "spectrum") {
      if (site.element.attribute("filename")) refuse_spectral_data(context_of(site) + " (a file of wavelengths)");
      check_attributes(site, {"name", "value"}, {});
      std::string where = context_of(site) + " value=\"" + attribute("value") + "\"";
      std::vector<double> numbers;
      for (std::string_view word : split_words(site.element.attribute("value").value())) {
        std::optional<double> number = to_number(word);  // "400:0.5" pairs are wavelengths
        if (!number) refuse_spectral_data(where);
        numbers.push_back(*number);
      }
      return spectrum_value(numbers, where);
    }
    check_attributes(site, {"name", "value"}, {});
    std::string value = attribute("value");
    if (tag == "float") return parse_numbers(site, "value", {1})[0];
    if (tag == "rgb") return rgb_value(parse_numbers(site, "value", {}), context_of(site));
    if (tag == "integer") {
      std::vector<std::string_view> words = split_words(value);
      int64_t integer = 0;
      std::string_view word = words.size() == 1 ? words[0] : std::string_view();
      if (!word.empty() && word[0] == '+') word.remove_prefix(1);
      auto [end, error] = std::from_chars(word.data(), word.data() + word.size(), integer);
      if (word.empty() || error != std::errc() || end != word.data() + word.size())
        fail(site, "value=\"" + value + "\" is not an integer (64-bit)");
      return integer;
    }
    if (tag == "boolean") {
      std::string lower = value;
      std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
      if (lower != "true" && lower != "false") fail(site, "value=\"" + value + "\" is not true or false");
      return lower == "true";
    }
    if (attribute("name") == "filename") return resolve(value, site.text).string();
    return value;
  }

  /// `<include filename="..." [name="..."]>`: the included file's objects join the parent
  /// (a scene root's children one by one, another root as one child).
  void include(const Site& site, PluginNode& parent, size_t& unnamed) {
    check_attributes(site, {"filename"}, {"name"});
    check_no_children(site);
    fs::path path = resolve(site.element.attribute("filename").value(), site.text);
    if (!fs::is_regular_file(path)) fail<FileError>(site, "the included file '" + path.string() + "' does not exist");
    fs::path canonical = fs::weakly_canonical(path);
    if (std::find(open_files_.begin(), open_files_.end(), canonical) != open_files_.end()) {
      std::string chain;
      for (const fs::path& file : open_files_) chain += file.string() + " -> ";
      fail(site, "the includes form a cycle: " + chain + canonical.string());
    }
    PluginNode included = parse_file(path, path.string());
    if (included.kind != PluginKind::Scene) {
      parent.add_child(parameter_name(site, unnamed), std::move(included));
      return;
    }
    if (site.element.attribute("name"))
      fail(site, "name=\"...\" applies only to an included file whose root is an object, not a <scene>");
    for (NodeParameter& parameter : included.parameters) {
      if (parameter.name.starts_with("_arg_")) parameter.name = "_arg_" + std::to_string(unnamed++);
      parent.parameters.push_back(std::move(parameter));
    }
  }

  /// `<path value="folder">`: a folder searched for included and referenced files.
  void add_search_path(const Site& site, bool in_root) {
    check_attributes(site, {"value"}, {});
    check_no_children(site);
    if (!in_root) fail(site, "can only be a child of the root element");
    fs::path folder = (site.text.directory() / site.element.attribute("value").value()).lexically_normal();
    if (!fs::is_directory(folder)) fail<FileError>(site, "the folder '" + folder.string() + "' does not exist");
    search_paths_.insert(search_paths_.begin(), folder);
  }

  /// `name` made absolute: the first of the XML text's directory, the `<path>` folders
  /// (latest first), the top file's directory and the file resolver's folders where it
  /// exists; else in the text's directory.
  fs::path resolve(const std::string& name, const XmlText& text) const {
    std::vector<fs::path> folders = {text.directory()};
    folders.insert(folders.end(), search_paths_.begin(), search_paths_.end());
    folders.push_back(top_directory_);
    for (const fs::path& folder : file_resolver().folders()) folders.push_back(folder);
    for (const fs::path& folder : folders)
      if (fs::path candidate = (folder / name).lexically_normal(); fs::exists(candidate)) return candidate;
    return (text.directory() / name).lexically_normal();
  }

  /// Replaces every `$name` in the element's attributes by its value (the longest defined
  /// name that matches); `\$` stays a literal '$'.
  void substitute(const Site& site) {
    for (pugi::xml_attribute attribute : site.element.attributes()) {
      std::string_view text = attribute.value();
      if (text.find('$') == std::string_view::npos) continue;
      std::string result;
      for (size_t i = 0; i < text.size(); ++i) {
        if (text[i] == '\\' && i + 1 < text.size() && text[i + 1] == '$') {
          result += '$';
          ++i;
        } else if (text[i] != '$') {
          result += text[i];
        } else {
          const std::pair<const std::string, std::string>* match = nullptr;
          for (const auto& parameter : parameters_)
            if (text.substr(i + 1).starts_with(parameter.first) &&
                (!match || parameter.first.size() > match->first.size()))
              match = &parameter;
          if (!match) undefined_parameter(site, attribute, text.substr(i + 1));
          unused_defaults_.erase(match->first);
          result += match->second;
          i += match->first.size();
        }
      }
      attribute.set_value(result.c_str());
    }
  }

  [[noreturn]] void undefined_parameter(const Site& site, pugi::xml_attribute attribute, std::string_view after) {
    size_t length = 0;
    while (length < after.size() && (std::isalnum((unsigned char)after[length]) || after[length] == '_')) ++length;
    std::string name(after.substr(0, length));
    std::string where = std::string("attribute ") + attribute.name() + "=\"" + attribute.value() + "\"";
    if (name.empty()) fail(site, where + " has a '$' that names no parameter (write \\$ for a dollar sign)");
    fail(site, where + " uses $" + name + ", which is not defined (declare <default name=\"" + name +
                   "\" value=\"...\"/> before it, or pass it when loading)");
  }

  std::map<std::string, std::string> parameters_;
  std::set<std::string> unused_defaults_;
  fs::path top_directory_;
  std::vector<fs::path> search_paths_;
  std::vector<fs::path> open_files_;
};

}  // namespace

PluginNode parse_xml_file(const std::string& path, const std::map<std::string, std::string>& defaults) {
  XmlParser parser(defaults, fs::absolute(path).parent_path());
  PluginNode root = parser.parse_file(path, path);
  parser.check_defaults_used();
  return root;
}

PluginNode parse_xml_string(const std::string& xml, const std::map<std::string, std::string>& defaults) {
  XmlParser parser(defaults, fs::current_path());
  PluginNode root = parser.parse_string(xml);
  parser.check_defaults_used();
  return root;
}

}  // namespace kiln::render
