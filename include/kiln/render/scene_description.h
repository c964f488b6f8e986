// A scene description: the tree of plugin nodes that both loaders produce (the XML parser
// from a file, the Python binding from `kr.load_dict(dict)`), and instantiate(), which
// turns it into objects. A node is one plugin with its parameters in declaration order;
// a parameter is a value, a nested node or a reference to a node declared with an id.
//
// What an implementation guarantees:
// - instantiate() builds every node's children before the node, through create_object()
//   (plugin.h), and returns the root's object.
// - A node with an id is built once; every reference to that id, before or after the
//   declaration, shares its object.
// - ValueError, naming the places involved, for an id declared twice (both declarations),
//   a reference to an id nobody declared (the reference and the plugin holding it), and a
//   cycle of references (the chain). A reference to an object of the wrong kind is the
//   error of the plugin that asks for it (Properties::get_object) or, when nobody asks, of
//   the unread-parameter check.
#pragma once

#include <kiln/render/properties.h>

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace kiln::render {

struct PluginNode;

/// A reference to the node declared with `id` (`<ref id="..."/>`, `{'type': 'ref'}`),
/// written at `source`.
struct Reference {
  std::string id;
  std::string source;
};

/// One parameter of a node: a value (an already built object passes through as is), a
/// nested node, or a reference.
struct NodeParameter {
  std::string name;
  std::variant<Properties::Value, std::unique_ptr<PluginNode>, Reference> value;
  /// Where the parameter was written ("scene.xml:7", "load_dict: ['shape1']['bsdf']").
  std::string source;
};

/// One plugin of a scene description.
struct PluginNode {
  PluginKind kind = PluginKind::Scene;
  /// The plugin's name ("diffuse"; "scene" for the scene).
  std::string plugin;
  /// The id references use ("" when none).
  std::string id;
  /// A second id references may use: the node's key path in a scene dict ("glass",
  /// "slab.bsdf"), which Mitsuba's load_dict declares too ("" when none).
  std::string path_id;
  /// Where the plugin was declared.
  std::string source;
  std::vector<NodeParameter> parameters;

  /// Appends a value parameter.
  void add_value(std::string name, Properties::Value value, std::string source);
  /// Appends a nested node (the parameter's source is the child's) and returns it.
  PluginNode& add_child(std::string name, PluginNode child);
  /// Appends a reference parameter (its source is the reference's).
  void add_reference(std::string name, Reference reference);
};

/// Builds the objects of the tree under `root`, children first, and returns the root's.
std::shared_ptr<Object> instantiate(const PluginNode& root);

/// The values both loaders give colors and spectra, in RGB as Mitsuba's RGB variants make
/// them (one rule, whatever the syntax); errors are ValueErrors that begin with `where`:
/// - rgb_value: three numbers, or one for gray.
/// - spectrum_value: one number v is a uniform spectrum, gray v marked so that an emitter
///   makes it the equal-energy white (Color3d::uniform_spectrum); more (wavelengths and
///   values) is spectral data, refused.
/// - spectrum_plugin: `d65` is gray `scale`, its only parameter (D65 is the white of
///   linear sRGB); any other spectrum plugin is spectral data, refused before its
///   parameters are read (`read_parameters` gives them, as (name, number) pairs).
Color3d rgb_value(const std::vector<double>& numbers, const std::string& where);
Color3d spectrum_value(const std::vector<double>& numbers, const std::string& where);
Color3d spectrum_plugin(const std::string& type,
                        const std::function<std::vector<std::pair<std::string, double>>()>& read_parameters,
                        const std::string& where);
[[noreturn]] void refuse_spectral_data(const std::string& where);

}  // namespace kiln::render
