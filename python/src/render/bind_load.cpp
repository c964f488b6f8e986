// kr.load_dict, kr.load_file and kr.load_string: Python dicts in Mitsuba 3's format become a
// scene description (scene_description.h) that the C++ loader instantiates. The
// conversion names every value's place as the dict's key path ("load_dict: ['box']['bsdf']").
#include "render/render_binding.h"

#include <kiln/errors.h>
#include <kiln/render/file_resolver.h>
#include <kiln/render/image.h>
#include <kiln/render/load.h>
#include <kiln/render/plugin.h>
#include <kiln/render/rfilter.h>
#include <kiln/render/sampler.h>
#include <kiln/render/scene.h>
#include <kiln/render/scene_description.h>
#include <kiln/render/texture.h>
#include <kiln/render/transform.h>

#include <nanobind/ndarray.h>
#include <nanobind/stl/filesystem.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

namespace kiln::python::render {
namespace {

using namespace kiln::render;

std::string key_path(const std::string& parent, const std::string& key) { return parent + "['" + key + "']"; }

/// "load_dict: ['box']['bsdf']" for a key path.
std::string source_of(const std::string& path) { return "load_dict: " + (path.empty() ? std::string("<root>") : path); }

[[noreturn]] void fail(const std::string& path, const std::string& message) {
  throw ValueError("kiln.render: load_dict: " + (path.empty() ? std::string("the dict") : path) + ": " + message);
}

double number(const nb::handle& value, const std::string& path) {
  if (nb::isinstance<nb::bool_>(value) ||
      !(nb::isinstance<nb::float_>(value) || nb::isinstance<nb::int_>(value) || nb::hasattr(value, "__float__")))
    fail(path, "expected a number, got " + nb::cast<std::string>(nb::str(value.type().attr("__name__"))));
  return nb::cast<double>(value.attr("__float__")());
}

/// A sequence of numbers (a list, tuple, NumPy array or Kiln array of one lane each).
std::vector<double> numbers(const nb::handle& value, const std::string& path) {
  std::vector<double> out;
  for (nb::handle item : nb::iter(value)) out.push_back(number(item, path));
  return out;
}

Matrix4d matrix_from_rows(const nb::handle& value, const std::string& path) {
  Matrix4d m{};
  size_t r = 0;
  for (nb::handle row : nb::iter(value)) {
    std::vector<double> entries = numbers(row, path);
    if (r >= 4 || entries.size() != 4) fail(path, "a transform must be a 4 x 4 matrix (nested lists or an array)");
    for (size_t c = 0; c < 4; ++c) m[r * 4 + c] = entries[c];
    ++r;
  }
  if (r != 4) fail(path, "a transform must be a 4 x 4 matrix (nested lists or an array)");
  return m;
}

/// One number, or a sequence of them, as a list.
std::vector<double> one_or_more_numbers(const nb::handle& value, const std::string& path) {
  return nb::hasattr(value, "__iter__") ? numbers(value, path) : std::vector<double>{number(value, path)};
}

/// `{'type': 'rgb', 'value': ...}`, `{'type': 'spectrum', 'value': ...}` or a spectrum plugin
/// (`{'type': 'd65', 'scale': s}`), as scene_description.h's rules make them.
Color3d color_value(const nb::dict& dict, const std::string& type, const std::string& path) {
  std::string where = "kiln.render: load_dict: " + path;
  if (type == "rgb" || type == "spectrum") {
    for (auto [key, item] : dict) {
      std::string name = nb::cast<std::string>(nb::str(key));
      if (name != "type" && name != "value")
        fail(path, "the '" + type + "' value takes only 'value', not '" + name + "'");
    }
    if (!dict.contains("value")) fail(path, "the '" + type + "' value needs a 'value'");
    nb::handle value = dict["value"];
    // Mitsuba's [(wavelength, value), ...] pairs are spectral data.
    if (type == "spectrum" && nb::hasattr(value, "__iter__"))
      for (nb::handle item : nb::iter(value))
        if (nb::hasattr(item, "__iter__")) refuse_spectral_data(where + "['value']");
    std::vector<double> values = one_or_more_numbers(value, key_path(path, "value"));
    return type == "rgb" ? rgb_value(values, where) : spectrum_value(values, where + "['value']");
  }
  auto read_parameters = [&] {
    std::vector<std::pair<std::string, double>> parameters;
    for (auto [key, item] : dict) {
      std::string name = nb::cast<std::string>(nb::str(key));
      if (name != "type") parameters.emplace_back(name, number(item, key_path(path, name)));
    }
    return parameters;
  };
  return spectrum_plugin(type, read_parameters, where);
}

PluginNode convert_node(const nb::dict& dict, const std::string& path, bool scene_child);

/// An image given in memory: a kl.TensorXf or NumPy array of shape (height, width[,
/// channels]) as it is, or a kr.Bitmap as linear values (sRGB-decoded unless `raw`).
/// Empty for any other value.
ImageValue image_value(const nb::handle& value, bool raw, const std::string& path) {
  nb::object pixels;
  if (nb::hasattr(value, "_texture_pixels")) {
    pixels = value.attr("_texture_pixels")(raw);
  } else if (nb::isinstance<TensorXf>(value) || (nb::hasattr(value, "ndim") && nb::hasattr(value, "__array__"))) {
    pixels = nb::module_::import_("numpy").attr("asarray")(value, "float32");
  } else {
    return nullptr;
  }
  size_t dims = nb::cast<size_t>(pixels.attr("ndim"));
  if (dims == 2) pixels = pixels.attr("reshape")(nb::make_tuple(pixels.attr("shape")[0], pixels.attr("shape")[1], 1));
  if (dims != 2 && dims != 3) fail(path, "an image must have shape (height, width[, channels])");
  auto array = nb::cast<nb::ndarray<const float, nb::ndim<3>, nb::c_contig, nb::device::cpu>>(
      nb::module_::import_("numpy").attr("ascontiguousarray")(pixels));
  auto image = std::make_shared<Bitmap>();
  image->height = array.shape(0), image->width = array.shape(1), image->channels = array.shape(2);
  image->pixels.assign(array.data(), array.data() + array.size());
  return image;
}

/// Adds parameter `name` of `node` from a Python value (`raw`: the node's, for images).
void add_parameter(PluginNode& node, const std::string& name, const nb::handle& value, const std::string& path,
                   bool raw) {
  std::string source = source_of(path);
  if (nb::isinstance<nb::dict>(value)) {
    nb::dict dict = nb::borrow<nb::dict>(value);
    if (!dict.contains("type")) fail(path, "a nested dict needs a 'type'");
    std::string type = nb::cast<std::string>(nb::str(dict["type"]));
    if (type == "rgb" || type == "spectrum" || type == "d65" || type == "blackbody" || type == "regular" ||
        type == "irregular")
      return node.add_value(name, color_value(dict, type, path), source);
    if (type == "ref") {
      if (!dict.contains("id")) fail(path, "a 'ref' needs an 'id'");
      return node.add_reference(name, Reference{nb::cast<std::string>(nb::str(dict["id"])), source});
    }
    node.add_child(name, convert_node(dict, path, node.kind == PluginKind::Scene));
    return;
  }
  if (nb::isinstance<nb::bool_>(value)) return node.add_value(name, nb::cast<bool>(value), source);
  if (nb::isinstance<nb::int_>(value)) return node.add_value(name, nb::cast<int64_t>(value), source);
  if (nb::isinstance<nb::float_>(value)) return node.add_value(name, nb::cast<double>(value), source);
  if (nb::isinstance<nb::str>(value)) return node.add_value(name, nb::cast<std::string>(value), source);
  if (nb::isinstance<Object>(value)) return node.add_value(name, nb::cast<std::shared_ptr<Object>>(value), source);
  if (ImageValue image = image_value(value, raw, path)) return node.add_value(name, image, source);
  if (nb::isinstance<Transform4f>(value)) {
    const Transform4f& t = nb::cast<const Transform4f&>(value);
    Matrix4d m{};
    for (size_t r = 0; r < 4; ++r)
      for (size_t c = 0; c < 4; ++c) m[r * 4 + c] = t.matrix()(r, c).read(0);
    return node.add_value(name, m, source);
  }
  if (nb::hasattr(value, "__len__") && nb::hasattr(value, "__iter__")) {
    size_t length = nb::len(value);
    if (length == 4) return node.add_value(name, matrix_from_rows(value, path), source);
    if (length == 3) {
      std::vector<double> v = numbers(value, path);
      return node.add_value(name, Vector3d{{v[0], v[1], v[2]}}, source);
    }
    if (length == 1) return node.add_value(name, number(value, path), source);
    fail(path, "a sequence must hold 3 numbers (a point or vector) or 4 rows of 4 (a transform), not " +
                   std::to_string(length) + " items");
  }
  if (nb::hasattr(value, "__float__")) return node.add_value(name, number(value, path), source);
  fail(path, "cannot use a value of type " + nb::cast<std::string>(nb::str(value.type().attr("__name__"))));
}

/// The keys of `path` ("['slab']['bsdf']") joined by dots ("slab.bsdf"): the id Mitsuba's
/// load_dict gives every nested dict besides its own 'id'.
std::string dotted_path(const std::string& path) {
  if (path.size() < 4) return "";
  std::string keys = path.substr(2, path.size() - 4), dotted;
  for (size_t start = 0;;) {
    size_t end = keys.find("']['", start);
    dotted += keys.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (end == std::string::npos) return dotted;
    dotted += '.';
    start = end + 4;
  }
}

/// A plugin's dict: its kind from the registry ('type'), 'id' when given (or the key, for
/// the children of a scene, as Mitsuba does), every other key a parameter; its key path is
/// a second id (path_id).
PluginNode convert_node(const nb::dict& dict, const std::string& path, bool scene_child) {
  PluginNode node;
  node.plugin = nb::cast<std::string>(nb::str(dict["type"]));
  node.source = source_of(path);
  if (node.plugin == "scene") {
    node.kind = PluginKind::Scene;
  } else if (auto kind = plugin_kind(node.plugin)) {
    node.kind = *kind;
  } else {
    fail(path, "unknown plugin type '" + node.plugin + "'");
  }
  node.path_id = dotted_path(path);
  if (dict.contains("id")) {
    node.id = nb::cast<std::string>(nb::str(dict["id"]));
  } else if (scene_child) {
    node.id = node.path_id;
  }
  bool raw = dict.contains("raw") && nb::isinstance<nb::bool_>(dict["raw"]) && nb::cast<bool>(dict["raw"]);
  for (auto [key, value] : dict) {
    if (!nb::isinstance<nb::str>(key)) fail(path, "keys must be strings");
    std::string name = nb::cast<std::string>(key);
    if (name == "type" || name == "id") continue;
    add_parameter(node, name, value, key_path(path, name), raw);
  }
  return node;
}

/// A loaded object as the most derived Python class bound for it (kr.Sensor, kr.BSDF ...):
/// plugins' own classes are not bound, so the default conversion would stop at kr.Object.
template <typename Kind, typename... Others> nb::object as_bound_class(const std::shared_ptr<Object>& object) {
  if (auto kind = std::dynamic_pointer_cast<Kind>(object)) return nb::cast(kind);
  if constexpr (sizeof...(Others) > 0) return as_bound_class<Others...>(object);
  return nb::cast(object);
}

nb::object loaded(const std::shared_ptr<Object>& object) {
  return as_bound_class<Scene, Sensor, kiln::render::Shape, BSDF, Emitter, Integrator, Film, Sampler,
                        ReconstructionFilter, kiln::render::Texture>(object);
}

std::map<std::string, std::string> defaults_of(const nb::kwargs& kwargs) {
  std::map<std::string, std::string> out;
  for (auto [key, value] : kwargs) out[nb::cast<std::string>(key)] = nb::cast<std::string>(nb::str(value));
  return out;
}

}  // namespace

void bind_load(nb::module_& m) {
  nb::class_<FileResolver>(m, "FileResolver",
                           "Folders where relative file names in scenes are looked for (Mitsuba's FileResolver).")
      .def("append", &FileResolver::append, nb::arg("folder"), "Looks in `folder` after the others.")
      .def("prepend", &FileResolver::prepend, nb::arg("folder"), "Looks in `folder` before the others.")
      .def("clear", &FileResolver::clear)
      .def("resolve", &FileResolver::resolve, nb::arg("name"),
           "The first existing file `name` in the working directory or a folder, else `name`.")
      .def("__len__", [](const FileResolver& r) { return r.folders().size(); })
      .def(
          "__getitem__",
          [](const FileResolver& r, size_t i) {
            std::vector<std::filesystem::path> folders = r.folders();
            if (i >= folders.size()) throw nb::index_error();
            return folders[i];
          },
          nb::arg("index"))
      .def("__repr__", [](const FileResolver& r) {
        std::string text = "FileResolver[";
        for (const std::filesystem::path& folder : r.folders()) text += "\n  \"" + folder.string() + "\"";
        return text + "]";
      });
  m.def(
      "file_resolver", []() -> FileResolver& { return file_resolver(); }, nb::rv_policy::reference,
      "The process's file resolver: kr.file_resolver().append(folder) lets scenes name files relative to it.");
  m.def(
      "load_dict",
      [](const nb::dict& dict) {
        if (!dict.contains("type")) fail("", "the top level needs a 'type' (e.g. 'scene')");
        return loaded(instantiate(convert_node(dict, "", false)));
      },
      nb::arg("dict"),
      "Builds a scene (or any object) from a dict in Mitsuba 3's format: {'type': 'scene', 'light': {'type': "
      "'point', ...}, ...}. Colors are {'type': 'rgb', 'value': [r, g, b]}, references {'type': 'ref', 'id': ...}, "
      "transforms kr.Transform4f, a 4 x 4 nested list or array.");
  m.def(
      "load_file",
      [](const std::string& path, const nb::kwargs& defaults) {
        return loaded(instantiate(parse_xml_file(path, defaults_of(defaults))));
      },
      nb::arg("path"), nb::arg("defaults"),
      "Loads a Mitsuba 3 XML scene file; keyword arguments give values for its $name parameters.");
  m.def(
      "load_string",
      [](const std::string& xml, const nb::kwargs& defaults) {
        return loaded(instantiate(parse_xml_string(xml, defaults_of(defaults))));
      },
      nb::arg("xml"), nb::arg("defaults"), "Loads a Mitsuba 3 XML scene from a string.");
}

}  // namespace kiln::python::render
