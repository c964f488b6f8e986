// kiln.Array2f ... kiln.Array3i: vectors of arrays with component access, arithmetic,
// geometry (dot, cross, norm, normalize), vector gathers and scatters, and cast between
// vector types of the same dimension.
#include "binding.h"

#include <nanobind/operators.h>
#include <nanobind/stl/array.h>
#include <nanobind/stl/vector.h>

namespace kiln::python {
namespace {

template <typename V> void bind_components(nb::class_<V>& cls) {
  using T = typename V::Component;
  constexpr size_t N = V::Size;
  const char* names[] = {"x", "y", "z", "w"};
  for (size_t i = 0; i < N; ++i)
    cls.def_prop_rw(
        names[i], [i](const V& v) { return v[i]; }, [i](V& v, const T& value) { v[i] = value; },
        "One component (an array).");
  if constexpr (N == 2) cls.def(nb::init<const T&, const T&>(), nb::arg("x"), nb::arg("y"));
  if constexpr (N == 3) cls.def(nb::init<const T&, const T&, const T&>(), nb::arg("x"), nb::arg("y"), nb::arg("z"));
  if constexpr (N == 4)
    cls.def(nb::init<const T&, const T&, const T&, const T&>(), nb::arg("x"), nb::arg("y"), nb::arg("z"), nb::arg("w"));
}

/// A vector from a Python sequence of its N components (numbers or arrays).
template <typename V> V from_components(const std::array<typename V::Component, V::Size>& components) {
  V v;
  for (size_t i = 0; i < V::Size; ++i) v[i] = components[i];
  return v;
}

/// Dr.Jit's spelling: a list or tuple of N components stands for a vector in constructors
/// and arithmetic (`Array3f([1, 2, 3])`, `color *= [1.5, 0.2, 0.2]`).
template <typename V> void bind_sequence_operands(nb::class_<V>& cls) {
  using Seq = std::array<typename V::Component, V::Size>;
  cls.def(
      "__init__", [](V* self, const Seq& c) { new (self) V(from_components<V>(c)); }, nb::arg("components"),
      "From a sequence of the components (numbers or arrays).");
  cls.def(
         "__add__", [](const V& a, const Seq& b) { return a + from_components<V>(b); }, nb::is_operator())
      .def(
          "__radd__", [](const V& a, const Seq& b) { return from_components<V>(b) + a; }, nb::is_operator())
      .def(
          "__sub__", [](const V& a, const Seq& b) { return a - from_components<V>(b); }, nb::is_operator())
      .def(
          "__rsub__", [](const V& a, const Seq& b) { return from_components<V>(b) - a; }, nb::is_operator())
      .def(
          "__mul__", [](const V& a, const Seq& b) { return a * from_components<V>(b); }, nb::is_operator())
      .def("__rmul__", [](const V& a, const Seq& b) { return from_components<V>(b) * a; }, nb::is_operator());
  if constexpr (is_float_array_v<typename V::Component>)
    cls.def(
           "__truediv__", [](const V& a, const Seq& b) { return a / from_components<V>(b); }, nb::is_operator())
        .def("__rtruediv__", [](const V& a, const Seq& b) { return from_components<V>(b) / a; }, nb::is_operator());
}

/// One component from a Python value: an array of the component's type, a number, or a
/// sequence of numbers (Dr.Jit's Vector3u(list_x, list_y, list_z)).
template <typename T> T component_from(nb::handle value, size_t index, const char* vector_name) {
  if (nb::isinstance<T>(value)) return nb::cast<T>(value);
  if (nb::isinstance<nb::float_>(value) || nb::isinstance<nb::int_>(value) || nb::isinstance<nb::bool_>(value))
    return T(nb::cast<typename T::Value>(value));
  std::vector<typename T::Value> values;
  if (!nb::try_cast(value, values))
    throw TypeError(std::string("kiln: ") + vector_name + "(): component " + std::to_string(index) +
                    " must be an array, a number or a sequence of numbers, got " + nb::type_name(value.type()).c_str());
  return T::from(values);
}

/// Components given as arrays, numbers or sequences of numbers, mixed.
template <typename V> void bind_mixed_components(nb::class_<V>& cls, const char* name) {
  using T = typename V::Component;
  cls.def(
      "__init__",
      [name](V* self, nb::args components) {
        if (components.size() != V::Size) throw nb::next_overload();  // e.g. one NumPy array: bound later
        new (self) V();
        for (size_t i = 0; i < V::Size; ++i) (*self)[i] = component_from<T>(components[i], i, name);
      },
      "From N components, each an array, a number or a sequence of numbers.");
}

template <typename V> void bind_vector_type(nb::module_& m, const char* name) {
  using T = typename V::Component;
  constexpr size_t N = V::Size;
  nb::class_<V> cls(m, name, "A vector of arrays: one value per component and lane (a struct of arrays).");
  cls.def(nb::init<>(), "Components without values (assign them before use).")
      .def(nb::init<const T&>(), nb::arg("value"), "Every component equal to `value`.")
      .def(nb::init<const V&>(), nb::arg("other"), "Shares the components of `other`.");
  bind_components(cls);
  cls.def(
         "__len__", [](const V&) { return N; }, "Number of components.")
      .def("size", &V::size, "Number of lanes: the largest component size.")
      .def(
          "__getitem__", [](const V& v, int64_t i) { return v[to_index(i, N, "__getitem__")]; }, nb::arg("index"))
      .def(
          "__setitem__", [](V& v, int64_t i, const T& value) { v[to_index(i, N, "__setitem__")] = value; },
          nb::arg("index"), nb::arg("value"))
      .def(
          "__getitem__", [](const V& v, const Bool&) { return v; }, nb::arg("mask"),
          "Dr.Jit's masked read: the whole vector, so that v[mask] += w updates the lanes of `mask`.")
      .def(
          "__setitem__", [](V& v, const Bool& mask, const V& value) { v = select(mask, value, v); }, nb::arg("mask"),
          nb::arg("value"), "Masked assignment (Dr.Jit's v[mask] = value): lanes where `mask` is true take `value`.")
      .def(
          "__setitem__", [](V& v, const Bool& mask, const T& value) { v = select(mask, V(value), v); }, nb::arg("mask"),
          nb::arg("value"), "Masked assignment of one value to every component.");
  cls.def(nb::self + nb::self)
      .def(nb::self - nb::self)
      .def(nb::self * nb::self)
      .def(nb::self + T())
      .def(nb::self - T())
      .def(nb::self * T())
      .def(T() + nb::self)
      .def(T() - nb::self)
      .def(T() * nb::self)
      .def(-nb::self)
      .def("__abs__", [](const V& v) { return abs(v); });
  bind_sequence_operands(cls);
  bind_mixed_components(cls, name);
  if constexpr (is_float_array_v<T>) {
    cls.def(nb::self / nb::self).def(nb::self / T()).def(T() / nb::self);
  } else {  // as for integer arrays: // truncates (C++), / is refused
    cls.def(
           "__floordiv__", [](const V& a, const V& b) { return a / b; }, nb::is_operator())
        .def(
            "__floordiv__", [](const V& a, const T& b) { return a / b; }, nb::is_operator())
        .def("__rfloordiv__", [](const V& a, const T& b) { return b / a; }, nb::is_operator());
    auto refuse = [name](const V&, nb::handle) -> V { throw no_true_division(name); };
    cls.def("__truediv__", refuse, nb::is_operator()).def("__rtruediv__", refuse, nb::is_operator());
  }

  m.def("abs", [](const V& v) { return abs(v); }, nb::arg("x"), "Componentwise absolute value.");
  m.def("min", [](const V& a, const V& b) { return min(a, b); }, nb::arg("a"), nb::arg("b"), "Componentwise minimum.");
  m.def("max", [](const V& a, const V& b) { return max(a, b); }, nb::arg("a"), nb::arg("b"), "Componentwise maximum.");
  m.def(
      "fma", [](const V& a, const V& b, const V& c) { return fma(a, b, c); }, nb::arg("a"), nb::arg("b"), nb::arg("c"),
      "a * b + c per component.");
  m.def(
      "select", [](const Bool& mask, const V& t, const V& f) { return select(mask, t, f); }, nb::arg("mask"),
      nb::arg("t"), nb::arg("f"), "Lane-wise `t if mask else f` for the whole vector.");
  m.def(
      "dot", [](const V& a, const V& b) { return dot(a, b); }, nb::arg("a"), nb::arg("b"),
      "Per-lane dot product (an array).");
  m.def("squared_norm", [](const V& a) { return squared_norm(a); }, nb::arg("x"), "Per-lane dot(x, x).");
  if constexpr (is_float_array_v<T>) {
    m.def("norm", [](const V& a) { return norm(a); }, nb::arg("x"), "Per-lane length.");
    m.def(
        "normalize", [](const V& a) { return normalize(a); }, nb::arg("x"),
        "x / norm(x); a zero vector gives NaN components.");
  }
  if constexpr (N == 3)
    m.def("cross", [](const V& a, const V& b) { return cross(a, b); }, nb::arg("a"), nb::arg("b"), "Cross product.");
  m.def(
      "gather",
      [](nb::type_object_t<V>, const T& source, const UInt32& index, const Bool* active) {
        return gather<V>(source, index, mask_or_all(active));
      },
      nb::arg("type"), nb::arg("source"), nb::arg("index"), nb::arg("active") = nb::none(),
      "Vector `index` of a flat array holding vectors back to back (component j of lane i at "
      "source[N * index[i] + j]).");
  m.def(
      "scatter",
      [](T& target, const V& value, const UInt32& index, const Bool* active) {
        scatter(target, value, index, mask_or_all(active));
      },
      nb::arg("target"), nb::arg("value"), nb::arg("index"), nb::arg("active") = nb::none(),
      "Writes `value` to vector `index` of a flat array laid out as for gather().");
  m.def(
      "scatter_add",
      [](T& target, const V& value, const UInt32& index, const Bool* active) {
        scatter_add(target, value, index, mask_or_all(active));
      },
      nb::arg("target"), nb::arg("value"), nb::arg("index"), nb::arg("active") = nb::none(),
      "Atomically adds `value` to vector `index` of a flat array laid out as for gather().");
  bind_composite_interop(cls);
  bind_vector_math(m, cls);
}

/// kl.cast(To, v) between vector types of the same dimension.
template <typename To, typename From> void bind_vector_cast(nb::module_& m) {
  if constexpr (To::Size == From::Size && !std::is_same_v<To, From>)
    m.def(
        "cast", [](nb::type_object_t<To>, const From& v) { return cast<typename To::Component::Value>(v); },
        nb::arg("type"), nb::arg("vector"), "Converts every component to the component type of `type`.");
}

}  // namespace

void bind_vector(nb::module_& m) {
  bind_vector_type<Array2f>(m, "Array2f");
  bind_vector_type<Array3f>(m, "Array3f");
  bind_vector_type<Array4f>(m, "Array4f");
  bind_vector_type<Array2u>(m, "Array2u");
  bind_vector_type<Array3u>(m, "Array3u");
  bind_vector_type<Array2i>(m, "Array2i");
  bind_vector_type<Array3i>(m, "Array3i");
  bind_vector_type<Array3f64>(m, "Array3f64");
  std::apply(
      [&](auto... to) {
        auto bind_from = [&](auto to_type) {
          std::apply([&](auto... from) { (bind_vector_cast<decltype(to_type), decltype(from)>(m), ...); },
                     VectorTypes{});
        };
        (bind_from(to), ...);
      },
      VectorTypes{});
}

}  // namespace kiln::python
