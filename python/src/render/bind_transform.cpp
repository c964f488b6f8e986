// kr.Transform4f: affine transforms as Mitsuba's Python API chains them
// (kr.Transform4f().translate([0, 0, 1]).rotate([0, 1, 0], 30)), and from 4 x 4 matrices.
#include "render/render_binding.h"

#include <kiln/errors.h>
#include <kiln/render/transform.h>

#include <nanobind/ndarray.h>
#include <nanobind/stl/array.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

namespace kiln::python::render {
namespace {

using kiln::render::Transform4f;

/// Three numbers as an Array3f.
Array3f vector3(const std::array<float, 3>& v) { return Array3f(Float(v[0]), Float(v[1]), Float(v[2])); }

/// A kl.Array3f (Mitsuba's Point3f, Vector3f ...) or a sequence of three numbers, for the
/// argument `name` of `method`.
Array3f vector3(nb::handle v, const char* method, const char* name) {
  if (nb::isinstance<Array3f>(v)) return nb::cast<Array3f>(v);
  std::array<float, 3> numbers{};
  if (!nb::try_cast(v, numbers))
    throw TypeError(std::string("kiln.render: Transform4f.") + method + "(): '" + name +
                    "' must be three numbers or a kl.Array3f, got " +
                    nb::cast<std::string>(nb::str(nb::handle(v.type()).attr("__name__"))));
  return vector3(numbers);
}

/// A transform from 16 row-major numbers.
Transform4f from_rows(const std::vector<std::vector<double>>& rows) {
  if (rows.size() != 4)
    throw ValueError("kiln.render: Transform4f(): expected a 4 x 4 matrix, got " + std::to_string(rows.size()) +
                     " rows");
  std::array<double, 16> values{};
  for (size_t r = 0; r < 4; ++r) {
    if (rows[r].size() != 4)
      throw ValueError("kiln.render: Transform4f(): expected a 4 x 4 matrix, row " + std::to_string(r) + " has " +
                       std::to_string(rows[r].size()) + " entries");
    for (size_t c = 0; c < 4; ++c) values[r * 4 + c] = rows[r][c];
  }
  return Transform4f::from_rows(values);
}

}  // namespace

void bind_transform(nb::module_& m) {
  nb::class_<Transform4f>(m, "Transform4f",
                          "An affine transform (a 4 x 4 matrix and its inverse, Kiln arrays). Chained calls "
                          "multiply on the right, as in Mitsuba: T().translate(t).rotate(a, 30) rotates first.")
      .def(nb::init<>(), "The identity.")
      .def(nb::init<const Matrix4f&>(), nb::arg("matrix"), "The transform with this matrix (its inverse is computed).")
      .def(
          "__init__",
          [](Transform4f* self, const std::vector<std::vector<double>>& rows) {
            new (self) Transform4f(from_rows(rows));
          },
          nb::arg("matrix"), "The transform with a 4 x 4 nested list or NumPy array as matrix.")
      .def(
          "translate", [](const Transform4f& t, nb::handle v) { return t.translate(vector3(v, "translate", "v")); },
          nb::arg("v"), "This · Translate(v).")
      .def(
          "scale",
          [](const Transform4f& t, const nb::handle& v) {
            if (nb::isinstance<nb::float_>(v) || nb::isinstance<nb::int_>(v)) {
              float s = nb::cast<float>(v);
              return t.scale(vector3({s, s, s}));
            }
            return t.scale(vector3(v, "scale", "v"));
          },
          nb::arg("v"), "This · Scale(v) (a number scales uniformly).")
      .def(
          "rotate",
          [](const Transform4f& t, nb::handle axis, float angle) {
            return t.rotate(vector3(axis, "rotate", "axis"), Float(angle));
          },
          nb::arg("axis"), nb::arg("angle"), "This · Rotate(axis, angle in degrees).")
      .def(
          "look_at",
          [](const Transform4f& t, nb::handle origin, nb::handle target, nb::handle up) {
            return t.look_at(vector3(origin, "look_at", "origin"), vector3(target, "look_at", "target"),
                             vector3(up, "look_at", "up"));
          },
          nb::arg("origin"), nb::arg("target"), nb::arg("up"), "This · LookAt(origin, target, up).")
      .def("inverse", &Transform4f::inverse, "The inverse transform.")
      .def("__matmul__", &Transform4f::operator*, nb::arg("other"), "The composition: `other` is applied first.")
      .def("apply_point", &Transform4f::apply_point, nb::arg("p"), "The transformed point (translation applies).")
      .def("apply_vector", &Transform4f::apply_vector, nb::arg("v"), "The transformed direction (no translation).")
      .def("apply_normal", &Transform4f::apply_normal, nb::arg("n"),
           "The transformed normal (by the inverse transpose).")
      .def_prop_ro("matrix", &Transform4f::matrix, "The 4 x 4 matrix (kl.Matrix4f).")
      .def_prop_ro("inverse_matrix", &Transform4f::inverse_matrix, "The inverse's matrix (kl.Matrix4f).")
      .def("__repr__", [](const Transform4f& t) {
        std::string text = "Transform4f([";
        for (size_t r = 0; r < 4; ++r) {
          text += r ? ",\n             [" : "[";
          for (size_t c = 0; c < 4; ++c) text += (c ? ", " : "") + std::to_string(t.matrix()(r, c).read(0));
          text += "]";
        }
        return text + "])";
      });
}

}  // namespace kiln::python::render
