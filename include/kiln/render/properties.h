// A plugin's parameters as a scene description gave them (Mitsuba 3's Properties), and
// the base class of every object a scene is built from. The XML and dict loaders fill a
// Properties per plugin; the plugin's constructor reads what it accepts, and the loader
// then rejects whatever was never read, naming the plugin, the parameter and where it came
// from. Values are host values: plugins turn them into labelled Kiln arrays.
//
// What an implementation guarantees:
// - Every getter marks the parameter as read; a getter of the wrong type throws TypeError
//   naming the parameter, its source, the type found and the type expected.
// - A getter without a default throws ValueError when the parameter is missing.
// - Integers are accepted where a float is asked (as Mitsuba does); nothing else converts.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

namespace kiln::render {

class TraversalCallback;

/// What kind of plugin an object is: its XML tag ("bsdf", "shape", ...).
enum class PluginKind : uint8_t {
  Scene,
  Shape,
  Bsdf,
  Emitter,
  Texture,
  Sensor,
  Film,
  Filter,
  Sampler,
  Integrator,
  Volume
};

/// The XML tag of a kind ("rfilter" for Filter).
const char* kind_tag(PluginKind kind);

/// Base of every scene object: a plugin instance with the Properties it was made from.
class Object {
 public:
  virtual ~Object() = default;
  virtual PluginKind kind() const = 0;
  /// The plugin's name ("diffuse"), its id ("" when the scene gave none) and where it was
  /// declared ("scene.xml:12" or "load_dict: ['bsdf']").
  const std::string& plugin() const { return plugin_; }
  const std::string& id() const { return id_; }
  const std::string& source() const { return source_; }
  /// Set by the loader when it creates the object.
  void set_origin(std::string plugin, std::string id, std::string source);

  /// Lists the object's parameters and children (traverse.h); nothing by default.
  virtual void traverse(TraversalCallback& callback);
  /// Called after the parameters `keys` (names relative to this object) were changed.
  virtual void parameters_changed(const std::vector<std::string>& keys);

 private:
  std::string plugin_, id_, source_;
};

/// An RGB triple (linear sRGB primaries), as `<rgb>` or a 3-element list gives it. A type
/// of its own (not an alias of std::array), so a Value tells a color from a vector.
struct Color3d : std::array<double, 3> {
  /// Given as a uniform spectrum (`<spectrum value="v"/>`): gray v where it is a
  /// reflectance, v times the equal-energy spectrum's sRGB where it is emitted (Mitsuba's RGB
  /// variants convert it so; emitted_texture() applies it).
  bool uniform_spectrum = false;
};
/// A point or vector (`<point>`, `<vector>`).
struct Vector3d : std::array<double, 3> {};
/// A 4 x 4 matrix in row-major order (`<transform>` composed, a nested list, a NumPy array).
using Matrix4d = std::array<double, 16>;
struct Bitmap;
/// An image given in memory (load_dict's `'data': TensorXf` or `'bitmap': Bitmap`), linear.
using ImageValue = std::shared_ptr<const Bitmap>;

class Properties {
 public:
  /// One parameter's value. Nested plugins are already instantiated (the loader builds
  /// bottom-up, so a `<ref>` shares one object).
  using Value = std::variant<bool, int64_t, double, std::string, Color3d, Vector3d, Matrix4d, std::shared_ptr<Object>,
                             ImageValue>;

  /// An empty set for plugin `plugin` of `kind`, declared at `source`.
  Properties(PluginKind kind, std::string plugin, std::string id = "", std::string source = "");

  PluginKind kind() const { return kind_; }
  const std::string& plugin() const { return plugin_; }
  const std::string& id() const { return id_; }
  const std::string& source() const { return source_; }

  /// Sets `name` (declared at `source`); throws ValueError when it is already set.
  void set(const std::string& name, Value value, std::string source = "");
  bool has(const std::string& name) const;
  /// Every parameter's name, in declaration order (marks none read).
  std::vector<std::string> names() const;
  /// Where `name` was declared (the plugin's own source when unknown).
  std::string source_of(const std::string& name) const;

  bool get_bool(const std::string& name) const;
  bool get_bool(const std::string& name, bool fallback) const;
  int64_t get_int(const std::string& name) const;
  int64_t get_int(const std::string& name, int64_t fallback) const;
  double get_float(const std::string& name) const;
  double get_float(const std::string& name, double fallback) const;
  std::string get_string(const std::string& name) const;
  std::string get_string(const std::string& name, const std::string& fallback) const;
  Color3d get_color(const std::string& name) const;
  Color3d get_color(const std::string& name, const Color3d& fallback) const;
  Vector3d get_vector(const std::string& name) const;
  Vector3d get_vector(const std::string& name, const Vector3d& fallback) const;
  Matrix4d get_transform(const std::string& name) const;
  Matrix4d get_transform(const std::string& name, const Matrix4d& fallback) const;
  const ImageValue& get_image(const std::string& name) const;
  /// The raw value of `name` (marks it read); throws ValueError when it is missing.
  const Value& get(const std::string& name) const;
  /// The nested object `name`, which must be of `kind` (TypeError naming the kind found,
  /// e.g. a `<ref>` to a texture where a BSDF belongs).
  std::shared_ptr<Object> get_object(const std::string& name, PluginKind kind) const;

  /// Nested objects in declaration order, with their parameter names (unnamed children
  /// of the XML get "_arg_0", "_arg_1", ...); marks them read.
  std::vector<std::pair<std::string, std::shared_ptr<Object>>> objects() const;
  /// Nested objects of one kind (marks those read).
  std::vector<std::shared_ptr<Object>> objects(PluginKind kind) const;

  /// Names never read, in declaration order.
  std::vector<std::string> unread() const;
  /// Throws ValueError naming the plugin, each unread parameter, its source, and the
  /// parameters the plugin asked for (what it accepts).
  void check_all_read() const;

  /// "kiln.render: bsdf 'diffuse' (scene.xml:3), parameter 'reflectance' (scene.xml:4)":
  /// how an error about parameter `name` starts, for plugins that raise their own.
  std::string describe(const std::string& name) const;

 private:
  struct Entry {
    std::string name;
    Value value;
    std::string source;
    mutable bool read = false;
  };
  /// Records `what` (a parameter name, or "nested bsdfs") as something the plugin accepts.
  void note_asked(const std::string& what) const;
  /// The entry of `name` (nullptr when missing); records `name` as asked for.
  const Entry* find(const std::string& name) const;
  /// The entry of `name`, marked read; ValueError when it is missing.
  const Entry& require(const std::string& name) const;
  /// The value of `name` as T (marked read); TypeError naming `expected` otherwise.
  template <typename T> const T& typed(const std::string& name, const char* expected) const;

  PluginKind kind_;
  std::string plugin_, id_, source_;
  std::vector<Entry> entries_;
  /// Names the plugin asked about (through a getter or has()), in first-asked order: what
  /// check_all_read() reports the plugin accepts.
  mutable std::vector<std::string> asked_;
};

/// How messages name a plugin: "bsdf 'diffuse' id 'red' (scene.xml:3)" (the id and the
/// source only when known).
std::string describe_plugin(PluginKind kind, const std::string& plugin, const std::string& id,
                            const std::string& source);
/// How messages name a value's type: its XML tag ("float", "rgb"), or describe_plugin()
/// for an object.
std::string describe_value(const Properties::Value& value);

}  // namespace kiln::render
