// The plugin registry: every plugin file registers a factory under its kind and name with
// one line,
//   KILN_REGISTER_PLUGIN(PluginKind::Bsdf, "diffuse",
//                        [](const Properties& p) { return std::make_shared<Diffuse>(p); });
// and the loaders turn each plugin node of a scene description into an object through
// create_object().
//
// What an implementation guarantees:
// - Plugin names are unique across kinds (as in Mitsuba 3), so a dict's `'type': 'diffuse'`
//   alone says what kind of object it is.
// - create_object() either returns an object of the requested kind that read every one of
//   its parameters, with its origin (plugin, id, source) set, or throws: ValueError for an
//   unknown plugin or an unread parameter, whatever the plugin's constructor throws, and
//   InternalError when a plugin made an object of another kind than it is registered as.
#pragma once

#include <kiln/render/properties.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kiln::render {

/// Builds a plugin's object from its parameters.
using PluginFactory = std::function<std::shared_ptr<Object>(const Properties&)>;

/// Registers `factory` as plugin `name` of `kind`; InternalError when the name is taken
/// (by any kind).
void register_plugin(PluginKind kind, const std::string& name, PluginFactory factory);
/// Registers `factory` as plugin `name` of `kind` at run time (a plugin written in Python),
/// replacing an earlier plugin of that kind and name as Mitsuba's register_* functions do;
/// ValueError when the name is a plugin of another kind.
void replace_plugin(PluginKind kind, const std::string& name, PluginFactory factory);
/// The kind plugin `name` is registered as; nullopt when no plugin has that name.
std::optional<PluginKind> plugin_kind(const std::string& name);
/// The registered plugins of `kind`, sorted by name.
std::vector<std::string> plugin_names(PluginKind kind);

/// The object plugin `props.plugin()` of kind `props.kind()` makes from `props` (see above).
std::shared_ptr<Object> create_object(const Properties& props);

namespace detail {
/// Registers a plugin when constructed: what KILN_REGISTER_PLUGIN declares.
struct PluginRegistration {
  PluginRegistration(PluginKind kind, const char* name, PluginFactory factory);
};
}  // namespace detail

}  // namespace kiln::render

#define KILN_PLUGIN_CONCAT_INNER(a, b) a##b
#define KILN_PLUGIN_CONCAT(a, b) KILN_PLUGIN_CONCAT_INNER(a, b)
/// Registers a plugin when the library (or test) that holds this line is loaded.
#define KILN_REGISTER_PLUGIN(kind, name, ...)                                                                         \
  static const ::kiln::render::detail::PluginRegistration KILN_PLUGIN_CONCAT(kiln_plugin_registration_, __COUNTER__)( \
      kind, name, __VA_ARGS__)
