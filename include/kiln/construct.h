// Construction and shape helpers with Dr.Jit's names: ones(), full/zeros/ones/empty of
// vectors and matrices (zeros<Array3f>(n)), meshgrid(), repeat(), tile(), ravel() and
// unravel<V>() (the interleaved layout of flatten()/unflatten()), width() and shape().
// Everything is traced (counters, divisions and gathers), so it fuses into the kernel
// that uses it.
#pragma once

#include <kiln/matrix.h>

#include <array>
#include <string>
#include <vector>

namespace kiln {

/// `size` ones (a literal).
template <typename A>
  requires is_array_v<A>
A ones(size_t size = 1) {
  return full<A>(typename A::Value(1), size);
}

/// Every component (entry) of a vector (matrix) equal to `value`, `size` lanes.
template <typename V>
  requires(is_vector_v<V> || is_matrix_v<V>)
V full(typename V::Component::Value value, size_t size = 1) {
  V result;
  for_each_array(result, [&](auto& array) { array = full<typename V::Component>(value, size); });
  return result;
}
template <typename V>
  requires(is_vector_v<V> || is_matrix_v<V>)
V zeros(size_t size = 1) {
  return full<V>(typename V::Component::Value(0), size);
}
/// All components (entries) one: for matrices, not the identity (see Matrix::identity()).
template <typename V>
  requires(is_vector_v<V> || is_matrix_v<V>)
V ones(size_t size = 1) {
  return full<V>(typename V::Component::Value(1), size);
}
/// Uninitialized components of `size` lanes (allocated now).
template <typename V>
  requires(is_vector_v<V> || is_matrix_v<V>)
V empty(size_t size = 1) {
  V result;
  for_each_array(result, [&](auto& array) { array = empty<typename V::Component>(size); });
  return result;
}

/// Each element `count` times in a row: [a, a, b, b] for repeat([a, b], 2) (numpy.repeat).
template <typename T> Array<T> repeat(const Array<T>& a, size_t count) {
  return gather(a, arange<UInt32>(a.size() * count) / uint32_t(count == 0 ? 1 : count));
}
/// The whole array `count` times: [a, b, a, b] for tile([a, b], 2) (numpy.tile).
template <typename T> Array<T> tile(const Array<T>& a, size_t count) {
  size_t n = a.size();
  return gather(a, arange<UInt32>(n * count) % uint32_t(n == 0 ? 1 : n));
}

/// Coordinate arrays of the grid spanned by `axes` (all of one type): result k holds
/// axes[k]'s value at each grid point, points enumerated row-major. `ij` = false is
/// NumPy's and Dr.Jit's default "xy" indexing (the first two axes swapped, so that x
/// varies fastest for two axes); `ij` = true is matrix indexing (the last axis fastest).
template <typename T, size_t K> std::array<Array<T>, K> meshgrid(const std::array<Array<T>, K>& axes, bool ij = false) {
  static_assert(K >= 1, "meshgrid() needs at least one axis");
  std::array<size_t, K> order;  // axes from slowest to fastest varying
  for (size_t k = 0; k < K; ++k) order[k] = k;
  if (!ij && K >= 2) std::swap(order[0], order[1]);
  size_t total = 1;
  for (const Array<T>& axis : axes) total *= axis.size();
  UInt32 point = arange<UInt32>(total);
  std::array<Array<T>, K> result;
  size_t stride = 1;  // of the axis order[j], walking from the fastest
  for (size_t j = K; j-- > 0;) {
    const Array<T>& axis = axes[order[j]];
    uint32_t extent = uint32_t(axis.size() == 0 ? 1 : axis.size());
    result[order[j]] = gather(axis, (point / uint32_t(stride)) % extent);
    stride *= axis.size();
  }
  return result;
}
/// meshgrid() of two or three axes, as a std::array (structured bindings: auto [x, y]).
template <typename T> std::array<Array<T>, 2> meshgrid(const Array<T>& x, const Array<T>& y, bool ij = false) {
  return meshgrid(std::array<Array<T>, 2>{x, y}, ij);
}
template <typename T>
std::array<Array<T>, 3> meshgrid(const Array<T>& x, const Array<T>& y, const Array<T>& z, bool ij = false) {
  return meshgrid(std::array<Array<T>, 3>{x, y, z}, ij);
}

/// The lanes of a vector or matrix back to back in one array (Dr.Jit's name for flatten():
/// component j of lane i at K * i + j); an array is returned as it is.
template <typename V> auto ravel(const V& value) {
  if constexpr (is_array_v<V>)
    return value;
  else
    return flatten(value);
}
/// The inverse of ravel(): a vector or matrix whose lane i's component j is flat[K * i + j].
template <typename V>
  requires(is_vector_v<V> || is_matrix_v<V>)
V unravel(const typename V::Component& flat) {
  return unflatten<V>(flat);
}

/// Number of lanes: an array's size, a vector's or matrix's largest component size.
template <typename V> size_t width(const V& value) {
  size_t lanes = 0;
  for_each_array(value, [&](const auto& array) { lanes = std::max(lanes, array.size()); });
  return lanes;
}
/// Dr.Jit's shape: {n} for an array, {N, n} for a vector, {N, N, n} for a matrix.
template <typename V> std::vector<size_t> shape(const V& value) {
  if constexpr (is_array_v<V>)
    return {value.size()};
  else if constexpr (is_vector_v<V>)
    return {V::Size, width(value)};
  else
    return {V::Size, V::Size, width(value)};
}

}  // namespace kiln
