// kiln.zeros / full / empty / arange / linspace / opaque, and the conversions kiln.cast and
// kiln.reinterpret. The array type comes first, as a type object: kl.zeros(kl.Float, n).
#include "binding.h"

namespace kiln::python {
namespace {

template <typename A> using TypeOf = nb::type_object_t<A>;

template <typename A> void bind_construction(nb::module_& m) {
  using T = PythonScalar<typename A::Value>;
  m.def(
      "zeros", [](TypeOf<A>, int64_t size) { return zeros<A>(to_size(size, "zeros")); }, nb::arg("type"),
      nb::arg("size") = 1, "`size` zeros (a literal: no memory until evaluated).");
  m.def(
      "full", [](TypeOf<A>, T value, int64_t size) { return full<A>(value, to_size(size, "full")); }, nb::arg("type"),
      nb::arg("value"), nb::arg("size") = 1, "`size` copies of `value` (a literal: no memory until evaluated).");
  m.def(
      "empty", [](TypeOf<A>, int64_t size) { return empty<A>(to_size(size, "empty")); }, nb::arg("type"),
      nb::arg("size") = 1, "`size` uninitialized elements (allocated now).");
  m.def(
      "opaque",
      [](TypeOf<A>, T value, int64_t size) {
        return opaque<A>(value, to_size(size, "opaque"), std::source_location());
      },
      nb::arg("type"), nb::arg("value"), nb::arg("size") = 1,
      "`value` passed to kernels at launch instead of baked into their code: changing it "
      "never compiles a new kernel.");
  if constexpr (!std::is_same_v<typename A::Value, bool>) {
    m.def(
        "arange", [](TypeOf<A>, int64_t size) { return arange<A>(to_size(size, "arange")); }, nb::arg("type"),
        nb::arg("size"), "0, 1, ..., size - 1.");
    m.def(
        "arange", [](TypeOf<A>, T start, T stop, T step) { return arange<A>(start, stop, step); }, nb::arg("type"),
        nb::arg("start"), nb::arg("stop"), nb::arg("step") = T(1),
        "start, start + step, ... while below `stop` (as Python's range()).");
  }
  if constexpr (is_float_array_v<A>) {
    m.def(
        "linspace",
        [](TypeOf<A>, T min, T max, int64_t size, bool endpoint) {
          return linspace<A>(min, max, to_size(size, "linspace"), endpoint);
        },
        nb::arg("type"), nb::arg("min"), nb::arg("max"), nb::arg("size"), nb::arg("endpoint") = true,
        "`size` evenly spaced values from `min` to `max` (included unless `endpoint` is False).");
  }
}

/// kl.cast(To, x) and, for types of the same width, kl.reinterpret(To, x).
template <typename To, typename From> void bind_conversion(nb::module_& m) {
  m.def(
      "cast", [](TypeOf<To>, const From& x) { return cast<typename To::Value>(x); }, nb::arg("type"), nb::arg("array"),
      "Converts values to `type`; float to integer saturates (NaN gives 0), to Bool means != 0.");
  if constexpr (sizeof(typename To::Value) == sizeof(typename From::Value) && !std::is_same_v<To, From>) {
    m.def(
        "reinterpret", [](TypeOf<To>, const From& x) { return reinterpret<typename To::Value>(x); }, nb::arg("type"),
        nb::arg("array"), "Reinterprets the bits as `type` (same width).");
  }
}

}  // namespace

void bind_construct(nb::module_& m) {
  for_each_array_type([&](auto to) {
    using To = typename decltype(to)::type;
    bind_construction<To>(m);
    for_each_array_type([&](auto from) { bind_conversion<To, typename decltype(from)::type>(m); });
  });
}

}  // namespace kiln::python
