// The plugin registry: factories by name, filled by KILN_REGISTER_PLUGIN lines while the
// library loads, and create_object(), which builds and checks one object.
#include <kiln/errors.h>
#include <kiln/render/plugin.h>

#include <map>

namespace kiln::render {
namespace {

struct RegisteredPlugin {
  PluginKind kind;
  PluginFactory factory;
};

/// Plugins by name. A function-local static, so registrations from other files' static
/// initializers find it constructed whatever order those run in.
std::map<std::string, RegisteredPlugin>& registry() {
  static std::map<std::string, RegisteredPlugin> plugins;
  return plugins;
}

/// The ValueError for a plugin name that is not registered as `props.kind()`.
ValueError unknown_plugin(const Properties& props) {
  std::string message = "kiln.render: unknown " + std::string(kind_tag(props.kind())) + " plugin '" + props.plugin() +
                        "'" + (props.source().empty() ? "" : " (" + props.source() + ")");
  if (std::optional<PluginKind> other = plugin_kind(props.plugin()))
    message += ": '" + props.plugin() + "' is registered as " + kind_tag(*other) + ", not " + kind_tag(props.kind());
  std::string known;
  for (const std::string& name : plugin_names(props.kind())) known += (known.empty() ? "" : ", ") + name;
  if (known.empty()) return ValueError(message + "; no " + kind_tag(props.kind()) + " plugins are registered");
  return ValueError(message + "; the " + kind_tag(props.kind()) + " plugins are: " + known);
}

}  // namespace

void register_plugin(PluginKind kind, const std::string& name, PluginFactory factory) {
  auto [it, inserted] = registry().emplace(name, RegisteredPlugin{kind, std::move(factory)});
  if (!inserted)
    throw InternalError("kiln.render: two plugins are registered as '" + name + "' (" + kind_tag(it->second.kind) +
                        " and " + kind_tag(kind) + "); plugin names must be unique");
}

void replace_plugin(PluginKind kind, const std::string& name, PluginFactory factory) {
  auto it = registry().find(name);
  if (it != registry().end() && it->second.kind != kind)
    throw ValueError("kiln.render: cannot register '" + name + "' as a " + kind_tag(kind) + " plugin: it is a " +
                     kind_tag(it->second.kind) + " plugin; choose another name");
  registry()[name] = RegisteredPlugin{kind, std::move(factory)};
}

std::optional<PluginKind> plugin_kind(const std::string& name) {
  auto it = registry().find(name);
  if (it == registry().end()) return std::nullopt;
  return it->second.kind;
}

std::vector<std::string> plugin_names(PluginKind kind) {
  std::vector<std::string> names;
  for (const auto& [name, plugin] : registry())
    if (plugin.kind == kind) names.push_back(name);
  return names;
}

std::shared_ptr<Object> create_object(const Properties& props) {
  auto it = registry().find(props.plugin());
  if (it == registry().end() || it->second.kind != props.kind()) throw unknown_plugin(props);
  std::shared_ptr<Object> object = it->second.factory(props);
  if (!object || object->kind() != props.kind())
    throw InternalError("kiln.render: the " + std::string(kind_tag(props.kind())) + " plugin '" + props.plugin() +
                        "' made " +
                        (object ? "an object of kind " + std::string(kind_tag(object->kind())) : "no object"));
  props.check_all_read();
  object->set_origin(props.plugin(), props.id(), props.source());
  return object;
}

detail::PluginRegistration::PluginRegistration(PluginKind kind, const char* name, PluginFactory factory) {
  register_plugin(kind, name, std::move(factory));
}

}  // namespace kiln::render
