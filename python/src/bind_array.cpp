// kiln.Bool ... kiln.Float64: construction from scalars, lists and the other array types,
// Python operators (NumPy arrays and scalars as operands: Kiln's operators win), len /
// indexing / slicing / bool() / float() / int(). NumPy and DLPack construction and export
// are added by bind_interop.cpp.
#include "binding.h"

#include <nanobind/operators.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <source_location>

namespace kiln::python {
namespace {

/// A literal made from a Python scalar (no C++ creation site: it came from Python).
template <typename A> A literal(typename A::Value value) { return A(value, std::source_location()); }

/// Binds `fn` for array ∘ scalar, array ∘ array, array ∘ NumPy array and the reflected
/// scalar ∘ array, NumPy array ∘ array. The scalar overload comes first: rejecting an array
/// there is cheaper than rejecting a float as an array.
template <typename A, typename F> void bind_binary(nb::class_<A>& cls, const char* name, const char* rname, F fn) {
  using T = PythonScalar<typename A::Value>;
  cls.def(
         name, [=](const A& a, T b) { return fn(a, literal<A>(b)); }, nb::is_operator())
      .def(
          name, [=](const A& a, const A& b) { return fn(a, b); }, nb::is_operator())
      .def(
          name, [=](const A& a, const NumpyOperand& b) { return fn(a, b.as<A>()); }, nb::is_operator())
      .def(
          rname, [=](const A& a, T b) { return fn(literal<A>(b), a); }, nb::is_operator())
      .def(rname, [=](const A& a, const NumpyOperand& b) { return fn(b.as<A>(), a); }, nb::is_operator());
}
#define KILN_BIND_BINARY(name, rname, symbol) \
  bind_binary(cls, name, rname, [](const A& a, const A& b) { return a symbol b; });

/// A comparison: its reflection is the mirrored comparison (Python calls b.__gt__(a) for a < b).
#define KILN_BIND_COMPARISON(name, symbol)                                                \
  cls.def(                                                                                \
         name, [](const A& a, T b) { return a symbol literal<A>(b); }, nb::is_operator()) \
      .def(                                                                               \
          name, [](const A& a, const A& b) { return a symbol b; }, nb::is_operator())     \
      .def(name, [](const A& a, const NumpyOperand& b) { return a symbol b.as<A>(); }, nb::is_operator());

/// The value of a one-lane array, for bool() / float() / int(); more lanes raise `Error`
/// (NumPy's choice: ValueError for bool(), TypeError for float() and int()).
template <typename Error, typename A> typename A::Value only_value(const A& a, const char* call, const char* hint) {
  if (a.size() != 1)
    throw Error(std::string("kiln: ") + call + ": the array has " + std::to_string(a.size()) + " elements, so " + hint);
  return a.item();
}

/// kl.Int32(kl.UInt32 array) ...: a lazy cast (it fuses into the kernel that uses it) where no
/// value can change by kind (bool to anything, integer to float, float to float, integer
/// widening); otherwise TypeError naming kl.cast.
template <typename To, typename From> void bind_conversion_constructor(nb::class_<To>& cls, const char* name) {
  if constexpr (!std::is_same_v<To, From>) {
    cls.def(
        "__init__",
        [name](To* self, const From& from) {
          if (!implicit_conversion_v<typename To::Value, typename From::Value>)
            throw TypeError(std::string("kiln: ") + name + "(" + python_name<From>() +
                            "): this conversion can change values (fractions, signs or range); convert "
                            "explicitly with kl.cast(kl." +
                            name + ", x) (floats saturate, integers wrap)");
          new (self) To(cast<typename To::Value>(from));
        },
        nb::arg("array"),
        "The values of `array` converted lazily (bool to any type, integer to float, float to "
        "float and integer widening; other conversions need kl.cast).");
  }
}

template <typename A> void bind_array_type(nb::module_& m, const char* name, const char* doc) {
  using Value = typename A::Value;
  using T = PythonScalar<Value>;
  nb::class_<A> cls(m, name, doc);
  cls.def(nb::init<>(), "An array without a value (assign one before use).")
      .def(
          "__init__",
          [](A* self, T value, const std::optional<std::string>& device) {
            DeviceScope scope(device_argument(device));
            new (self) A(literal<A>(value));
          },
          nb::arg("value"), nb::arg("device") = nb::none(),
          "A size-1 array holding `value`; it broadcasts against arrays of any size (and, needing no "
          "memory, joins arrays on any device).")
      .def(nb::init<const A&>(), nb::arg("other"), "Shares the value of `other` (no copy).");
  for_each_array_type([&](auto from) { bind_conversion_constructor<A, typename decltype(from)::type>(cls, name); });
  bind_array_interop(cls);  // after the Kiln types (which speak DLPack too), before the list constructor
  cls.def(
      "__init__",
      [](A* self, const std::vector<Value>& values, const std::optional<std::string>& device) {
        if constexpr (std::is_same_v<Value, bool>) {
          std::vector<uint8_t> bytes(values.begin(), values.end());
          new (self) A(A::steal(detail::make_copy(A::Type, bytes.data(), bytes.size(), device_argument(device))));
        } else {
          new (self) A(A::from(values.data(), values.size(), device_argument(device)));
        }
      },
      nb::arg("values"), nb::arg("device") = nb::none(),
      "An evaluated copy of a list or tuple of values on `device` ('cpu' or 'cuda'; default: the "
      "default device, kl.set_device()).");
  cls.def_prop_ro(
         "device", [](const A& a) { return std::string(device_name(a.device())); },
         "The device the array is on: 'cpu' or 'cuda'.")
      .def(
          "to", [](const A& a, const std::string& device) { return a.to(parse_device(device)); }, nb::arg("device"),
          "The array on `device` ('cpu' or 'cuda'): this array when it is there, else an evaluated copy.");

  KILN_BIND_BINARY("__add__", "__radd__", +)
  KILN_BIND_BINARY("__sub__", "__rsub__", -)
  KILN_BIND_BINARY("__mul__", "__rmul__", *)
  if constexpr (is_int_array_v<A>) {
    // Only for numbers and Kiln's own operands: Int32 / Array3i must reach Array3i.__rtruediv__.
    auto refuse = [name](const A&, PythonNumber<double>) -> A { throw no_true_division(name); };
    bind_binary(cls, "__truediv__", "__rtruediv__", [name](const A&, const A&) -> A { throw no_true_division(name); });
    cls.def("__truediv__", refuse, nb::is_operator()).def("__rtruediv__", refuse, nb::is_operator());
    KILN_BIND_BINARY("__floordiv__", "__rfloordiv__", /)
    KILN_BIND_BINARY("__mod__", "__rmod__", %)
  } else if constexpr (is_float_array_v<A>) {
    KILN_BIND_BINARY("__truediv__", "__rtruediv__", /)
    bind_binary(cls, "__floordiv__", "__rfloordiv__", floor_divide<A>);
    bind_binary(cls, "__mod__", "__rmod__", floor_remainder<A>);
  }
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
    cls.def(
           "__pow__", [](const A& a, T b) { return pow(a, Value(b)); }, nb::is_operator())
        .def(
            "__pow__", [](const A& a, const A& b) { return pow(a, b); }, nb::is_operator())
        .def(
            "__pow__", [](const A& a, const NumpyOperand& b) { return pow(a, b.as<A>()); }, nb::is_operator())
        .def(
            "__rpow__", [](const A& a, T b) { return pow(Value(b), a); }, nb::is_operator())
        .def("__rpow__", [](const A& a, const NumpyOperand& b) { return pow(b.as<A>(), a); }, nb::is_operator());
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
             return bool(only_value<ValueError>(a, "bool()", "its truth value is ambiguous; use kl.any() or kl.all()"));
           })
      .def("__float__",
           [](const A& a) {
             return double(only_value<TypeError>(a, "float()", "it is not one number; index it first"));
           })
      .def("__int__",
           [](const A& a) {
             return python_int(only_value<TypeError>(a, "int()", "it is not one number; index it first"));
           })
      .def(
          "__getitem__", [](const A& a, int64_t i) { return a.read(to_index(i, a.size(), "__getitem__")); },
          nb::arg("index"), "Element `index` (negative counts from the end); evaluates pending work.")
      .def(
          "__getitem__",
          [](const A& a, const nb::slice& slice) {
            auto [start, stop, step, count] = slice.compute(a.size());
            (void)stop;
            Int64 positions = Int64(int64_t(start), std::source_location()) +
                              arange<Int64>(count) * Int64(int64_t(step), std::source_location());
            return gather(a, cast<uint32_t>(positions));
          },
          nb::arg("slice"), "The selected elements as a new (lazy) array.")
      .def(
          "__setitem__",
          [](A& a, int64_t i, T value) {
            scatter(a, literal<A>(value), UInt32(uint32_t(to_index(i, a.size(), "__setitem__"))));
          },
          nb::arg("index"), nb::arg("value"), "Writes one element (a scatter: lazy, in program order).")
      .def(
          "__getitem__", [](const A& a, const Bool&) { return a; }, nb::arg("mask"),
          "Dr.Jit's masked read: the whole array, so that a[mask] += v updates the lanes of `mask` (to select "
          "lanes as NumPy does, gather at kl.compress(mask)).")
      .def(
          "__setitem__", [](A& a, const Bool& mask, const A& value) { a = select(mask, value, a); }, nb::arg("mask"),
          nb::arg("value"), "Masked assignment (Dr.Jit's a[mask] = value): lanes where `mask` is true take `value`.")
      .def(
          "label", [](const A& a) { return detail::label(a.index()); }, "The label given by set_label().")
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
