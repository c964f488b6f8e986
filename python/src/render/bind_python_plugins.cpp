// Plugins written in Python (Mitsuba's mi.register_bsdf): kr.BSDF subclassed in Python,
// whose sample/eval/pdf the renderer's dispatch calls while it traces a kernel, so a Python
// BSDF fuses into the same kernels as the C++ ones; kr.Properties, what its constructor
// reads; and the callback its traverse() fills, so kr.traverse and render derivatives see
// its parameters.
#include "render/python_plugin.h"

#include <kiln/errors.h>
#include <kiln/render/bsdf.h>
#include <kiln/render/image.h>
#include <kiln/render/plugin.h>
#include <kiln/render/traverse.h>

#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>
#include <nanobind/trampoline.h>

namespace kiln::python::render {
namespace {

using namespace kiln::render;

/// A parameter's value in Python: numbers, strings and objects as themselves, colors and
/// vectors as kl.Array3f, transforms as kr.Transform4f, images as kl.TensorXf.
nb::object to_python(const Properties::Value& value) {
  return std::visit(
      [](const auto& v) -> nb::object {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, Color3d> || std::is_same_v<T, Vector3d>) {
          return nb::cast(Array3f(Float(float(v[0])), Float(float(v[1])), Float(float(v[2]))));
        } else if constexpr (std::is_same_v<T, Matrix4d>) {
          nb::list rows;
          for (size_t r = 0; r < 4; ++r)
            rows.append(nb::make_tuple(v[4 * r], v[4 * r + 1], v[4 * r + 2], v[4 * r + 3]));
          return nb::module_::import_("kiln.render").attr("Transform4f")(rows);
        } else if constexpr (std::is_same_v<T, ImageValue>) {
          return nb::cast(TensorXf::from(v->pixels.data(), {v->height, v->width, v->channels}));
        } else {
          return nb::cast(v);
        }
      },
      value);
}

/// kr.Properties()[name] = value: numbers, strings, objects and 3-vectors.
Properties::Value from_python(nb::handle value, const std::string& name) {
  if (nb::isinstance<nb::bool_>(value)) return nb::cast<bool>(value);
  if (nb::isinstance<nb::int_>(value)) return nb::cast<int64_t>(value);
  if (nb::isinstance<nb::float_>(value)) return nb::cast<double>(value);
  if (nb::isinstance<nb::str>(value)) return nb::cast<std::string>(value);
  if (nb::isinstance<Object>(value)) return nb::cast<std::shared_ptr<Object>>(value);
  Array3f v = as_vector<Array3f>(value, "Properties['" + name + "']");
  return Vector3d{{v.x.read(0), v.y.read(0), v.z.read(0)}};
}

/// What a Python plugin's traverse(cb) calls: cb.put(name, value, flags) with the plugin's
/// own Kiln arrays (kept by reference, so kr.traverse changes them in place) or a child.
class PythonTraversal {
 public:
  explicit PythonTraversal(TraversalCallback* callback) : callback_(callback) {}

  void put(const std::string& name, nb::handle value, uint32_t flags) {
    if (!callback_) throw ValueError("kiln.render: traverse(): the callback is only valid while traverse() runs");
    if (nb::isinstance<Object>(value)) return callback_->put_object(name, nb::cast<Object*>(value));
    // The parameters keep the Python object: the plugin may rebind its attribute later.
    std::shared_ptr<const void> owner(new nb::object(nb::borrow(value)), [](const void* object) {
      nb::gil_scoped_acquire gil;
      delete static_cast<const nb::object*>(object);
    });
    if (nb::isinstance<Float>(value)) return callback_->put(name, nb::inst_ptr<Float>(value), flags, owner);
    if (nb::isinstance<Array3f>(value)) return callback_->put(name, nb::inst_ptr<Array3f>(value), flags, owner);
    if (nb::isinstance<UInt32>(value)) return callback_->put(name, nb::inst_ptr<UInt32>(value), flags, owner);
    if (nb::isinstance<Transform4f>(value)) return callback_->put(name, nb::inst_ptr<Transform4f>(value), flags, owner);
    if (nb::isinstance<TensorXf>(value)) return callback_->put(name, nb::inst_ptr<TensorXf>(value), flags, owner);
    throw TypeError("kiln.render: traverse(): cb.put('" + name +
                    "', value): the value must be an attribute of the plugin holding a kl.Float, kl.Array3f (a "
                    "color), kl.UInt32, kl.TensorXf, a kr.Transform4f or a plugin object, got " +
                    nb::type_name(value.type()).c_str());
  }
  void release() { callback_ = nullptr; }

 private:
  TraversalCallback* callback_;
};

/// kr.BSDF as subclassed in Python: Mitsuba's mi.BSDF contract (sample, eval, pdf and
/// optionally eval_pdf, traverse, parameters_changed; m_components / m_flags).
class PythonBSDF : public BSDF {
 public:
  NB_TRAMPOLINE(BSDF);
  /// What mi.BSDF.__init__(self, props) calls; the properties are the subclass's to read.
  explicit PythonBSDF(nb::handle /*props*/) {}

  std::pair<BSDFSample3f, Color3f> sample(const BSDFContext& ctx, const SurfaceInteraction& si, const Float& sample1,
                                          const Array2f& sample2, const Bool& active) const override {
    nb::gil_scoped_acquire gil;
    nb::object result = required("sample")(ctx, SceneInteraction{si, nullptr}, sample1, sample2, active);
    nb::tuple pair = result_pair(result, "sample");
    if (!nb::isinstance<BSDFSample3f>(pair[0]))
      throw TypeError("kiln.render: " + where("sample") + " must return (kr.BSDFSample3f, weight)");
    return {nb::cast<BSDFSample3f>(pair[0]), result_as<Color3f>(pair[1], "Array3f", where("sample") + "'s weight")};
  }
  Color3f eval(const BSDFContext& ctx, const SurfaceInteraction& si, const Array3f& wo,
               const Bool& active) const override {
    nb::gil_scoped_acquire gil;
    return result_as<Color3f>(required("eval")(ctx, SceneInteraction{si, nullptr}, wo, active), "Array3f",
                              where("eval"));
  }
  Float pdf(const BSDFContext& ctx, const SurfaceInteraction& si, const Array3f& wo,
            const Bool& active) const override {
    nb::gil_scoped_acquire gil;
    return result_as<Float>(required("pdf")(ctx, SceneInteraction{si, nullptr}, wo, active), "Float", where("pdf"));
  }
  std::pair<Color3f, Float> eval_pdf(const BSDFContext& ctx, const SurfaceInteraction& si, const Array3f& wo,
                                     const Bool& active) const override {
    nb::gil_scoped_acquire gil;
    nb::object method = python_override(nb_trampoline.base(), nb::type<BSDF>(), "eval_pdf");
    if (!method.is_valid()) return BSDF::eval_pdf(ctx, si, wo, active);
    nb::tuple pair = result_pair(method(ctx, SceneInteraction{si, nullptr}, wo, active), "eval_pdf");
    return {result_as<Color3f>(pair[0], "Array3f", where("eval_pdf")),
            result_as<Float>(pair[1], "Float", where("eval_pdf"))};
  }
  void traverse(TraversalCallback& callback) override {
    nb::gil_scoped_acquire gil;
    python_traverse(nb_trampoline.base(), nb::type<BSDF>(), callback);
  }
  void parameters_changed(const std::vector<std::string>& keys) override {
    nb::gil_scoped_acquire gil;
    python_parameters_changed(nb_trampoline.base(), nb::type<BSDF>(), keys);
  }

  /// Mitsuba's m_components and m_flags (set in the Python constructor).
  void declare_components(std::vector<uint32_t> components) { set_components(std::move(components)); }
  void declare_flags(uint32_t flags) { set_flags(flags); }

 private:
  std::string where(const char* method) const {
    return std::string(nb::type_name(nb_trampoline.base().type()).c_str()) + "." + method + "()";
  }
  nb::object required(const char* method) const {
    nb::object found = python_override(nb_trampoline.base(), nb::type<BSDF>(), method);
    if (!found.is_valid())
      throw TypeError("kiln.render: " + where(method) +
                      " is missing: a BSDF written in Python defines sample(), "
                      "eval() and pdf()");
    return found;
  }
  nb::tuple result_pair(nb::handle result, const char* method) const {
    if (!nb::isinstance<nb::tuple>(result) || nb::len(result) != 2)
      throw TypeError("kiln.render: " + where(method) + " must return a pair");
    return nb::borrow<nb::tuple>(result);
  }
};

/// A flag argument: a kr.BSDFFlags / kr.ParamFlags member (an enum's .value) or an int.
uint32_t flag_bits(nb::handle value) {
  if (!nb::isinstance<nb::int_>(value) && nb::hasattr(value, "value")) return flag_bits(value.attr("value"));
  return nb::cast<uint32_t>(nb::int_(value));
}

}  // namespace

nb::object python_override(nb::handle self, nb::handle bound_class, const char* name) {
  nb::object method = nb::getattr(self.type(), name, nb::none());
  if (method.is_none() || method.is(nb::getattr(bound_class, name, nb::none()))) return nb::object();
  return nb::getattr(self, name);
}

void python_traverse(nb::handle self, nb::handle bound_class, TraversalCallback& callback) {
  nb::object method = python_override(self, bound_class, "traverse");
  if (!method.is_valid()) return;
  // Owned by Python (a script may keep it); it refuses to work once traverse() returned.
  nb::object handle = nb::cast(PythonTraversal(&callback));
  auto release = [&] { nb::inst_ptr<PythonTraversal>(handle)->release(); };
  try {
    method(handle);
  } catch (...) {
    release();
    throw;
  }
  release();
}

void python_parameters_changed(nb::handle self, nb::handle bound_class, const std::vector<std::string>& keys) {
  nb::object method = python_override(self, bound_class, "parameters_changed");
  if (method.is_valid()) method(keys);
}

void register_python_plugin(PluginKind kind, nb::handle bound_class, const std::string& name, nb::object factory) {
  if (!PyCallable_Check(factory.ptr()))
    throw TypeError("kiln.render: register_" + std::string(kind_tag(kind)) + "('" + name +
                    "', constructor): the constructor must be callable (e.g. lambda props: MyPlugin(props))");
  replace_plugin(kind, name, [kind, name](const Properties& props) -> std::shared_ptr<Object> {
    nb::gil_scoped_acquire gil;
    nb::tuple entry =
        nb::borrow<nb::tuple>(nb::module_::import_("kiln._kiln_render").attr("_python_plugins")[name.c_str()]);
    nb::handle factory = entry[0], bound = entry[1];
    // Owned by Python (a constructor may keep it); it refuses to work once the call returned.
    nb::object view = nb::cast(PythonProperties(&props));
    auto release = [&] { nb::inst_ptr<PythonProperties>(view)->release(); };
    nb::object made;
    try {
      made = factory(view);
    } catch (...) {
      release();
      throw;
    }
    release();
    if (!PyObject_IsInstance(made.ptr(), bound.ptr()))
      throw TypeError("kiln.render: the " + std::string(kind_tag(kind)) + " plugin '" + name +
                      "' registered from Python made a " + nb::type_name(made.type()).c_str() + ", not a " +
                      nb::type_name(bound).c_str() + " subclass");
    if (!nb::inst_ready(made))
      throw TypeError("kiln.render: the " + std::string(kind_tag(kind)) + " plugin '" + name + "' made a " +
                      nb::type_name(made.type()).c_str() + " whose __init__ did not call " +
                      nb::type_name(bound).c_str() + ".__init__(self, props)");
    return nb::cast<std::shared_ptr<Object>>(made);
  });
  nb::module_::import_("kiln._kiln_render").attr("_python_plugins")[name.c_str()] =
      nb::make_tuple(factory, bound_class);
}

void bind_python_plugins(nb::module_& m) {
  nb::class_<PythonProperties>(m, "Properties",
                               "A plugin's parameters (Mitsuba's mi.Properties): what a plugin written in Python "
                               "receives in its constructor.")
      .def(nb::init<const std::string&>(), nb::arg("plugin_name") = "", "An empty set of parameters.")
      .def(
          "has_property", [](const PythonProperties& p, const std::string& name) { return p.get().has(name); },
          nb::arg("name"))
      .def(
          "__contains__", [](const PythonProperties& p, const std::string& name) { return p.get().has(name); },
          nb::arg("name"))
      .def(
          "__getitem__",
          [](const PythonProperties& p, const std::string& name) {
            if (!p.get().has(name)) throw nb::key_error(name.c_str());
            return to_python(p.get().get(name));
          },
          nb::arg("name"))
      .def(
          "get",
          [](const PythonProperties& p, const std::string& name, nb::object fallback) {
            return p.get().has(name) ? to_python(p.get().get(name)) : fallback;
          },
          nb::arg("name"), nb::arg("default") = nb::none())
      .def(
          "__setitem__",
          [](PythonProperties& p, const std::string& name, nb::handle value) {
            p.owned().set(name, from_python(value, name), "kr.Properties");
          },
          nb::arg("name"), nb::arg("value"))
      .def(
          "property_names", [](const PythonProperties& p) { return p.get().names(); }, "The parameters' names.")
      .def("keys", [](const PythonProperties& p) { return p.get().names(); })
      .def("plugin_name", [](const PythonProperties& p) { return p.get().plugin(); })
      .def("id", [](const PythonProperties& p) { return p.get().id(); })
      .def("__repr__", [](const PythonProperties& p) {
        std::string text = "Properties[plugin_name=\"" + p.get().plugin() + "\", properties={";
        for (const std::string& name : p.get().names()) text += "\n  \"" + name + "\",";
        return text + "}]";
      });

  nb::class_<PythonTraversal>(m, "TraversalCallback", "What traverse(cb) of a plugin written in Python fills.")
      .def(
          "put",
          [](PythonTraversal& t, const std::string& name, nb::handle value, nb::handle flags) {
            t.put(name, value, flags.is_none() ? 0u : flag_bits(flags));
          },
          nb::arg("name"), nb::arg("value"), nb::arg("flags") = nb::none(),
          "Lists a parameter: an attribute holding a Kiln array (changed in place by kr.traverse) or a child.");

  nb::class_<BSDF, Object, PythonBSDF>(
      m, "BSDF",
      "How a surface scatters light. Subclass it in Python (Mitsuba's contract: __init__(self, props), sample, "
      "eval, pdf, optionally eval_pdf, traverse, parameters_changed; m_components and m_flags) and register it "
      "with kr.register_bsdf.")
      .def(nb::init<nb::handle>(), nb::arg("props"))
      .def_prop_rw(
          "m_components",
          [](const BSDF& self) {
            std::vector<uint32_t> out;
            for (size_t i = 0; i < self.component_count(); ++i) out.push_back(self.flags(i));
            return out;
          },
          [](BSDF& self, nb::handle components) {
            auto* python = dynamic_cast<PythonBSDF*>(&self);
            if (!python) throw TypeError("kiln.render: BSDF.m_components: only a BSDF written in Python sets it");
            std::vector<uint32_t> flags;
            for (nb::handle item : nb::iter(components)) flags.push_back(flag_bits(item));
            python->declare_components(std::move(flags));
          },
          "The lobes' flags, one per component (kr.BSDFFlags).")
      .def_prop_rw(
          "m_flags", [](const BSDF& self) { return self.flags(); },
          [](BSDF& self, nb::handle flags) {
            auto* python = dynamic_cast<PythonBSDF*>(&self);
            if (!python) throw TypeError("kiln.render: BSDF.m_flags: only a BSDF written in Python sets it");
            python->declare_flags(flag_bits(flags));
          },
          "The union of the lobes' flags (kr.BSDFFlags).")
      .def(
          "flags", [](const BSDF& self) { return self.flags(); }, "The union of the lobes' flags.")
      .def("component_count", [](const BSDF& self) { return self.component_count(); });

  m.attr("_python_plugins") = nb::dict();
  // A scene held in a script's globals that holds a plugin written in that script is a
  // cycle through C++ (scene -> plugin -> its class -> the globals), which only the
  // interpreter's shutdown ends: nanobind would report it as leaked at every exit.
  nb::set_leak_warnings(false);
  m.def(
      "register_bsdf",
      [](const std::string& name, nb::object constructor) {
        register_python_plugin(PluginKind::Bsdf, nb::type<BSDF>(), name, std::move(constructor));
      },
      nb::arg("name"), nb::arg("constructor"),
      "Makes `name` a BSDF plugin whose objects constructor(props) returns (a kr.BSDF subclass written in Python), "
      "for load_dict and XML scenes; registering a name again replaces it.");
}

}  // namespace kiln::python::render
