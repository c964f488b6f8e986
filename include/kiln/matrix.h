// Small square matrices of Kiln arrays (one N x N matrix per lane) and the 4 x 4 transforms
// of points, vectors and normals, all traced componentwise on the public Array API.
#pragma once

#include <kiln/vector.h>

namespace kiln {

/// An N x N matrix per lane; entries are stored row-major, entry (r, c) at entries[r * N + c].
template <typename T, size_t N> struct Matrix {
  static_assert(is_array_v<T>, "Matrix<T, N>: T must be a Kiln array type such as Float");
  using Component = T;
  static constexpr size_t Size = N;

  T entries[N * N];

  /// Entries without nodes (assign them before use).
  Matrix() = default;
  /// N * N values in row-major order; plain scalars are accepted.
  template <typename... Cs>
    requires(sizeof...(Cs) == N * N && N > 1 && (std::is_convertible_v<const Cs&, T> && ...))
  Matrix(const Cs&... values) : entries{T(values)...} {}

  static Matrix identity() {
    Matrix result;
    for (size_t r = 0; r < N; ++r)
      for (size_t c = 0; c < N; ++c) result(r, c) = T(typename T::Value(r == c ? 1 : 0));
    return result;
  }

  T& operator()(size_t row, size_t col) { return entries[row * N + col]; }
  const T& operator()(size_t row, size_t col) const { return entries[row * N + col]; }
};

template <typename M> struct is_matrix : std::false_type {};
template <typename T, size_t N> struct is_matrix<Matrix<T, N>> : std::true_type {};
template <typename M> inline constexpr bool is_matrix_v = is_matrix<std::decay_t<M>>::value;

using Matrix2f = Matrix<Float, 2>;
using Matrix3f = Matrix<Float, 3>;
using Matrix4f = Matrix<Float, 4>;

namespace detail {
/// Builds a matrix whose entry (r, c) is f(r, c).
template <typename T, size_t N, typename F> Matrix<T, N> make_matrix(F&& f) {
  Matrix<T, N> result;
  for (size_t r = 0; r < N; ++r)
    for (size_t c = 0; c < N; ++c) result(r, c) = f(r, c);
  return result;
}
/// The matrix without row `row` and column `col`.
template <typename T, size_t N> Matrix<T, N - 1> minor_matrix(const Matrix<T, N>& m, size_t row, size_t col) {
  Matrix<T, N - 1> result;
  for (size_t r = 0; r + 1 < N; ++r)
    for (size_t c = 0; c + 1 < N; ++c) result(r, c) = m(r < row ? r : r + 1, c < col ? c : c + 1);
  return result;
}
/// The upper-left 3 x 3 block of a 4 x 4 transform: its linear part.
template <typename T> Matrix<T, 3> linear_part(const Matrix<T, 4>& m) {
  return make_matrix<T, 3>([&](size_t r, size_t c) { return m(r, c); });
}
}  // namespace detail

// ---- arithmetic -------------------------------------------------------------------------------

template <typename T, size_t N> Matrix<T, N> operator+(const Matrix<T, N>& a, const Matrix<T, N>& b) {
  return detail::make_matrix<T, N>([&](size_t r, size_t c) { return a(r, c) + b(r, c); });
}
template <typename T, size_t N> Matrix<T, N> operator-(const Matrix<T, N>& a, const Matrix<T, N>& b) {
  return detail::make_matrix<T, N>([&](size_t r, size_t c) { return a(r, c) - b(r, c); });
}
/// Every entry times `s` (an array of the entry type or a plain scalar).
template <typename T, size_t N> Matrix<T, N> operator*(const Matrix<T, N>& a, const std::type_identity_t<T>& s) {
  return detail::make_matrix<T, N>([&](size_t r, size_t c) { return a(r, c) * s; });
}
template <typename T, size_t N> Matrix<T, N> operator*(const std::type_identity_t<T>& s, const Matrix<T, N>& a) {
  return a * s;
}
/// The matrix product.
template <typename T, size_t N> Matrix<T, N> operator*(const Matrix<T, N>& a, const Matrix<T, N>& b) {
  return detail::make_matrix<T, N>([&](size_t r, size_t c) {
    T sum = a(r, 0) * b(0, c);
    for (size_t k = 1; k < N; ++k) sum = fma(a(r, k), b(k, c), sum);
    return sum;
  });
}
/// The matrix applied to a column vector.
template <typename T, size_t N> Vector<T, N> operator*(const Matrix<T, N>& m, const Vector<T, N>& v) {
  return detail::make_vector<T, N>([&](size_t r) {
    T sum = m(r, 0) * v[0];
    for (size_t k = 1; k < N; ++k) sum = fma(m(r, k), v[k], sum);
    return sum;
  });
}

template <typename T, size_t N> Matrix<T, N> transpose(const Matrix<T, N>& m) {
  return detail::make_matrix<T, N>([&](size_t r, size_t c) { return m(c, r); });
}

// ---- determinant and inverse by cofactor expansion ------------------------------------------
// Both expand along cofactors, (-1)^(r+c) times the determinant of a minor, recursively down
// to 1 x 1. The IR is value-numbered, so the 2 x 2 sub-determinants that several cofactors
// share are traced once. The cost grows as N!, hence the limit of 4.

template <typename T, size_t N> T determinant(const Matrix<T, N>& m);

namespace detail {
template <typename T, size_t N> T cofactor(const Matrix<T, N>& m, size_t row, size_t col) {
  T sub_determinant = determinant(minor_matrix(m, row, col));
  return (row + col) % 2 == 0 ? sub_determinant : -sub_determinant;
}
}  // namespace detail

template <typename T, size_t N> T determinant(const Matrix<T, N>& m) {
  static_assert(N >= 1 && N <= 4, "determinant(): cofactor expansion is meant for N <= 4");
  if constexpr (N == 1) {
    return m(0, 0);
  } else {
    T result = m(0, 0) * detail::cofactor(m, 0, 0);
    for (size_t c = 1; c < N; ++c) result = fma(m(0, c), detail::cofactor(m, 0, c), result);
    return result;
  }
}

/// The inverse, as the adjugate (transposed cofactors) over the determinant. A singular
/// matrix gives non-finite entries.
template <typename T, size_t N> Matrix<T, N> inverse(const Matrix<T, N>& m) {
  static_assert(N >= 2 && N <= 4, "inverse(): cofactor expansion is meant for 2 <= N <= 4");
  Matrix<T, N> cofactors = detail::make_matrix<T, N>([&](size_t r, size_t c) { return detail::cofactor(m, r, c); });
  T det = m(0, 0) * cofactors(0, 0);
  for (size_t c = 1; c < N; ++c) det = fma(m(0, c), cofactors(0, c), det);
  return transpose(cofactors) * rcp(det);
}

// ---- 4 x 4 transforms of 3-D points, vectors and normals ------------------------------------

/// m applied to (p, 1), followed by the homogeneous divide.
template <typename T> Vector<T, 3> transform_point(const Matrix<T, 4>& m, const Vector<T, 3>& p) {
  Vector<T, 4> h = m * Vector<T, 4>(p.x, p.y, p.z, T(typename T::Value(1)));
  return Vector<T, 3>(h.x, h.y, h.z) * rcp(h.w);
}
/// m applied to (v, 0): the linear part only, no translation.
template <typename T> Vector<T, 3> transform_vector(const Matrix<T, 4>& m, const Vector<T, 3>& v) {
  return detail::linear_part(m) * v;
}
/// The normal of a surface transformed by the affine transform m: the inverse transpose of
/// m's linear part applied to n, which keeps it perpendicular to transformed tangents. The
/// result is not normalized.
template <typename T> Vector<T, 3> transform_normal(const Matrix<T, 4>& m, const Vector<T, 3>& n) {
  return transpose(inverse(detail::linear_part(m))) * n;
}

// ---- evaluation -----------------------------------------------------------------------------

/// Lets eval() and schedule() (vector.h) take matrices: every entry is one array.
template <typename M, typename F>
  requires is_matrix_v<M>
void for_each_array(M&& value, F&& f) {
  for (auto& entry : value.entries) f(entry);
}

// ---- flat layout: the vectors or matrices of all lanes back to back in one array ------------

/// Number of arrays a vector (N) or matrix (N * N) is made of.
template <typename V> inline constexpr size_t component_count_v = [] {
  if constexpr (is_matrix_v<V>)
    return V::Size * V::Size;
  else
    return V::Size;
}();

/// One flat array holding the value of every lane back to back: component j of lane i
/// (row-major entry j for matrices) at K * i + j, the layout gather<V>() reads and NumPy's
/// (n, K) / (n, N, N) arrays use. Pending components are computed straight into it.
template <typename V>
  requires(is_vector_v<V> || is_matrix_v<V>)
typename V::Component flatten(const V& value) {
  using T = typename V::Component;
  constexpr size_t K = component_count_v<V>;
  size_t lanes = 0;
  for_each_array(value, [&](const T& array) {
    if (!array.valid())
      throw ValueError("kiln: flatten(): a component has no value (default-constructed); assign every component first");
    if (lanes > 1 && array.size() > 1 && array.size() != lanes)
      throw SizeError("kiln: flatten(): components of " + std::to_string(lanes) + " and " +
                      std::to_string(array.size()) + " lanes; all must have the same size (or 1)");
    lanes = std::max(lanes, array.size());
  });
  Device device = default_device();
  for_each_array(value, [&](const T& array) { device = array.device(); });  // they must agree: the scatters check
  T flat = empty<T>(lanes * K, device);
  UInt32 first = arange<UInt32>(lanes) * uint32_t(K);
  uint32_t j = 0;
  for_each_array(value, [&](const T& array) { scatter(flat, array, first + j++); });
  return flat;
}
/// The inverse of flatten(): lane i's component j is flat[K * i + j] (gathered lazily).
template <typename V>
  requires(is_vector_v<V> || is_matrix_v<V>)
V unflatten(const typename V::Component& flat) {
  constexpr size_t K = component_count_v<V>;
  if (flat.size() % K != 0)
    throw SizeError("kiln: unflatten(): " + std::to_string(flat.size()) + " elements are not a whole number of " +
                    std::to_string(K) + "-component values; pass K * lanes elements");
  UInt32 first = arange<UInt32>(flat.size() / K) * uint32_t(K);
  V result;
  uint32_t j = 0;
  for_each_array(result, [&](auto& array) { array = gather(flat, first + j++); });
  return result;
}

}  // namespace kiln
