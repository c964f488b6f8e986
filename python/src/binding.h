// Shared pieces of the Python binding: the list of array types, the one-line conversions
// every bind_*.cpp file needs (Python sizes and indices, type objects), and the entry
// points of the per-topic files. The binding only converts and forwards (STYLE.md).
//
// Start reading here: module.cpp calls one bind_<topic>() per file, in the order below.
#pragma once

#include <kiln/kiln.h>
#include <kiln/quaternion.h>
#include <kiln/texture.h>
#include <nanobind/nanobind.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace kiln::python {

namespace nb = nanobind;

/// The seven array types, most used first: overloads are tried in this order, so a
/// kl.sqrt(Float) call finds its overload at once.
using ArrayTypes = std::tuple<Float, Float64, UInt32, Int32, Bool, UInt64, Int64>;
/// Calls f(std::type_identity<A>{}) for every array type.
template <typename F> void for_each_array_type(F&& f) {
  std::apply([&](auto... arrays) { (f(std::type_identity<decltype(arrays)>{}), ...); }, ArrayTypes{});
}

/// A Python or NumPy boolean scalar (nanobind's own bool conversion takes only True and
/// False); the type Python scalars of Bool arrays arrive as.
struct PythonBool {
  bool value;
  operator bool() const { return value; }
};
/// A Python or NumPy number for an array of `T`. nanobind's own conversion would take any
/// object with __float__ or __index__, one-lane Kiln arrays included, which would mix array
/// types silently and drop their derivatives.
template <typename T> struct PythonNumber {
  T value;
  PythonNumber(T v = T()) : value(v) {}
  operator T() const { return value; }
};
/// The type a Python scalar for an array of `T` arrives as.
template <typename T> using PythonScalar = std::conditional_t<std::is_same_v<T, bool>, PythonBool, PythonNumber<T>>;

/// A NumPy array (of one or more axes) as the operand of an operator: only numpy.ndarray
/// matches, not Kiln's own arrays (which speak DLPack too). as<A>() converts it as the
/// constructor A(array) does, so the dtype rule of bind_interop.cpp applies.
struct NumpyOperand {
  nb::object array;
  template <typename A> A as() const { return nb::cast<A>(nb::type<A>()(array)); }
};

/// Whether a Kiln array of From converts to one of To without a possible change of value by
/// kind: bool to any type, integer to float, float to float, and integer widening. Other
/// conversions are explicit (kl.cast). NumPy integer arrays are checked value by value instead.
template <typename To, typename From> inline constexpr bool implicit_conversion_v =
    std::is_same_v<From, bool> ||
    (!std::is_same_v<To, bool> &&
     (std::is_floating_point_v<To> ||
      (std::is_integral_v<From> &&
       (std::is_signed_v<To> == std::is_signed_v<From> ? sizeof(To) >= sizeof(From)
                                                       : std::is_signed_v<To> && sizeof(To) > sizeof(From)))));

/// The vector types, the matrix types (structs of arrays; CompositeTypes both) and the
/// tensor types. Python's kiln.tree and kiln.autodiff read these lists from
/// kl._kiln._VALUE_CLASSES (bind_layout.cpp) instead of keeping their own.
using VectorTypes = std::tuple<Array2f, Array3f, Array4f, Array2u, Array3u, Array2i, Array3i, Array3f64>;
using MatrixTypes = std::tuple<Matrix2f, Matrix3f, Matrix4f>;
using CompositeTypes = decltype(std::tuple_cat(std::declval<VectorTypes>(), std::declval<MatrixTypes>()));
using TensorTypes = std::tuple<TensorXf, TensorXd, TensorXu, TensorXi, TensorXb>;

/// The other values that are structs of arrays (for_each_array() visits them): mask
/// vectors, quaternions and textures. With the arrays, CompositeTypes, tensors and PCG32,
/// every Kiln value eval(), schedule() and make_opaque() take.
using StructOfArraysTypes = std::tuple<Vector<Bool, 2>, Vector<Bool, 3>, Vector<Bool, 4>, Quaternion4f, Quaternion4f64,
                                       Texture1f, Texture2f, Texture3f, Texture1f64, Texture2f64, Texture3f64>;

/// Calls f(std::type_identity<T>{}) for every type T of the tuple type `Types` (which
/// need not be default-constructible).
template <typename Types, typename F> void for_each_type(F&& f) {
  [&]<size_t... I>(std::index_sequence<I...>) {
    (f(std::type_identity<std::tuple_element_t<I, Types>>{}), ...);
  }(std::make_index_sequence<std::tuple_size_v<Types>>{});
}

template <typename A> inline constexpr bool is_float_array_v = std::is_floating_point_v<typename A::Value>;
template <typename A> inline constexpr bool is_int_array_v =
    std::is_integral_v<typename A::Value> && !std::is_same_v<typename A::Value, bool>;

/// A Python size argument as size_t; negative sizes raise ValueError naming `op`.
size_t to_size(int64_t size, const char* op);
/// A Python index (negative counts from the end) into `size` elements; raises IndexError.
size_t to_index(int64_t index, size_t size, const char* op);

/// x // y and x % y on float arrays and tensors, with Python's floor semantics: the quotient
/// rounded down, the remainder with the sign of y (a == (a // b) * b + a % b).
template <typename A> A floor_divide(const A& a, const A& b) { return floor(a / b); }
template <typename A> A floor_remainder(const A& a, const A& b) { return fma(-floor(a / b), b, a); }
/// The Python class name of a bound type: "Float", "TensorXf".
template <typename C> std::string python_name() { return nb::cast<std::string>(nb::type<C>().attr("__name__")); }
/// The error of `/` on integer arrays and tensors (`type` is the Python class), which have no
/// true division.
TypeError no_true_division(const char* type);
/// int(value) as Python computes it: floats truncate, NaN and inf raise.
template <typename T> nb::object python_int(T value) {
  if constexpr (std::is_floating_point_v<T>) {
    PyObject* truncated = PyLong_FromDouble(double(value));
    if (!truncated) throw nb::python_error();
    return nb::steal(truncated);
  } else {
    return nb::int_(std::conditional_t<std::is_same_v<T, bool>, int, T>(value));
  }
}

/// An optional mask argument (None: every lane active).
/// The device a `device=` argument names: the default device when None.
inline Device device_argument(const std::optional<std::string>& device) {
  return device ? parse_device(*device) : default_device();
}

inline Bool mask_or_all(const Bool* mask) { return mask ? *mask : Bool(true, std::source_location()); }

/// The flat lists of plain arrays that the runtime-typed cores take (bind_control.cpp): a
/// Python sequence of Kiln arrays as handles (TypeError naming `what` for anything else),
/// and handles as a list of array objects.
detail::Values to_values(nb::handle list, const char* what);
nb::list to_list(const detail::Values& values);
/// A Python callback that maps a list of arrays to a list of arrays.
detail::BodyFn body_function(nb::callable fn, const char* what);

/// Collects the arrays inside `value` (an array, vector, matrix, PCG32, or a list/tuple
/// of them) as node indices; anything else raises TypeError naming `op`.
void collect_indices(nb::handle value, std::vector<detail::Index>& out, const char* op);

/// NumPy / DLPack construction and export for an array type (bind_interop.cpp).
template <typename A> void bind_array_interop(nb::class_<A>& cls);
/// The same for a vector or matrix type: NumPy arrays of shape (n, N) or (n, N, N).
template <typename V> void bind_composite_interop(nb::class_<V>& cls);

/// Componentwise functions, powers and comparisons of a vector type (bind_vector_math.cpp).
template <typename V> void bind_vector_math(nb::module_& m, nb::class_<V>& cls);

void bind_array(nb::module_& m);
void bind_construct(nb::module_& m);
void bind_math(nb::module_& m);
void bind_memory(nb::module_& m);
void bind_vector(nb::module_& m);
void bind_matrix(nb::module_& m);
void bind_random(nb::module_& m);
void bind_runtime(nb::module_& m);
void bind_control(nb::module_& m);
void bind_interop(nb::module_& m);
void bind_autodiff(nb::module_& m);
void bind_tensor(nb::module_& m);
void bind_quaternion(nb::module_& m);
void bind_texture(nb::module_& m);
void bind_elementwise(nb::module_& m);
void bind_mask_vectors(nb::module_& m);
void bind_layout(nb::module_& m);
/// kl._kiln._VALUE_CLASSES; after every value class is bound.
void bind_value_classes(nb::module_& m);
void bind_reduce(nb::module_& m);
void bind_nn(nb::module_& m);

}  // namespace kiln::python

namespace nanobind::detail {
template <> struct type_caster<kiln::python::PythonBool> {
  NB_TYPE_CASTER(kiln::python::PythonBool, const_name("bool"))
  bool from_python(handle src, uint32_t, cleanup_list*) noexcept {
    std::string_view type = Py_TYPE(src.ptr())->tp_name;
    if (src.ptr() != Py_True && src.ptr() != Py_False && type != "numpy.bool" && type != "numpy.bool_") return false;
    value.value = PyObject_IsTrue(src.ptr()) == 1;
    return true;
  }
  static handle from_cpp(kiln::python::PythonBool b, rv_policy, cleanup_list*) noexcept {
    return handle(b.value ? Py_True : Py_False).inc_ref();
  }
};
template <typename T> struct type_caster<kiln::python::PythonNumber<T>> {
  NB_TYPE_CASTER(kiln::python::PythonNumber<T>, make_caster<T>::Name)
  bool from_python(handle src, uint8_t flags, cleanup_list* cleanup) noexcept {
    PyObject* o = src.ptr();
    if (!PyFloat_Check(o) && !PyLong_Check(o) && std::string_view(Py_TYPE(o)->tp_name).substr(0, 6) != "numpy.")
      return false;
    make_caster<T> number;
    if (!number.from_python(src, flags, cleanup)) return false;
    value.value = number.value;
    return true;
  }
  static handle from_cpp(kiln::python::PythonNumber<T> number, rv_policy policy, cleanup_list* cleanup) noexcept {
    return make_caster<T>::from_cpp(number.value, policy, cleanup);
  }
};

template <> struct type_caster<kiln::python::NumpyOperand> {
  NB_TYPE_CASTER(kiln::python::NumpyOperand, const_name("numpy.ndarray"))
  bool from_python(handle src, uint32_t, cleanup_list*) noexcept {
    if (std::string_view(Py_TYPE(src.ptr())->tp_name) != "numpy.ndarray") return false;
    PyObject* ndim = PyObject_GetAttrString(src.ptr(), "ndim");
    bool scalar = !ndim || PyLong_AsLong(ndim) == 0;  // 0-d arrays go to the scalar overloads
    Py_XDECREF(ndim);
    PyErr_Clear();
    if (scalar) return false;
    value.array = borrow(src);
    return true;
  }
  static handle from_cpp(const kiln::python::NumpyOperand& operand, rv_policy, cleanup_list*) noexcept {
    return operand.array.inc_ref();
  }
};
}  // namespace nanobind::detail
