// Building blocks of Kiln's math library: polynomial evaluation, access to the bits of a
// float, exact scaling by powers of two, and double-word ("hi + lo") arithmetic. Every
// function here records ordinary IR ops, so the math library runs unchanged on any backend.
#pragma once

#include <kiln/array.h>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>

namespace kiln::detail::math {

/// The signed integer of the same width as the float `T`.
template <typename T> using IntOf = std::conditional_t<sizeof(T) == 4, int32_t, int64_t>;
template <typename T> using Ints = Array<IntOf<T>>;

/// True for the element types the math library supports.
template <typename T>
concept MathFloat = std::is_same_v<T, float> || std::is_same_v<T, double>;

/// True when an argument carries derivatives: the function then takes the path below.
template <typename... As> bool carries_grad(const As&... xs) { return (xs.ad_index() | ...) != 0; }
/// The function's value from the library on the detached arguments and its derivative
/// from the rule table (src/ad/rules.cpp), instead of differentiating the polynomial.
template <typename T, typename... As> Array<T> differentiate(DiffOp op, const As&... xs) {
  AdOperand operands[] = {xs.operand()...};
  return Array<T>::steal(ad_math(op, operands, sizeof...(As)));
}

/// Layout of the IEEE binary format of `T`.
template <typename T> struct Format {
  static constexpr int kMantissaBits = std::numeric_limits<T>::digits - 1;        // 23, 52
  static constexpr int kExponentBias = std::numeric_limits<T>::max_exponent - 1;  // 127, 1023
  static constexpr IntOf<T> kSignMask = std::numeric_limits<IntOf<T>>::min();
  static constexpr IntOf<T> kMantissaMask = (IntOf<T>(1) << kMantissaBits) - 1;
  static constexpr T kInfinity = std::numeric_limits<T>::infinity();
  static constexpr T kNaN = std::numeric_limits<T>::quiet_NaN();
  static constexpr T kMinNormal = std::numeric_limits<T>::min();
};

/// `f` when `T` is float, `d` when it is double (constants are given for both).
template <typename T> constexpr T pick(float f, double d) {
  if constexpr (sizeof(T) == 4)
    return f;
  else
    return static_cast<T>(d);
}

/// c[0] + c[1] x + c[2] x^2 + ..., by Horner's rule with one fma per coefficient.
template <typename T, size_t N> Array<T> horner(const Array<T>& x, const T (&c)[N]) {
  static_assert(N >= 2, "horner() needs at least two coefficients");
  Array<T> p = fma(x, Array<T>(c[N - 1]), Array<T>(c[N - 2]));
  for (size_t k = N - 2; k-- > 0;) p = fma(p, x, Array<T>(c[k]));
  return p;
}

/// horner() with the coefficient list that matches `T`.
template <typename T, size_t NF, size_t ND>
Array<T> polynomial(const Array<T>& x, const float (&f)[NF], const double (&d)[ND]) {
  if constexpr (sizeof(T) == 4)
    return horner(x, f);
  else
    return horner(x, d);
}

/// The bits of `x` as a signed integer.
template <typename T> Ints<T> bits(const Array<T>& x) { return reinterpret<IntOf<T>>(x); }
/// The float whose bits are `i` (call as from_bits<T>(i)).
template <typename T> Array<T> from_bits(const Ints<T>& i) { return reinterpret<T>(i); }

/// The sign bit of each lane (as an integer with only that bit possibly set).
template <typename T> Ints<T> sign_bit(const Array<T>& x) { return bits(x) & Ints<T>(Format<T>::kSignMask); }
/// Flips the sign of `x` where `sign` (an integer holding at most the sign bit) is set.
template <typename T> Array<T> flip_sign(const Array<T>& x, const Ints<T>& sign) {
  return from_bits<T>(bits(x) ^ sign);
}

/// 2^n for integers n in the normal exponent range of `T` ([-126, 127] for float).
template <typename T> Array<T> pow2(const Ints<T>& n) {
  return from_bits<T>((n + IntOf<T>(Format<T>::kExponentBias)) << IntOf<T>(Format<T>::kMantissaBits));
}
/// x * 2^n, rounded once, for |n| up to about twice the exponent range: the scale is
/// applied in two halves so that neither factor overflows and subnormal results round once.
template <typename T> Array<T> scale(const Array<T>& x, const Ints<T>& n) {
  Ints<T> half = n >> IntOf<T>(1);
  return (x * pow2<T>(half)) * pow2<T>(n - half);
}

/// A value represented as the unevaluated sum hi + lo with |lo| <= ulp(hi) / 2 (roughly).
template <typename T> struct DoubleWord {
  Array<T> hi, lo;
};

/// a + b exactly as hi + lo, assuming |a| >= |b| or a == 0 (Dekker's fast two-sum).
template <typename T> DoubleWord<T> fast_two_sum(const Array<T>& a, const Array<T>& b) {
  Array<T> hi = a + b;
  return {hi, (a - hi) + b};
}
/// a + b exactly as hi + lo, for any a and b (Knuth's two-sum).
template <typename T> DoubleWord<T> two_sum(const Array<T>& a, const Array<T>& b) {
  Array<T> hi = a + b;
  Array<T> b_part = hi - a;
  return {hi, (a - (hi - b_part)) + (b - b_part)};
}
/// a * b exactly as hi + lo.
template <typename T> DoubleWord<T> two_product(const Array<T>& a, const Array<T>& b) {
  Array<T> hi = a * b;
  return {hi, fma(a, b, -hi)};
}

}  // namespace kiln::detail::math
