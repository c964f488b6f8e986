// Small fixed-size vectors of Kiln arrays (structs of arrays): Array3f holds three Float
// arrays x, y, z, and every operation here is componentwise tracing on the public Array
// API, so a vector expression fuses into the same kernel as the scalar code around it.
// One template, Vector<T, N>, serves all dimensions; Array2<T>, Array3<T> and Array4<T>
// name it for N = 2, 3, 4.
#pragma once

#include <kiln/array.h>

#include <algorithm>
#include <cassert>
#include <cstddef>
#include <type_traits>
#include <utility>

namespace kiln {

namespace detail {
/// The named components of a vector; Vector<T, N> adds everything else.
template <typename T, size_t N> struct VectorStorage;
template <typename T> struct VectorStorage<T, 2> {
  T x, y;
  static constexpr T VectorStorage::* kMembers[] = {&VectorStorage::x, &VectorStorage::y};
};
template <typename T> struct VectorStorage<T, 3> {
  T x, y, z;
  static constexpr T VectorStorage::* kMembers[] = {&VectorStorage::x, &VectorStorage::y, &VectorStorage::z};
};
template <typename T> struct VectorStorage<T, 4> {
  T x, y, z, w;
  static constexpr T VectorStorage::* kMembers[] = {&VectorStorage::x, &VectorStorage::y, &VectorStorage::z,
                                                    &VectorStorage::w};
};
}  // namespace detail

/// N Kiln arrays of type T (Float, UInt32, ...) used as one N-dimensional vector per lane.
template <typename T, size_t N> struct Vector : detail::VectorStorage<T, N> {
  static_assert(is_array_v<T>, "Vector<T, N>: T must be a Kiln array type such as Float");
  using Component = T;
  static constexpr size_t Size = N;

  /// Components without nodes (assign them before use).
  Vector() = default;
  /// All components equal to `value`.
  explicit Vector(const T& value) : Vector(value, std::make_index_sequence<N>{}) {}
  /// One value per component: Array3f(x, y, z); plain scalars are accepted.
  template <typename... Cs>
    requires(sizeof...(Cs) == N && N > 1 && (std::is_convertible_v<const Cs&, T> && ...))
  Vector(const Cs&... components) : detail::VectorStorage<T, N>{T(components)...} {}

  /// Component `i` (0 is x, 1 is y, ...).
  T& operator[](size_t i) {
    assert(i < N);
    return this->*(detail::VectorStorage<T, N>::kMembers[i]);
  }
  const T& operator[](size_t i) const {
    assert(i < N);
    return this->*(detail::VectorStorage<T, N>::kMembers[i]);
  }

  /// Number of lanes: the largest component size (size-1 components broadcast).
  size_t size() const {
    size_t lanes = 0;
    for (size_t i = 0; i < N; ++i) lanes = std::max(lanes, (*this)[i].size());
    return lanes;
  }

 private:
  template <size_t... I> Vector(const T& value, std::index_sequence<I...>)
      : detail::VectorStorage<T, N>{(void(I), value)...} {}
};

template <typename T> using Array2 = Vector<T, 2>;
template <typename T> using Array3 = Vector<T, 3>;
template <typename T> using Array4 = Vector<T, 4>;
using Array2f = Array2<Float>;
using Array3f = Array3<Float>;
using Array4f = Array4<Float>;
using Array2u = Array2<UInt32>;
using Array3u = Array3<UInt32>;
using Array2i = Array2<Int32>;
using Array3i = Array3<Int32>;
using Array3f64 = Array3<Float64>;

/// True for Vector<T, N>.
template <typename V> struct is_vector : std::false_type {};
template <typename T, size_t N> struct is_vector<Vector<T, N>> : std::true_type {};
template <typename V> inline constexpr bool is_vector_v = is_vector<std::decay_t<V>>::value;

namespace detail {
/// Builds a vector whose component i is f(i).
template <typename T, size_t N, typename F> Vector<T, N> make_vector(F&& f) {
  Vector<T, N> result;
  for (size_t i = 0; i < N; ++i) result[i] = f(i);
  return result;
}
}  // namespace detail

// ---- componentwise arithmetic -------------------------------------------------------------
// A vector combines with a vector, with one array of its component type (applied to every
// component) or with a plain scalar; std::type_identity_t keeps the scalar side from taking
// part in deduction, so `v * 2.f` converts 2.f to Float.

#define KILN_VECTOR_OPERATOR(symbol)                                                                           \
  template <typename T, size_t N> Vector<T, N> operator symbol(const Vector<T, N>& a, const Vector<T, N>& b) { \
    return detail::make_vector<T, N>([&](size_t i) { return a[i] symbol b[i]; });                              \
  }                                                                                                            \
  template <typename T, size_t N>                                                                              \
  Vector<T, N> operator symbol(const Vector<T, N>& a, const std::type_identity_t<T>& b) {                      \
    return detail::make_vector<T, N>([&](size_t i) { return a[i] symbol b; });                                 \
  }                                                                                                            \
  template <typename T, size_t N>                                                                              \
  Vector<T, N> operator symbol(const std::type_identity_t<T>& a, const Vector<T, N>& b) {                      \
    return detail::make_vector<T, N>([&](size_t i) { return a symbol b[i]; });                                 \
  }                                                                                                            \
  template <typename T, size_t N, typename B> Vector<T, N>& operator symbol##=(Vector<T, N>& a, const B & b) { \
    a = a symbol b;                                                                                            \
    return a;                                                                                                  \
  }

KILN_VECTOR_OPERATOR(+)
KILN_VECTOR_OPERATOR(-)
KILN_VECTOR_OPERATOR(*)
KILN_VECTOR_OPERATOR(/)
#undef KILN_VECTOR_OPERATOR

template <typename T, size_t N> Vector<T, N> operator-(const Vector<T, N>& a) {
  return detail::make_vector<T, N>([&](size_t i) { return -a[i]; });
}

template <typename T, size_t N> Vector<T, N> abs(const Vector<T, N>& a) {
  return detail::make_vector<T, N>([&](size_t i) { return abs(a[i]); });
}
template <typename T, size_t N> Vector<T, N> min(const Vector<T, N>& a, const Vector<T, N>& b) {
  return detail::make_vector<T, N>([&](size_t i) { return min(a[i], b[i]); });
}
template <typename T, size_t N> Vector<T, N> max(const Vector<T, N>& a, const Vector<T, N>& b) {
  return detail::make_vector<T, N>([&](size_t i) { return max(a[i], b[i]); });
}
/// a * b + c per component, with a single rounding for floats.
template <typename T, size_t N> Vector<T, N> fma(const Vector<T, N>& a, const Vector<T, N>& b, const Vector<T, N>& c) {
  return detail::make_vector<T, N>([&](size_t i) { return fma(a[i], b[i], c[i]); });
}
/// Lane-wise `mask ? t : f` for the whole vector.
template <typename T, size_t N> Vector<T, N> select(const Bool& mask, const Vector<T, N>& t, const Vector<T, N>& f) {
  return detail::make_vector<T, N>([&](size_t i) { return select(mask, t[i], f[i]); });
}
/// Value conversion of every component.
template <typename To, typename T, size_t N> Vector<Array<To>, N> cast(const Vector<T, N>& a) {
  return detail::make_vector<Array<To>, N>([&](size_t i) { return cast<To>(a[i]); });
}

// ---- geometry -------------------------------------------------------------------------------

/// Per-lane dot product (unlike dot() on two arrays, which sums over lanes).
template <typename T, size_t N> T dot(const Vector<T, N>& a, const Vector<T, N>& b) {
  T result = a[0] * b[0];
  for (size_t i = 1; i < N; ++i) result = fma(a[i], b[i], result);
  return result;
}
template <typename T> Vector<T, 3> cross(const Vector<T, 3>& a, const Vector<T, 3>& b) {
  return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}
template <typename T, size_t N> T squared_norm(const Vector<T, N>& a) { return dot(a, a); }
template <typename T, size_t N> T norm(const Vector<T, N>& a) { return sqrt(dot(a, a)); }
/// a / norm(a); a zero vector gives NaN components.
template <typename T, size_t N> Vector<T, N> normalize(const Vector<T, N>& a) { return a * rsqrt(dot(a, a)); }

// ---- memory ---------------------------------------------------------------------------------

/// Reads vector `index` of a flat array holding vectors back to back (component j of lane
/// i is source[N * index[i] + j]); inactive lanes give zero vectors.
template <typename V>
  requires is_vector_v<V>
V gather(const typename V::Component& source, const UInt32& index, const Bool& active = Bool(true)) {
  UInt32 first = index * uint32_t(V::Size);
  V result;
  for (size_t j = 0; j < V::Size; ++j) result[j] = gather(source, first + uint32_t(j), active);
  return result;
}
/// Writes `value` to vector `index` of a flat array laid out as for gather<V>().
template <typename T, size_t N>
void scatter(T& target, const Vector<T, N>& value, const UInt32& index, const Bool& active = Bool(true)) {
  UInt32 first = index * uint32_t(N);
  for (size_t j = 0; j < N; ++j) scatter(target, value[j], first + uint32_t(j), active);
}
/// Atomically adds `value` to vector `index` of a flat array laid out as for gather<V>().
template <typename T, size_t N>
void scatter_add(T& target, const Vector<T, N>& value, const UInt32& index, const Bool& active = Bool(true)) {
  UInt32 first = index * uint32_t(N);
  for (size_t j = 0; j < N; ++j) scatter_add(target, value[j], first + uint32_t(j), active);
}

// ---- evaluation -----------------------------------------------------------------------------

/// Calls `f` on each Kiln array that `value` is made of (as const when `value` is): an
/// array itself, every component of a vector (matrix.h adds matrices). Found by
/// argument-dependent lookup.
template <typename A, typename F>
  requires is_array_v<A>
void for_each_array(A&& value, F&& f) {
  f(value);
}
template <typename V, typename F>
  requires is_vector_v<V>
void for_each_array(V&& value, F&& f) {
  for (size_t i = 0; i < std::decay_t<V>::Size; ++i) f(value[i]);
}

/// eval() and schedule() over any mix of arrays, vectors and matrices. They are preferred
/// to the array-only versions in array.h (same signature, more constrained) as soon as one
/// argument is not a plain array, and evaluate everything in one call: one kernel per size.
template <typename... Vs>
  requires((!is_array_v<Vs>) || ...)
void schedule(const Vs&... values) {
  (for_each_array(values, [](const auto& array) { schedule(array); }), ...);
}
template <typename... Vs>
  requires((!is_array_v<Vs>) || ...)
void eval(const Vs&... values) {
  schedule(values...);
  eval();
}
/// make_opaque() over arrays, vectors and matrices: every component becomes opaque.
template <typename... Vs>
  requires((!is_array_v<Vs>) || ...)
void make_opaque(Vs&... values) {
  (for_each_array(values, [](auto& array) { make_opaque(array); }), ...);
}

}  // namespace kiln
