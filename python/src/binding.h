// Shared pieces of the Python binding: the list of array types, the one-line conversions
// every bind_*.cpp file needs (Python sizes and indices, type objects), and the entry
// points of the per-topic files. The binding only converts and forwards (STYLE.md).
//
// Start reading here: module.cpp calls one bind_<topic>() per file, in the order below.
#pragma once

#include <kiln/kiln.h>
#include <nanobind/nanobind.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

namespace kiln::python {

namespace nb = nanobind;

/// The seven array types, most used first: overloads are tried in this order, so a
/// kl.sqrt(Float) call finds its overload at once.
using ArrayTypes = std::tuple<Float, Float64, UInt32, Int32, Bool, UInt64, Int64>;
/// Calls f(std::type_identity<A>{}) for every array type.
template <typename F> void for_each_array_type(F&& f) {
  std::apply([&](auto... arrays) { (f(std::type_identity<decltype(arrays)>{}), ...); },
             ArrayTypes{});
}

/// A Python or NumPy boolean scalar (nanobind's own bool conversion takes only True and
/// False); the type Python scalars of Bool arrays arrive as.
struct PythonBool {
  bool value;
  operator bool() const { return value; }
};
/// The type a Python scalar for an array of `T` arrives as.
template <typename T> using PythonScalar = std::conditional_t<std::is_same_v<T, bool>, PythonBool, T>;

/// The vector and matrix types (structs of arrays).
using CompositeTypes = std::tuple<Array2f, Array3f, Array4f, Array2u, Array3u, Array2i, Array3i, Array3f64,
                                  Matrix2f, Matrix3f, Matrix4f>;

template <typename A> inline constexpr bool is_float_array_v = std::is_floating_point_v<typename A::Value>;
template <typename A> inline constexpr bool is_int_array_v = std::is_integral_v<typename A::Value> && !std::is_same_v<typename A::Value, bool>;

/// A Python size argument as size_t; negative sizes raise ValueError naming `op`.
size_t to_size(int64_t size, const char* op);
/// A Python index (negative counts from the end) into `size` elements; raises IndexError.
size_t to_index(int64_t index, size_t size, const char* op);

/// An optional mask argument (None: every lane active).
inline Bool mask_or_all(const Bool* mask) { return mask ? *mask : Bool(true, std::source_location()); }

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
void bind_reduce(nb::module_& m);

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
}  // namespace nanobind::detail
