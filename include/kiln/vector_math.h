// Componentwise functions and comparisons on vectors (Array3f ...), as in Dr.Jit: sqrt(v),
// pow(v, 2), clip(v, 0, 1), v < w (a vector of masks) ... apply the array function of the
// same name to each component. Arithmetic, abs, min, max, fma and select are in vector.h.
#pragma once

#include <kiln/elementwise.h>
#include <kiln/math.h>
#include <kiln/vector.h>

namespace kiln {

#define KILN_VECTOR_UNARY(name)                                              \
  template <typename T, size_t N> Vector<T, N> name(const Vector<T, N>& a) { \
    return detail::make_vector<T, N>([&](size_t i) { return name(a[i]); });  \
  }
KILN_VECTOR_UNARY(sqrt)
KILN_VECTOR_UNARY(rsqrt)
KILN_VECTOR_UNARY(rcp)
KILN_VECTOR_UNARY(floor)
KILN_VECTOR_UNARY(ceil)
KILN_VECTOR_UNARY(round)
KILN_VECTOR_UNARY(trunc)
KILN_VECTOR_UNARY(square)
KILN_VECTOR_UNARY(sign)
KILN_VECTOR_UNARY(exp)
KILN_VECTOR_UNARY(exp2)
KILN_VECTOR_UNARY(expm1)
KILN_VECTOR_UNARY(log)
KILN_VECTOR_UNARY(log2)
KILN_VECTOR_UNARY(log1p)
KILN_VECTOR_UNARY(sin)
KILN_VECTOR_UNARY(cos)
KILN_VECTOR_UNARY(tan)
KILN_VECTOR_UNARY(tanh)
#undef KILN_VECTOR_UNARY

/// Per component, with a vector, one array of the component type or a plain scalar as the
/// second operand (as the vector operators).
#define KILN_VECTOR_BINARY(name)                                                                               \
  template <typename T, size_t N> Vector<T, N> name(const Vector<T, N>& a, const Vector<T, N>& b) {            \
    return detail::make_vector<T, N>([&](size_t i) { return name(a[i], b[i]); });                              \
  }                                                                                                            \
  template <typename T, size_t N> Vector<T, N> name(const Vector<T, N>& a, const std::type_identity_t<T>& b) { \
    return detail::make_vector<T, N>([&](size_t i) { return name(a[i], b); });                                 \
  }
KILN_VECTOR_BINARY(pow)
KILN_VECTOR_BINARY(copysign)
KILN_VECTOR_BINARY(fmod)
KILN_VECTOR_BINARY(hypot)
#undef KILN_VECTOR_BINARY

/// min() and max() of every component with one array of the component type (or a scalar);
/// the vector-vector forms are in vector.h.
template <typename T, size_t N> Vector<T, N> min(const Vector<T, N>& a, const std::type_identity_t<T>& b) {
  return detail::make_vector<T, N>([&](size_t i) { return min(a[i], b); });
}
template <typename T, size_t N> Vector<T, N> max(const Vector<T, N>& a, const std::type_identity_t<T>& b) {
  return detail::make_vector<T, N>([&](size_t i) { return max(a[i], b); });
}

/// clip() of every component to [lo, hi] (vectors, arrays or scalars).
template <typename T, size_t N, typename L, typename H>
Vector<T, N> clip(const Vector<T, N>& x, const L& lo, const H& hi) {
  auto part = [](const auto& v, size_t i) -> T {
    if constexpr (is_vector_v<decltype(v)>)
      return v[i];
    else
      return detail::lift<typename T::Value>(v);
  };
  return detail::make_vector<T, N>([&](size_t i) { return clip(x[i], part(lo, i), part(hi, i)); });
}
/// lerp() per component: a + t (b - a), with `t` a vector, an array or a scalar.
template <typename T, size_t N, typename U>
Vector<T, N> lerp(const Vector<T, N>& a, const Vector<T, N>& b, const U& t) {
  return detail::make_vector<T, N>([&](size_t i) {
    if constexpr (is_vector_v<U>)
      return lerp(a[i], b[i], t[i]);
    else
      return lerp(a[i], b[i], t);
  });
}

/// Componentwise comparisons: a vector of masks (Dr.Jit's Array3b), for select(), any()
/// and all() below.
#define KILN_VECTOR_COMPARISON(symbol)                                                                          \
  template <typename T, size_t N> Vector<Bool, N> operator symbol(const Vector<T, N>& a, const Vector<T, N>& b) \
    requires(!std::is_same_v<T, Bool>)                                                                          \
  {                                                                                                             \
    return detail::make_vector<Bool, N>([&](size_t i) { return a[i] symbol b[i]; });                            \
  }                                                                                                             \
  template <typename T, size_t N>                                                                               \
  Vector<Bool, N> operator symbol(const Vector<T, N>& a, const std::type_identity_t<T>& b)                      \
    requires(!std::is_same_v<T, Bool>)                                                                          \
  {                                                                                                             \
    return detail::make_vector<Bool, N>([&](size_t i) { return a[i] symbol b; });                               \
  }
KILN_VECTOR_COMPARISON(==)
KILN_VECTOR_COMPARISON(!=)
KILN_VECTOR_COMPARISON(<)
KILN_VECTOR_COMPARISON(<=)
KILN_VECTOR_COMPARISON(>)
KILN_VECTOR_COMPARISON(>=)
#undef KILN_VECTOR_COMPARISON

/// Per lane: is any (all) component of the mask vector true? As Dr.Jit, any() and all() of
/// a vector reduce over its components (a Bool array); of an array, over its lanes.
template <size_t N> Bool any(const Vector<Bool, N>& m) {
  Bool result = m[0];
  for (size_t i = 1; i < N; ++i) result = result | m[i];
  return result;
}
template <size_t N> Bool all(const Vector<Bool, N>& m) {
  Bool result = m[0];
  for (size_t i = 1; i < N; ++i) result = result & m[i];
  return result;
}
/// select() with a mask per component.
template <typename T, size_t N>
Vector<T, N> select(const Vector<Bool, N>& mask, const Vector<T, N>& t, const Vector<T, N>& f) {
  return detail::make_vector<T, N>([&](size_t i) { return select(mask[i], t[i], f[i]); });
}

}  // namespace kiln
