// kr.Transform4f: affine transforms as Mitsuba's Python API chains them
// (kr.Transform4f().translate([0, 0, 1]).rotate([0, 1, 0], 30)), and from 4 x 4 matrices.
#include "render/render_binding.h"

#include <kiln/errors.h>
#include <kiln/render/camera.h>
#include <kiln/render/frame.h>
#include <kiln/render/transform.h>

#include <nanobind/ndarray.h>
#include <nanobind/stl/array.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

namespace kiln::python::render {
namespace {

using kiln::render::Frame3f;
using kiln::render::Transform4f;

/// A kl.Array3f (Mitsuba's Point3f, Vector3f ...) or three numbers, for the argument `name`
/// of `method`.
Array3f vector3(nb::handle v, const char* method, const char* name) {
  return as_vector<Array3f>(v, std::string("Transform4f.") + method + "(): '" + name + "'");
}

/// The transform whose linear part has the frame's axes as columns.
Transform4f frame_transform(const Frame3f& frame) {
  Float zero(0.0f), one(1.0f);
  return Transform4f(Matrix4f(frame.s.x, frame.t.x, frame.n.x, zero, frame.s.y, frame.t.y, frame.n.y, zero, frame.s.z,
                              frame.t.z, frame.n.z, zero, zero, zero, zero, one));
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
            if (nb::isinstance<nb::float_>(v) || nb::isinstance<nb::int_>(v) || nb::isinstance<Float>(v)) {
              Float s = nb::cast<Float>(v);
              return t.scale(Array3f(s, s, s));
            }
            return t.scale(vector3(v, "scale", "v"));
          },
          nb::arg("v"), "This · Scale(v) (a number scales uniformly).")
      .def(
          "rotate",
          [](const Transform4f& t, nb::handle axis, const Float& angle) {
            return t.rotate(vector3(axis, "rotate", "axis"), angle);
          },
          nb::arg("axis"), nb::arg("angle"),
          "This · Rotate(axis, angle in degrees); a kl.Float angle keeps its derivatives (a pose optimized as "
          "numbers).")
      .def(
          "look_at",
          [](const Transform4f& t, nb::handle origin, nb::handle target, nb::handle up) {
            return t.look_at(vector3(origin, "look_at", "origin"), vector3(target, "look_at", "target"),
                             vector3(up, "look_at", "up"));
          },
          nb::arg("origin"), nb::arg("target"), nb::arg("up"), "This · LookAt(origin, target, up).")
      .def(
          "perspective",
          [](const Transform4f& t, float fov, float near, float far) {
            return t * Transform4f(kiln::render::perspective_matrix(Float(fov), near, far));
          },
          nb::arg("fov"), nb::arg("near"), nb::arg("far"),
          "This · Perspective(fov, near, far): camera space to clip space, depth from [near, far] to [0, 1] "
          "(Mitsuba's ProjectiveTransform4f.perspective).")
      .def(
          "orthographic",
          [](const Transform4f& t, float near, float far) {
            Float one(1.0f);
            return t.scale(Array3f(one, one, Float(1.0f / (far - near))))
                .translate(Array3f(Float(0.0f), Float(0.0f), Float(-near)));
          },
          nb::arg("near"), nb::arg("far"), "This · Orthographic(near, far): depth from [near, far] to [0, 1].")
      .def(
          "to_frame", [](const Transform4f& t, const Frame3f& frame) { return t * frame_transform(frame); },
          nb::arg("frame"), "This · the map from the frame's local coordinates to the world (columns s, t, n).")
      .def(
          "from_frame", [](const Transform4f& t, const Frame3f& frame) { return t * frame_transform(frame).inverse(); },
          nb::arg("frame"), "This · the map from the world to the frame's local coordinates.")
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
