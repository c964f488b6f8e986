// What plugins written in Python share (bind_python_plugins.cpp, bind_python_integrators.cpp):
// their parameters as Python sees them, calls into their Python methods and their
// traverse(), and registration by name.
#pragma once

#include "render/render_binding.h"

#include <kiln/render/plugin.h>
#include <kiln/render/traverse.h>

#include <memory>
#include <string>
#include <vector>

namespace kiln::python::render {

using kiln::render::Object;
using kiln::render::PluginKind;
using kiln::render::Properties;
using kiln::render::TraversalCallback;

/// A plugin's parameters as Python sees them (Mitsuba's mi.Properties): a view of the
/// loader's Properties during the plugin's constructor (reads mark parameters read, so an
/// unread one is still an error), or a set of its own (kr.Properties()).
class PythonProperties {
 public:
  explicit PythonProperties(const Properties* view) : view_(view) {}
  explicit PythonProperties(const std::string& plugin)
      : owned_(std::make_shared<Properties>(kiln::render::plugin_kind(plugin).value_or(PluginKind::Scene), plugin, "",
                                            "kr.Properties('" + plugin + "')")),
        view_(owned_.get()) {}

  const Properties& get() const {
    if (!view_)
      throw ValueError(
          "kiln.render: Properties: these are the parameters a plugin's constructor received; they are gone once it "
          "returned (read what you need in the constructor)");
    return *view_;
  }
  Properties& owned() {
    if (!owned_)
      throw TypeError("kiln.render: Properties: a plugin's parameters cannot be changed (make a kr.Properties())");
    return *owned_;
  }
  void release() { view_ = owned_.get(); }

 private:
  std::shared_ptr<Properties> owned_;
  const Properties* view_;
};

/// The Python override of method `name` of the Python object behind `self`, or an empty
/// object when the Python class does not define one (it would find the bound class's own
/// binding of the method, which calls back into C++).
nb::object python_override(nb::handle self, nb::handle bound_class, const char* name);

/// `value` (a Python method's result) as T: Kiln's own type, or what kl's constructor of
/// T makes of it (a number broadcasts, a sequence gives components).
template <typename T> T result_as(nb::handle value, const char* kiln_type, const std::string& where) {
  if (nb::isinstance<T>(value)) return nb::cast<T>(value);
  try {
    return nb::cast<T>(nb::module_::import_("kiln").attr(kiln_type)(value));
  } catch (const nb::python_error& error) {
    throw TypeError("kiln.render: " + where + " must give a kl." + kiln_type + " (or a number), got " +
                    nb::type_name(value.type()).c_str() + ": " + error.what());
  }
}

/// Object::traverse() and parameters_changed() of a plugin written in Python: its methods
/// of those names when it defines them (the GIL held).
void python_traverse(nb::handle self, nb::handle bound_class, TraversalCallback& callback);
void python_parameters_changed(nb::handle self, nb::handle bound_class, const std::vector<std::string>& keys);

/// Registers a plugin of `kind` whose objects the Python callable `factory` makes from a
/// kr.Properties (valid during the call): an instance of `bound_class` (a subclass written
/// in Python). The factory and the class are kept in the module's `_python_plugins` dict,
/// not in the C++ registry, which outlives the interpreter.
void register_python_plugin(PluginKind kind, nb::handle bound_class, const std::string& name, nb::object factory);

}  // namespace kiln::python::render
