// kr.traverse(obj) → kr.SceneParameters: a mapping from Mitsuba's keys to the scene's
// values (the scene's own arrays, as in Mitsuba); assignment converts Python values
// (numbers, lists, NumPy or Kiln arrays, kr.Transform4f) to the parameter's type, and
// update() applies the changes (also from an optimizer or a mapping).
#include "render/render_binding.h"

#include <kiln/errors.h>
#include <kiln/render/optimizer.h>
#include <kiln/render/parameters.h>

#include <nanobind/stl/array.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

namespace kiln::python::render {
namespace {

using namespace kiln::render;

/// The parameters together with the object they were taken from (kept alive).
struct BoundParameters {
  std::shared_ptr<Object> root;
  SceneParameters parameters;
};

/// params[key]: Kiln arrays are the scene's own (as in Mitsuba: changing them in place,
/// e.g. kl.enable_grad(params[key]), changes the scene at the next update(), which
/// SceneParameters sees; keep a copy with kl.Float(params[key])); transforms are copies,
/// the film size a tuple.
nb::object get(nb::handle self_handle, const std::string& key) {
  BoundParameters& self = nb::cast<BoundParameters&>(self_handle);
  if (!self.parameters.contains(key)) throw nb::key_error(key.c_str());
  const ParameterRef& ref = self.parameters.get(key);
  return std::visit(
      [&](auto* pointer) -> nb::object {
        using T = std::remove_pointer_t<decltype(pointer)>;
        if constexpr (std::is_same_v<T, std::array<uint32_t, 2>>) {
          return nb::make_tuple((*pointer)[0], (*pointer)[1]);
        } else if constexpr (std::is_same_v<T, Transform4f>) {
          return nb::cast(*pointer);
        } else {
          return nb::cast(pointer, nb::rv_policy::reference_internal, self_handle);
        }
      },
      ref);
}

/// A Float from a number, a sequence of numbers or a Kiln Float.
Float to_float(const nb::handle& value) {
  if (nb::isinstance<Float>(value)) return nb::cast<Float>(value);
  if (nb::isinstance<nb::float_>(value) || nb::isinstance<nb::int_>(value)) return Float(nb::cast<float>(value));
  return nb::cast<Float>(nb::module_::import_("kiln").attr("Float")(value));
}

/// Signed indices (mi.Int faces, as Mitsuba's tutorials assign them) as UInt32;
/// ValueError for a negative one.
UInt32 to_unsigned(const std::string& key, const Int32& value) {
  if (value.size() != 0) {
    int32_t lowest = min(value).item();
    if (lowest < 0)
      throw ValueError("kiln.render: scene parameters: '" + key + "' takes unsigned values; the new value holds " +
                       std::to_string(lowest));
  }
  return cast<uint32_t>(value);
}

void set(BoundParameters& self, const std::string& key, const nb::handle& value) {
  if (!self.parameters.contains(key)) throw nb::key_error(key.c_str());
  std::visit(
      [&](auto* pointer) {
        using T = std::remove_pointer_t<decltype(pointer)>;
        if constexpr (std::is_same_v<T, std::array<uint32_t, 2>>) {
          self.parameters.set(key, nb::cast<std::array<int64_t, 2>>(value));
        } else if constexpr (std::is_same_v<T, Float>) {
          self.parameters.set(key, to_float(value));
        } else if constexpr (std::is_same_v<T, Array3f>) {
          if (nb::isinstance<Array3f>(value)) return self.parameters.set(key, nb::cast<Array3f>(value));
          if (nb::isinstance<Float>(value)) {  // gray: the same in the three channels
            Float gray = nb::cast<Float>(value);
            return self.parameters.set(key, Array3f(gray, gray, gray));
          }
          std::array<float, 3> v;
          if (!nb::try_cast(value, v))
            throw TypeError("kiln.render: scene parameters: '" + key +
                            "' holds an Array3f; give one, a Float, or three numbers, not " +
                            nb::cast<std::string>(nb::str(nb::type_name(value.type()))));
          self.parameters.set(key, Array3f(Float(v[0]), Float(v[1]), Float(v[2])));
        } else if constexpr (std::is_same_v<T, TensorXf>) {
          TensorXf tensor = nb::isinstance<TensorXf>(value)
                                ? nb::cast<TensorXf>(value)
                                : nb::cast<TensorXf>(nb::module_::import_("kiln").attr("TensorXf")(value));
          // A flat value with as many entries as the tensor keeps its shape (texels as one array).
          if (tensor.shape().size() == 1 && tensor.array().size() == pointer->array().size())
            tensor = TensorXf(tensor.array(), pointer->shape());
          self.parameters.set(key, tensor);
        } else if constexpr (std::is_same_v<T, UInt32>) {
          if (nb::isinstance<UInt32>(value)) return self.parameters.set(key, nb::cast<UInt32>(value));
          if (nb::isinstance<Int32>(value)) return self.parameters.set(key, to_unsigned(key, nb::cast<Int32>(value)));
          self.parameters.set(key, nb::cast<UInt32>(nb::module_::import_("kiln").attr("UInt32")(value)));
        } else {
          if (nb::isinstance<Transform4f>(value)) return self.parameters.set(key, nb::cast<Transform4f>(value));
          self.parameters.set(key,
                              nb::cast<Transform4f>(nb::module_::import_("kiln.render").attr("Transform4f")(value)));
        }
      },
      self.parameters.get(key));
}

}  // namespace

/// Mitsuba's ParamFlags: what traverse() says of a parameter's derivatives.
enum class ParamFlags : uint32_t {
  Differentiable = param_flags::kDifferentiable,
  NonDifferentiable = param_flags::kNonDifferentiable,
  Discontinuous = param_flags::kDiscontinuous,
};

void bind_parameters(nb::module_& m) {
  nb::enum_<ParamFlags>(m, "ParamFlags", nb::is_flag(), "What a scene parameter's derivatives are (as Mitsuba's).")
      .value("Differentiable", ParamFlags::Differentiable)
      .value("NonDifferentiable", ParamFlags::NonDifferentiable, "render() cannot differentiate it (a setting).")
      .value("Discontinuous", ParamFlags::Discontinuous, "Its derivatives need visibility (silhouette) terms.");
  nb::class_<BoundParameters>(m, "SceneParameters",
                              "A scene's parameters under Mitsuba's keys: read them, assign new values, then update().")
      .def(
          "keys", [](const BoundParameters& p) { return p.parameters.keys(); }, "The keys, sorted.")
      .def("__contains__", [](const BoundParameters& p, const std::string& key) { return p.parameters.contains(key); })
      .def("__len__", [](const BoundParameters& p) { return p.parameters.keys().size(); })
      .def("__iter__", [](const BoundParameters& p) { return nb::iter(nb::cast(p.parameters.keys())); })
      .def("__getitem__", &get, nb::arg("key"))
      .def(
          "items",
          [](nb::handle self) {
            nb::list out;
            for (const std::string& key : nb::cast<BoundParameters&>(self).parameters.keys())
              out.append(nb::make_tuple(key, get(self, key)));
            return out;
          },
          "(key, value) pairs, as a mapping's.")
      .def(
          "keep",
          [](BoundParameters& p, nb::handle keys) {
            if (keys.is_none()) return;
            nb::list patterns = nb::isinstance<nb::str>(keys) ? nb::list() : nb::list(keys);
            if (nb::isinstance<nb::str>(keys)) patterns.append(keys);
            nb::module_ re = nb::module_::import_("re");
            std::vector<nb::object> matchers;
            for (nb::handle pattern : patterns) matchers.push_back(re.attr("compile")(pattern).attr("match"));
            p.parameters.keep_only([&](const std::string& key) {
              for (const nb::object& match : matchers)
                if (!match(key).is_none()) return true;
              return false;
            });
          },
          nb::arg("keys").none(),
          "Keeps only the parameters whose key matches `keys` (a regular expression matched at the start, or a "
          "list of them), as Mitsuba's keep(); None keeps all.")
      .def(
          "flags",
          [](const BoundParameters& p, const std::string& key) {
            return ParamFlags(p.parameters.flags(key) & ~param_flags::kResizable);  // Mitsuba's flags only
          },
          nb::arg("key"), "The parameter's kr.ParamFlags.")
      .def("__setitem__", &set, nb::arg("key"), nb::arg("value"),
           "Assigns a value of the parameter's type and size (checked); call update() to apply.")
      .def(
          "update",
          [](BoundParameters& self, nb::handle values) {
            if (nb::isinstance<ParameterOptimizer>(values)) {
              self.parameters.update(nb::cast<const ParameterOptimizer&>(values));
            } else if (!values.is_none()) {
              if (!nb::hasattr(values, "keys"))
                throw TypeError(std::string("kiln.render: SceneParameters.update(values): values must be a kr.SGD, "
                                            "kr.Adam or a mapping from keys to values, got ") +
                                nb::type_name(values.type()).c_str());
              for (nb::handle key : values.attr("keys")()) set(self, nb::cast<std::string>(key), values[key]);
            }
            self.parameters.update();
          },
          nb::arg("values") = nb::none(),
          "Applies the assigned values (and arrays from params[key] changed in place): the objects that own them "
          "(and their parents) update. `values` (an optimizer, or a mapping) is assigned first, as in Mitsuba.")
      .def("__repr__", [](const BoundParameters& p) {
        std::string text = "SceneParameters[";
        for (const std::string& key : p.parameters.keys()) text += "\n  " + key;
        return text + "\n]";
      });
  m.def(
      "traverse",
      [](const std::shared_ptr<Object>& object) { return new BoundParameters{object, SceneParameters(*object)}; },
      nb::arg("object"), "The parameters of a scene (or any object) under Mitsuba's keys.");
}

}  // namespace kiln::python::render
