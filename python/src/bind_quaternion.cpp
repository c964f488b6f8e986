// kiln.Quaternion4f / Quaternion4f64 (quaternion.h): component access, the Hamilton
// product and arithmetic, conj, rcp, exp, log, rotate, rotate_vector, slerp, and the
// conversions to and from rotation matrices (Matrix3f / Matrix4f).
#include "binding.h"

#include <kiln/quaternion.h>
#include <nanobind/operators.h>

namespace kiln::python {
namespace {

template <typename Q> void bind_quaternion_type(nb::module_& m, const char* name) {
  using T = typename Q::Component;
  using V = Vector<T, 3>;
  nb::class_<Q> cls(m, name,
                    "A quaternion per lane, x i + y j + z k + w (imaginary parts first, real part w last; a "
                    "struct of four arrays).");
  cls.def(nb::init<>(), "Components without values (assign them before use).")
      .def(nb::init<const T&, const T&, const T&, const T&>(), nb::arg("x"), nb::arg("y"), nb::arg("z"), nb::arg("w"),
           "Imaginary parts x, y, z and real part w (arrays or plain numbers).")
      .def(nb::init<const V&, const T&>(), nb::arg("imag"), nb::arg("real"), "From imaginary and real parts.")
      .def(nb::init<const Q&>(), nb::arg("other"), "Shares the components of `other`.")
      .def_static("identity", &Q::identity, "0 i + 0 j + 0 k + 1: the rotation by zero.");
  const char* names[] = {"x", "y", "z", "w"};
  for (size_t i = 0; i < 4; ++i)
    cls.def_prop_rw(
        names[i], [i](const Q& q) { return q[i]; }, [i](Q& q, const T& value) { q[i] = value; },
        "One component (an array).");
  cls.def(
         "__len__", [](const Q&) { return 4; }, "Number of components.")
      .def("size", &Q::size, "Number of lanes: the largest component size.")
      .def(
          "__getitem__", [](const Q& q, int64_t i) { return q[to_index(i, 4, "__getitem__")]; }, nb::arg("index"))
      .def(
          "__setitem__", [](Q& q, int64_t i, const T& value) { q[to_index(i, 4, "__setitem__")] = value; },
          nb::arg("index"), nb::arg("value"));
  cls.def(nb::self + nb::self)
      .def(nb::self - nb::self)
      .def(-nb::self)
      .def(nb::self * nb::self, "The Hamilton product: a * b rotates by b, then by a.")
      .def(nb::self / nb::self, "a * rcp(b).")
      .def(nb::self * T())
      .def(T() * nb::self)
      .def(nb::self / T());

  m.def("real", [](const Q& q) { return real(q); }, nb::arg("q"), "The real part w.");
  m.def("imag", [](const Q& q) { return imag(q); }, nb::arg("q"), "The imaginary parts (x, y, z) as a vector.");
  m.def(
      "dot", [](const Q& a, const Q& b) { return dot(a, b); }, nb::arg("a"), nb::arg("b"),
      "Per-lane four-component dot product.");
  m.def("squared_norm", [](const Q& q) { return squared_norm(q); }, nb::arg("q"), "Per-lane |q|².");
  m.def("norm", [](const Q& q) { return norm(q); }, nb::arg("q"), "Per-lane |q|.");
  m.def(
      "normalize", [](const Q& q) { return normalize(q); }, nb::arg("q"),
      "q / |q|; a zero quaternion gives NaN components.");
  m.def(
      "conj", [](const Q& q) { return conj(q); }, nb::arg("q"),
      "The conjugate (-x, -y, -z, w): the inverse rotation of a unit quaternion.");
  m.def("rcp", [](const Q& q) { return rcp(q); }, nb::arg("q"), "The inverse conj(q) / |q|².");
  m.def("exp", [](const Q& q) { return exp(q); }, nb::arg("q"), "The quaternion exponential.");
  m.def(
      "log", [](const Q& q) { return log(q); }, nb::arg("q"),
      "The principal quaternion logarithm; a negative real quaternion gives NaN imaginary parts.");
  m.def(
      "select", [](const Bool& mask, const Q& t, const Q& f) { return select(mask, t, f); }, nb::arg("mask"),
      nb::arg("t"), nb::arg("f"), "Lane-wise `t if mask else f`.");
  m.def(
      "rotate", [](nb::type_object_t<Q>, const V& axis, const T& angle) { return rotate<Q>(axis, angle); },
      nb::arg("type"), nb::arg("axis"), nb::arg("angle"),
      "The unit quaternion of a rotation by `angle` radians about the unit vector `axis`.");
  m.def(
      "rotate_vector", [](const Q& q, const V& v) { return rotate_vector(q, v); }, nb::arg("q"), nb::arg("v"),
      "`v` rotated by the unit quaternion `q` (q v conj(q)).");
  m.def(
      "slerp", [](const Q& a, const Q& b, const T& t) { return slerp(a, b, t); }, nb::arg("a"), nb::arg("b"),
      nb::arg("t"), "Spherical linear interpolation between unit quaternions along the shorter arc.");
  if constexpr (std::is_same_v<T, Float>) {  // the bound matrix types hold Float
    m.def(
        "quat_to_matrix",
        [](const Q& q, int64_t size) -> nb::object {
          if (size == 3) return nb::cast(quat_to_matrix<Matrix3f>(q));
          if (size == 4) return nb::cast(quat_to_matrix<Matrix4f>(q));
          throw ValueError("kiln: quat_to_matrix(): size must be 3 (Matrix3f) or 4 (Matrix4f); got " +
                           std::to_string(size));
        },
        nb::arg("q"), nb::arg("size") = 4, "The rotation matrix of a unit quaternion (Matrix3f or Matrix4f).");
    m.def(
        "matrix_to_quat", [](const Matrix3f& mat) { return matrix_to_quat(mat); }, nb::arg("m"),
        "The unit quaternion of a rotation matrix.");
    m.def(
        "matrix_to_quat", [](const Matrix4f& mat) { return matrix_to_quat(mat); }, nb::arg("m"),
        "The unit quaternion of the rotation in the upper-left 3 x 3 block.");
  }
}

}  // namespace

void bind_quaternion(nb::module_& m) {
  bind_quaternion_type<Quaternion4f>(m, "Quaternion4f");
  bind_quaternion_type<Quaternion4f64>(m, "Quaternion4f64");
}

}  // namespace kiln::python
