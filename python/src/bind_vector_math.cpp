// Componentwise functions, powers and comparisons on vectors (vector_math.h), and the mask
// vectors kiln.Array2b / Array3b / Array4b that comparisons return (as Dr.Jit's).
#include "binding.h"

namespace kiln::python {
namespace {

template <size_t N> void bind_mask_vector(nb::module_& m, const char* name) {
  using V = Vector<Bool, N>;
  nb::class_<V> cls(m, name, "A vector of masks: one Bool array per component (what vector comparisons give).");
  cls.def(nb::init<>(), "Components without values (assign them before use).")
      .def(nb::init<const Bool&>(), nb::arg("value"), "Every component equal to `value`.")
      .def(
          "__len__", [](const V&) { return N; }, "Number of components.")
      .def("size", &V::size, "Number of lanes: the largest component size.")
      .def(
          "__getitem__", [](const V& v, int64_t i) { return v[to_index(i, N, "__getitem__")]; }, nb::arg("index"))
      .def(
          "__setitem__", [](V& v, int64_t i, const Bool& value) { v[to_index(i, N, "__setitem__")] = value; },
          nb::arg("index"), nb::arg("value"))
      .def("__bool__", [](const V&) -> bool {
        throw ValueError(
            std::string("kiln: bool(): the truth value of a mask vector is ambiguous; use "
                        "kiln.all(m) or kiln.any(m) per lane, then kiln.all()/kiln.any() over lanes"));
      });
  const char* names[] = {"x", "y", "z", "w"};
  for (size_t i = 0; i < N; ++i)
    cls.def_prop_rw(
        names[i], [i](const V& v) { return v[i]; }, [i](V& v, const Bool& value) { v[i] = value; },
        "One component (a Bool array).");
  m.def(
      "any", [](const V& v) { return any(v); }, nb::arg("x"),
      "Per lane: is any component true? (A Bool array; as Dr.Jit, any() of a vector reduces its components.)");
  m.def("all", [](const V& v) { return all(v); }, nb::arg("x"), "Per lane: is every component true? (A Bool array.)");
}

}  // namespace

#define KILN_BIND_VECTOR_UNARY(name, doc) m.def(#name, [](const V& v) { return name(v); }, nb::arg("x"), doc);

template <typename V> void bind_vector_math(nb::module_& m, nb::class_<V>& cls) {
  using T = typename V::Component;
  constexpr size_t N = V::Size;
  using Mask = Vector<Bool, N>;
  m.def(
      "min", [](const V& a, const T& b) { return min(a, b); }, nb::arg("a"), nb::arg("b"),
      "Minimum of every component with `b`.");
  m.def(
      "max", [](const V& a, const T& b) { return max(a, b); }, nb::arg("a"), nb::arg("b"),
      "Maximum of every component with `b`.");
  m.def(
      "clip", [](const V& x, const T& lo, const T& hi) { return clip(x, lo, hi); }, nb::arg("x"), nb::arg("lo"),
      nb::arg("hi"), "Every component limited to [lo, hi].");
  m.def(
      "clip", [](const V& x, const V& lo, const V& hi) { return clip(x, lo, hi); }, nb::arg("x"), nb::arg("lo"),
      nb::arg("hi"), "Each component limited to the matching components of lo and hi.");
  KILN_BIND_VECTOR_UNARY(square, "x * x per component.")
  KILN_BIND_VECTOR_UNARY(sign, "sign() per component (1 for x >= 0, else -1).")
  m.def(
      "select", [](const Mask& mask, const V& t, const V& f) { return select(mask, t, f); }, nb::arg("mask"),
      nb::arg("t"), nb::arg("f"), "Per component `t if mask else f`.");
  cls.def(
         "__eq__", [](const V& a, const V& b) { return a == b; }, nb::is_operator())
      .def(
          "__ne__", [](const V& a, const V& b) { return a != b; }, nb::is_operator())
      .def(
          "__lt__", [](const V& a, const V& b) { return a < b; }, nb::is_operator())
      .def(
          "__le__", [](const V& a, const V& b) { return a <= b; }, nb::is_operator())
      .def(
          "__gt__", [](const V& a, const V& b) { return a > b; }, nb::is_operator())
      .def(
          "__ge__", [](const V& a, const V& b) { return a >= b; }, nb::is_operator())
      .def(
          "__eq__", [](const V& a, const T& b) { return a == b; }, nb::is_operator())
      .def(
          "__ne__", [](const V& a, const T& b) { return a != b; }, nb::is_operator())
      .def(
          "__lt__", [](const V& a, const T& b) { return a < b; }, nb::is_operator())
      .def(
          "__le__", [](const V& a, const T& b) { return a <= b; }, nb::is_operator())
      .def(
          "__gt__", [](const V& a, const T& b) { return a > b; }, nb::is_operator())
      .def("__ge__", [](const V& a, const T& b) { return a >= b; }, nb::is_operator());
  if constexpr (is_float_array_v<T>) {
    KILN_BIND_VECTOR_UNARY(sqrt, "Square root per component.")
    KILN_BIND_VECTOR_UNARY(rsqrt, "1 / sqrt(x) per component.")
    KILN_BIND_VECTOR_UNARY(rcp, "1 / x per component.")
    KILN_BIND_VECTOR_UNARY(floor, "floor() per component.")
    KILN_BIND_VECTOR_UNARY(ceil, "ceil() per component.")
    KILN_BIND_VECTOR_UNARY(round, "round() per component (halfway cases to even).")
    KILN_BIND_VECTOR_UNARY(trunc, "trunc() per component.")
    KILN_BIND_VECTOR_UNARY(exp, "e^x per component.")
    KILN_BIND_VECTOR_UNARY(exp2, "2^x per component.")
    KILN_BIND_VECTOR_UNARY(expm1, "e^x - 1 per component.")
    KILN_BIND_VECTOR_UNARY(log, "Natural logarithm per component.")
    KILN_BIND_VECTOR_UNARY(log2, "Base-2 logarithm per component.")
    KILN_BIND_VECTOR_UNARY(log1p, "log(1 + x) per component.")
    KILN_BIND_VECTOR_UNARY(sin, "Sine per component.")
    KILN_BIND_VECTOR_UNARY(cos, "Cosine per component.")
    KILN_BIND_VECTOR_UNARY(tan, "Tangent per component.")
    KILN_BIND_VECTOR_UNARY(tanh, "Hyperbolic tangent per component.")
    m.def("pow", [](const V& a, const V& b) { return pow(a, b); }, nb::arg("x"), nb::arg("y"), "x^y per component.");
    m.def(
        "pow", [](const V& a, const T& b) { return pow(a, b); }, nb::arg("x"), nb::arg("y"),
        "Every component to the power y.");
    m.def(
        "lerp", [](const V& a, const V& b, const T& t) { return lerp(a, b, t); }, nb::arg("a"), nb::arg("b"),
        nb::arg("t"), "a + t (b - a) per component.");
    m.def(
        "lerp", [](const V& a, const V& b, const V& t) { return lerp(a, b, t); }, nb::arg("a"), nb::arg("b"),
        nb::arg("t"), "a + t (b - a) with one t per component.");
    m.def(
        "copysign", [](const V& a, const V& b) { return copysign(a, b); }, nb::arg("x"), nb::arg("y"),
        "copysign() per component.");
    m.def(
        "fmod", [](const V& a, const V& b) { return fmod(a, b); }, nb::arg("x"), nb::arg("y"), "fmod() per component.");
    m.def(
        "hypot", [](const V& a, const V& b) { return hypot(a, b); }, nb::arg("x"), nb::arg("y"),
        "hypot() per component.");
    cls.def(
           "__pow__", [](const V& a, const V& b) { return pow(a, b); }, nb::is_operator())
        .def("__pow__", [](const V& a, const T& b) { return pow(a, b); }, nb::is_operator());
  }
}
#undef KILN_BIND_VECTOR_UNARY

#define KILN_INSTANTIATE(V) template void bind_vector_math<V>(nb::module_&, nb::class_<V>&);
KILN_INSTANTIATE(Array2f)
KILN_INSTANTIATE(Array3f)
KILN_INSTANTIATE(Array4f)
KILN_INSTANTIATE(Array2u)
KILN_INSTANTIATE(Array3u)
KILN_INSTANTIATE(Array2i)
KILN_INSTANTIATE(Array3i)
KILN_INSTANTIATE(Array3f64)
#undef KILN_INSTANTIATE

void bind_mask_vectors(nb::module_& m) {
  bind_mask_vector<2>(m, "Array2b");
  bind_mask_vector<3>(m, "Array3b");
  bind_mask_vector<4>(m, "Array4b");
}

}  // namespace kiln::python
