// kiln.clip / clamp / lerp / square / sign / fmod / copysign / hypot / log1p / expm1 on
// arrays (elementwise.h, math/exp_log.h), one overload per array type.
#include "binding.h"

namespace kiln::python {
namespace {

template <typename A> void bind_elementwise_helpers(nb::module_& m) {
  m.def(
      "clip", [](const A& x, const A& lo, const A& hi) { return clip(x, lo, hi); }, nb::arg("x"), nb::arg("lo"),
      nb::arg("hi"), "x limited to [lo, hi]: min(max(x, lo), hi).");
  m.def(
      "clamp", [](const A& x, const A& lo, const A& hi) { return clamp(x, lo, hi); }, nb::arg("x"), nb::arg("lo"),
      nb::arg("hi"), "The same as clip().");
  m.def("square", [](const A& x) { return square(x); }, nb::arg("x"), "x * x.");
  m.def(
      "sign", [](const A& x) { return sign(x); }, nb::arg("x"),
      "1 where x >= 0 (zeros of both signs included), -1 elsewhere (NaN included), as Dr.Jit. "
      "NumPy's sign() differs: 0 for zeros, NaN for NaN.");
  m.def(
      "fmod", [](const A& x, const A& y) { return fmod(x, y); }, nb::arg("x"), nb::arg("y"),
      "Remainder of x / y with the sign of x (C's fmod, as numpy.fmod; Python's % and numpy.mod "
      "take the sign of y). Exact for floats; integers: x % 0 is x.");
  if constexpr (is_float_array_v<A>) {
    m.def(
        "lerp", [](const A& a, const A& b, const A& t) { return lerp(a, b, t); }, nb::arg("a"), nb::arg("b"),
        nb::arg("t"), "a + t (b - a), exactly a at t = 0 and b at t = 1.");
    m.def(
        "copysign", [](const A& x, const A& y) { return copysign(x, y); }, nb::arg("x"), nb::arg("y"),
        "|x| with the sign bit of y (as C's copysign).");
    m.def(
        "hypot", [](const A& x, const A& y) { return hypot(x, y); }, nb::arg("x"), nb::arg("y"),
        "sqrt(x² + y²) without intermediate overflow or underflow.");
    m.def("log1p", [](const A& x) { return log1p(x); }, nb::arg("x"), "log(1 + x), accurate for tiny x.");
    m.def("expm1", [](const A& x) { return expm1(x); }, nb::arg("x"), "e^x - 1, accurate for tiny x.");
  }
}

}  // namespace

void bind_elementwise(nb::module_& m) {
  for_each_array_type([&](auto type) {
    using A = typename decltype(type)::type;
    if constexpr (!std::is_same_v<A, Bool>) bind_elementwise_helpers<A>(m);
  });
}

}  // namespace kiln::python
