// Properties (a plugin's parameters with their sources and read tracking) and Object, the
// base of scene objects: the typed getters, and the errors that name the plugin, the
// parameter and where it came from.
#include <kiln/errors.h>
#include <kiln/render/properties.h>

#include <algorithm>

namespace kiln::render {
namespace {

/// " (where)", or nothing when `source` is empty.
std::string in_parentheses(const std::string& source) { return source.empty() ? "" : " (" + source + ")"; }

}  // namespace

std::string describe_plugin(PluginKind kind, const std::string& plugin, const std::string& id,
                            const std::string& source) {
  std::string text = std::string(kind_tag(kind)) + " '" + plugin + "'";
  if (!id.empty()) text += " id '" + id + "'";
  return text + in_parentheses(source);
}

const char* kind_tag(PluginKind kind) {
  switch (kind) {
    case PluginKind::Scene: return "scene";
    case PluginKind::Shape: return "shape";
    case PluginKind::Bsdf: return "bsdf";
    case PluginKind::Emitter: return "emitter";
    case PluginKind::Texture: return "texture";
    case PluginKind::Sensor: return "sensor";
    case PluginKind::Film: return "film";
    case PluginKind::Filter: return "rfilter";
    case PluginKind::Sampler: return "sampler";
    case PluginKind::Integrator: return "integrator";
    case PluginKind::Volume: return "volume";
  }
  throw InternalError("kiln.render: kind_tag() of an unknown PluginKind " + std::to_string(int(kind)));
}

void Object::set_origin(std::string plugin, std::string id, std::string source) {
  plugin_ = std::move(plugin);
  id_ = std::move(id);
  source_ = std::move(source);
}

void Object::traverse(TraversalCallback&) {}

void Object::parameters_changed(const std::vector<std::string>&) {}

std::string describe_value(const Properties::Value& value) {
  struct Describe {
    std::string operator()(bool) const { return "boolean"; }
    std::string operator()(int64_t) const { return "integer"; }
    std::string operator()(double) const { return "float"; }
    std::string operator()(const std::string&) const { return "string"; }
    std::string operator()(const Color3d&) const { return "rgb"; }
    std::string operator()(const Vector3d&) const { return "vector"; }
    std::string operator()(const Matrix4d&) const { return "transform"; }
    std::string operator()(const ImageValue&) const { return "image"; }
    std::string operator()(const std::shared_ptr<Object>& object) const {
      if (!object) return "null object";
      return describe_plugin(object->kind(), object->plugin(), object->id(), object->source());
    }
  };
  return std::visit(Describe{}, value);
}

Properties::Properties(PluginKind kind, std::string plugin, std::string id, std::string source)
    : kind_(kind), plugin_(std::move(plugin)), id_(std::move(id)), source_(std::move(source)) {}

std::string Properties::describe(const std::string& name) const {
  const Entry* entry = find(name);
  return "kiln.render: " + describe_plugin(kind_, plugin_, id_, source_) + ", parameter '" + name + "'" +
         in_parentheses(entry ? entry->source : "");
}

void Properties::set(const std::string& name, Value value, std::string source) {
  for (const Entry& entry : entries_)
    if (entry.name == name)
      throw ValueError("kiln.render: " + describe_plugin(kind_, plugin_, id_, source_) + ": parameter '" + name + "'" +
                       in_parentheses(source) + " is given twice (first" +
                       in_parentheses(entry.source.empty() ? "without a source" : "at " + entry.source) + ")");
  entries_.push_back(Entry{name, std::move(value), std::move(source)});
}

void Properties::note_asked(const std::string& what) const {
  if (std::find(asked_.begin(), asked_.end(), what) == asked_.end()) asked_.push_back(what);
}

const Properties::Entry* Properties::find(const std::string& name) const {
  note_asked(name);
  for (const Entry& entry : entries_)
    if (entry.name == name) return &entry;
  return nullptr;
}

bool Properties::has(const std::string& name) const { return find(name) != nullptr; }

std::vector<std::string> Properties::names() const {
  std::vector<std::string> out;
  for (const Entry& entry : entries_) out.push_back(entry.name);
  return out;
}

std::string Properties::source_of(const std::string& name) const {
  for (const Entry& entry : entries_)
    if (entry.name == name && !entry.source.empty()) return entry.source;
  return source_;
}

const Properties::Entry& Properties::require(const std::string& name) const {
  const Entry* entry = find(name);
  if (!entry)
    throw ValueError("kiln.render: " + describe_plugin(kind_, plugin_, id_, source_) + ": the required parameter '" +
                     name + "' is missing");
  entry->read = true;
  return *entry;
}

template <typename T> const T& Properties::typed(const std::string& name, const char* expected) const {
  const Entry& entry = require(name);
  if (const T* value = std::get_if<T>(&entry.value)) return *value;
  throw TypeError(describe(name) + ": expected " + expected + ", found " + describe_value(entry.value));
}

const Properties::Value& Properties::get(const std::string& name) const { return require(name).value; }

const ImageValue& Properties::get_image(const std::string& name) const { return typed<ImageValue>(name, "image"); }

bool Properties::get_bool(const std::string& name) const { return typed<bool>(name, "boolean"); }
bool Properties::get_bool(const std::string& name, bool fallback) const {
  return has(name) ? get_bool(name) : fallback;
}

int64_t Properties::get_int(const std::string& name) const { return typed<int64_t>(name, "integer"); }
int64_t Properties::get_int(const std::string& name, int64_t fallback) const {
  return has(name) ? get_int(name) : fallback;
}

double Properties::get_float(const std::string& name) const {
  const Entry& entry = require(name);
  if (const auto* integer = std::get_if<int64_t>(&entry.value)) return double(*integer);
  return typed<double>(name, "float");
}
double Properties::get_float(const std::string& name, double fallback) const {
  return has(name) ? get_float(name) : fallback;
}

std::string Properties::get_string(const std::string& name) const { return typed<std::string>(name, "string"); }
std::string Properties::get_string(const std::string& name, const std::string& fallback) const {
  return has(name) ? get_string(name) : fallback;
}

Color3d Properties::get_color(const std::string& name) const { return typed<Color3d>(name, "rgb"); }
Color3d Properties::get_color(const std::string& name, const Color3d& fallback) const {
  return has(name) ? get_color(name) : fallback;
}

Vector3d Properties::get_vector(const std::string& name) const { return typed<Vector3d>(name, "vector or point"); }
Vector3d Properties::get_vector(const std::string& name, const Vector3d& fallback) const {
  return has(name) ? get_vector(name) : fallback;
}

Matrix4d Properties::get_transform(const std::string& name) const { return typed<Matrix4d>(name, "transform"); }
Matrix4d Properties::get_transform(const std::string& name, const Matrix4d& fallback) const {
  return has(name) ? get_transform(name) : fallback;
}

std::shared_ptr<Object> Properties::get_object(const std::string& name, PluginKind kind) const {
  const auto& object = typed<std::shared_ptr<Object>>(name, kind_tag(kind));
  if (!object || object->kind() != kind)
    throw TypeError(describe(name) + ": expected " + kind_tag(kind) + ", found " + describe_value(object));
  return object;
}

std::vector<std::pair<std::string, std::shared_ptr<Object>>> Properties::objects() const {
  std::vector<std::pair<std::string, std::shared_ptr<Object>>> result;
  for (const Entry& entry : entries_)
    if (const auto* object = std::get_if<std::shared_ptr<Object>>(&entry.value)) {
      note_asked(entry.name);
      entry.read = true;
      result.emplace_back(entry.name, *object);
    }
  return result;
}

std::vector<std::shared_ptr<Object>> Properties::objects(PluginKind kind) const {
  note_asked(std::string("nested ") + kind_tag(kind) + "s");
  std::vector<std::shared_ptr<Object>> result;
  for (const Entry& entry : entries_) {
    const auto* object = std::get_if<std::shared_ptr<Object>>(&entry.value);
    if (!object || !*object || (*object)->kind() != kind) continue;
    entry.read = true;
    result.push_back(*object);
  }
  return result;
}

std::vector<std::string> Properties::unread() const {
  std::vector<std::string> names;
  for (const Entry& entry : entries_)
    if (!entry.read) names.push_back(entry.name);
  return names;
}

void Properties::check_all_read() const {
  std::string unused;
  for (const Entry& entry : entries_)
    if (!entry.read)
      unused += "\n  '" + entry.name + "'" + in_parentheses(entry.source) + ": " + describe_value(entry.value);
  if (unused.empty()) return;
  std::string accepted;
  for (const std::string& name : asked_) accepted += (accepted.empty() ? "" : ", ") + name;
  throw ValueError("kiln.render: " + describe_plugin(kind_, plugin_, id_, source_) +
                   " does not take these parameters:" + unused + "\n" + plugin_ + " accepts " +
                   (accepted.empty() ? "no parameters" : accepted));
}

}  // namespace kiln::render
