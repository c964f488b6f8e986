// kiln.Bool ... kiln.Float64: construction from scalars and lists, Python operators,
// len / indexing / slicing / truth value. NumPy and DLPack construction and export are
// added by bind_interop.cpp.
#include "binding.h"

#include <nanobind/operators.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <source_location>

namespace kiln::python {
namespace {

/// A literal made from a Python scalar (no C++ creation site: it came from Python).
template <typename A> A literal(typename A::Value value) { return A(value, std::source_location()); }

/// Binds `symbol` for array ∘ scalar, array ∘ array and scalar ∘ array. The scalar overload
/// comes first: rejecting an array there is cheaper than rejecting a float as an array.
#define KILN_BIND_BINARY(name, rname, symbol)                                                  \
  cls.def(name, [](const A& a, T b) { return a symbol literal<A>(b); }, nb::is_operator())     \
      .def(name, [](const A& a, const A& b) { return a symbol b; }, nb::is_operator())         \
      .def(rname, [](const A& a, T b) { return literal<A>(b) symbol a; }, nb::is_operator());

#define KILN_BIND_COMPARISON(name, symbol)                                                     \
  cls.def(name, [](const A& a, T b) { return a symbol literal<A>(b); }, nb::is_operator())     \
      .def(name, [](const A& a, const A& b) { return a symbol b; }, nb::is_operator());

template <typename A> void bind_array_type(nb::module_& m, const char* name, const char* doc) {
  using Value = typename A::Value;
  using T = PythonScalar<Value>;
  nb::class_<A> cls(m, name, doc);
  cls.def(nb::init<>(), "An array without a value (assign one before use).")
      .def("__init__", [](A* self, T value) { new (self) A(literal<A>(value)); }, nb::arg("value"),
           "A size-1 array holding `value`; it broadcasts against arrays of any size.")
      .def(nb::init<const A&>(), nb::arg("other"), "Shares the value of `other` (no copy).");
  bind_array_interop(cls);  // before the list constructor: NumPy arrays are sequences too
  cls.def("__init__",
           [](A* self, const std::vector<Value>& values) {
             if constexpr (std::is_same_v<Value, bool>) {
               std::vector<uint8_t> bytes(values.begin(), values.end());
               new (self) A(A::steal(detail::make_copy(A::Type, bytes.data(), bytes.size())));
             } else {
               new (self) A(A::from(values));
             }
           },
           nb::arg("values"), "An evaluated copy of a list or tuple of values.");

  KILN_BIND_BINARY("__add__", "__radd__", +)
  KILN_BIND_BINARY("__sub__", "__rsub__", -)
  KILN_BIND_BINARY("__mul__", "__rmul__", *)
  KILN_BIND_BINARY("__truediv__", "__rtruediv__", /)
  KILN_BIND_BINARY("__mod__", "__rmod__", %)
  KILN_BIND_BINARY("__and__", "__rand__", &)
  KILN_BIND_BINARY("__or__", "__ror__", |)
  KILN_BIND_BINARY("__xor__", "__rxor__", ^)
  KILN_BIND_BINARY("__lshift__", "__rlshift__", <<)
  KILN_BIND_BINARY("__rshift__", "__rrshift__", >>)
  KILN_BIND_COMPARISON("__eq__", ==)
  KILN_BIND_COMPARISON("__ne__", !=)
  KILN_BIND_COMPARISON("__lt__", <)
  KILN_BIND_COMPARISON("__le__", <=)
  KILN_BIND_COMPARISON("__gt__", >)
  KILN_BIND_COMPARISON("__ge__", >=)
  if constexpr (is_float_array_v<A>) {
    cls.def("__pow__", [](const A& a, const A& b) { return pow(a, b); }, nb::is_operator())
        .def("__pow__", [](const A& a, T b) { return pow(a, b); }, nb::is_operator())
        .def("__rpow__", [](const A& a, T b) { return pow(b, a); }, nb::is_operator());
  }
  cls.def("__neg__", [](const A& a) { return -a; })
      .def("__invert__", [](const A& a) { return ~a; })
      .def("__abs__", [](const A& a) { return abs(a); })
      .def("__pos__", [](const A& a) { return a; });

  cls.def("__len__", &A::size)
      .def("size", &A::size, "Number of lanes (elements).")
      .def("item", &A::item, "The value of a size-1 array (evaluates pending work).")
      .def("__bool__",
           [](const A& a) {
             if (a.size() != 1)
               throw ValueError("kiln: bool(): the truth value of an array of " + std::to_string(a.size()) +
                                " elements is ambiguous; use kiln.any() or kiln.all()");
             return bool(a.item());
           })
      .def("__getitem__", [](const A& a, int64_t i) { return a.read(to_index(i, a.size(), "__getitem__")); },
           nb::arg("index"), "Element `index` (negative counts from the end); evaluates pending work.")
      .def("__getitem__",
           [](const A& a, const nb::slice& slice) {
             auto [start, stop, step, count] = slice.compute(a.size());
             (void) stop;
             Int64 positions = Int64(int64_t(start), std::source_location()) +
                               arange<Int64>(count) * Int64(int64_t(step), std::source_location());
             return gather(a, cast<uint32_t>(positions));
           },
           nb::arg("slice"), "The selected elements as a new (lazy) array.")
      .def("__setitem__",
           [](A& a, int64_t i, T value) {
             scatter(a, literal<A>(value), UInt32(uint32_t(to_index(i, a.size(), "__setitem__"))));
           },
           nb::arg("index"), nb::arg("value"), "Writes one element (a scatter: lazy, in program order).")
      .def("label", [](const A& a) { return detail::label(a.index()); }, "The label given by set_label().")
      .def_prop_ro("index", &A::index, "The IR node this array refers to (0: none); for diagnostics.");

  // Python scalars convert implicitly where an array is expected (kl.select(m, x, 0.0)).
  nb::implicitly_convertible<T, A>();
}
#undef KILN_BIND_BINARY
#undef KILN_BIND_COMPARISON

}  // namespace

void bind_array(nb::module_& m) {
  bind_array_type<Bool>(m, "Bool", "A lazily evaluated 1-D array of booleans (one byte each).");
  bind_array_type<Int32>(m, "Int32", "A lazily evaluated 1-D array of 32-bit signed integers.");
  bind_array_type<UInt32>(m, "UInt32", "A lazily evaluated 1-D array of 32-bit unsigned integers.");
  bind_array_type<Int64>(m, "Int64", "A lazily evaluated 1-D array of 64-bit signed integers.");
  bind_array_type<UInt64>(m, "UInt64", "A lazily evaluated 1-D array of 64-bit unsigned integers.");
  bind_array_type<Float>(m, "Float", "A lazily evaluated 1-D array of 32-bit floats.");
  bind_array_type<Float64>(m, "Float64", "A lazily evaluated 1-D array of 64-bit floats.");
}

}  // namespace kiln::python
