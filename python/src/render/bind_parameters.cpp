// kr.traverse(obj) → kr.SceneParameters: a mapping from Mitsuba's keys to the scene's
// values; assignment converts Python values (numbers, lists, NumPy or Kiln arrays,
// kr.Transform4f) to the parameter's type, and update() applies the changes.
#include "render/render_binding.h"

#include <kiln/errors.h>
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

nb::object get(BoundParameters& self, const std::string& key) {
  if (!self.parameters.contains(key)) throw nb::key_error(key.c_str());
  return std::visit(
      [](auto* pointer) -> nb::object {
        using T = std::remove_pointer_t<decltype(pointer)>;
        if constexpr (std::is_same_v<T, std::array<uint32_t, 2>>)
          return nb::make_tuple((*pointer)[0], (*pointer)[1]);
        else
          return nb::cast(*pointer);
      },
      self.parameters.get(key));
}

/// A Float from a number, a sequence of numbers or a Kiln Float.
Float to_float(const nb::handle& value) {
  if (nb::isinstance<Float>(value)) return nb::cast<Float>(value);
  if (nb::isinstance<nb::float_>(value) || nb::isinstance<nb::int_>(value)) return Float(nb::cast<float>(value));
  return nb::cast<Float>(nb::module_::import_("kiln").attr("Float")(value));
}

void set(BoundParameters& self, const std::string& key, const nb::handle& value) {
  if (!self.parameters.contains(key)) throw nb::key_error(key.c_str());
  std::visit(
      [&](auto* pointer) {
        using T = std::remove_pointer_t<decltype(pointer)>;
        if constexpr (std::is_same_v<T, std::array<uint32_t, 2>>) {
          auto pair = nb::cast<std::array<int64_t, 2>>(value);
          if (pair[0] < 0 || pair[1] < 0 || pair[0] > (1 << 15) || pair[1] > (1 << 15))
            throw ValueError("kiln.render: scene parameters: '" + key + "' must be two integers between 0 and 32768");
          self.parameters.set(key, std::array<uint32_t, 2>{uint32_t(pair[0]), uint32_t(pair[1])});
        } else if constexpr (std::is_same_v<T, Float>) {
          self.parameters.set(key, to_float(value));
        } else if constexpr (std::is_same_v<T, Array3f>) {
          if (nb::isinstance<Array3f>(value)) return self.parameters.set(key, nb::cast<Array3f>(value));
          auto v = nb::cast<std::array<float, 3>>(value);
          self.parameters.set(key, Array3f(Float(v[0]), Float(v[1]), Float(v[2])));
        } else if constexpr (std::is_same_v<T, UInt32>) {
          if (nb::isinstance<UInt32>(value)) return self.parameters.set(key, nb::cast<UInt32>(value));
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

void bind_parameters(nb::module_& m) {
  nb::class_<BoundParameters>(m, "SceneParameters",
                              "A scene's parameters under Mitsuba's keys: read them, assign new values, then update().")
      .def(
          "keys", [](const BoundParameters& p) { return p.parameters.keys(); }, "The keys, sorted.")
      .def("__contains__", [](const BoundParameters& p, const std::string& key) { return p.parameters.contains(key); })
      .def("__len__", [](const BoundParameters& p) { return p.parameters.keys().size(); })
      .def("__iter__", [](const BoundParameters& p) { return nb::iter(nb::cast(p.parameters.keys())); })
      .def("__getitem__", &get, nb::arg("key"))
      .def("__setitem__", &set, nb::arg("key"), nb::arg("value"),
           "Assigns a value of the parameter's type and size (checked); call update() to apply.")
      .def(
          "update", [](BoundParameters& p) { p.parameters.update(); },
          "Applies the assigned values: the objects that own them (and their parents) update.")
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
