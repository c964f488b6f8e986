// Elementwise functions: abs, sqrt, rounding, min/max, fma, select, the floating-point
// tests and the math library (sin ... erfinv), one overload per array type.
#include "binding.h"

#include <nanobind/stl/pair.h>

namespace kiln::python {
namespace {

#define KILN_BIND_UNARY(name, doc) m.def(#name, [](const A& a) { return name(a); }, nb::arg("x"), doc);

template <typename A> void bind_elementwise(nb::module_& m) {
  KILN_BIND_UNARY(abs, "Absolute value.")
  KILN_BIND_UNARY(sqrt, "Square root (correctly rounded).")
  KILN_BIND_UNARY(rcp, "Reciprocal 1 / x.")
  KILN_BIND_UNARY(rsqrt, "Reciprocal square root 1 / sqrt(x).")
  KILN_BIND_UNARY(floor, "Rounds down to an integer value.")
  KILN_BIND_UNARY(ceil, "Rounds up to an integer value.")
  KILN_BIND_UNARY(round, "Rounds to the nearest integer value, halfway cases to even.")
  KILN_BIND_UNARY(trunc, "Rounds toward zero to an integer value.")
  m.def("min", [](const A& a, const A& b) { return min(a, b); }, nb::arg("a"), nb::arg("b"), "Lane-wise minimum.");
  m.def("max", [](const A& a, const A& b) { return max(a, b); }, nb::arg("a"), nb::arg("b"), "Lane-wise maximum.");
  m.def(
      "fma", [](const A& a, const A& b, const A& c) { return fma(a, b, c); }, nb::arg("a"), nb::arg("b"), nb::arg("c"),
      "a * b + c, with a single rounding for floats.");
  m.def(
      "select", [](const Bool& mask, const A& t, const A& f) { return select(mask, t, f); }, nb::arg("mask"),
      nb::arg("t"), nb::arg("f"), "Lane-wise `t if mask else f`.");
}

template <typename A> void bind_float_functions(nb::module_& m) {
  KILN_BIND_UNARY(isnan, "True where x is NaN.")
  KILN_BIND_UNARY(isinf, "True where x is +inf or -inf.")
  KILN_BIND_UNARY(isfinite, "True where x is neither NaN nor infinite.")
  KILN_BIND_UNARY(exp, "e^x.")
  KILN_BIND_UNARY(exp2, "2^x.")
  KILN_BIND_UNARY(log, "Natural logarithm.")
  KILN_BIND_UNARY(log2, "Base-2 logarithm.")
  KILN_BIND_UNARY(sinh, "Hyperbolic sine.")
  KILN_BIND_UNARY(cosh, "Hyperbolic cosine.")
  KILN_BIND_UNARY(tanh, "Hyperbolic tangent.")
  KILN_BIND_UNARY(erf, "The error function.")
  KILN_BIND_UNARY(erfinv, "The inverse error function on (-1, 1).")
  KILN_BIND_UNARY(cbrt, "Cube root.")
  KILN_BIND_UNARY(sin, "Sine (radians).")
  KILN_BIND_UNARY(cos, "Cosine (radians).")
  KILN_BIND_UNARY(tan, "Tangent (radians).")
  KILN_BIND_UNARY(asin, "Arc sine.")
  KILN_BIND_UNARY(acos, "Arc cosine.")
  KILN_BIND_UNARY(atan, "Arc tangent.")
  m.def("sincos", [](const A& x) { return sincos(x); }, nb::arg("x"), "(sin(x), cos(x)), sharing the range reduction.");
  m.def(
      "atan2", [](const A& y, const A& x) { return atan2(y, x); }, nb::arg("y"), nb::arg("x"),
      "The angle of the point (x, y), in (-pi, pi].");
  m.def("pow", [](const A& x, const A& y) { return pow(x, y); }, nb::arg("x"), nb::arg("y"), "x^y.");
}
#undef KILN_BIND_UNARY

}  // namespace

void bind_math(nb::module_& m) {
  for_each_array_type([&](auto type) {
    using A = typename decltype(type)::type;
    bind_elementwise<A>(m);
    if constexpr (is_float_array_v<A>) bind_float_functions<A>(m);
  });
}

}  // namespace kiln::python
