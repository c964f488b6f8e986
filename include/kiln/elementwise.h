// Elementwise helpers that Dr.Jit and NumPy users expect: clip/clamp, lerp, square, sign,
// copysign, fmod and hypot. Each is a composite of traced ops (so it fuses into the
// surrounding kernel and its derivative comes from the rules of those ops); where Kiln
// follows Dr.Jit and NumPy differs, the declaration says so.
#pragma once

#include <kiln/array.h>
#include <kiln/math/common.h>

#include <limits>
#include <type_traits>

namespace kiln {

/// x limited to [lo, hi] (min(max(x, lo), hi)); `lo` and `hi` may be arrays or scalars.
/// The gradient flows to whichever of x, lo, hi is the result.
template <typename T, typename L, typename H> Array<T> clip(const Array<T>& x, const L& lo, const H& hi) {
  return min(max(x, detail::lift<T>(lo)), detail::lift<T>(hi));
}
/// The same as clip() (Dr.Jit's older name).
template <typename T, typename L, typename H> Array<T> clamp(const Array<T>& x, const L& lo, const H& hi) {
  return clip(x, lo, hi);
}

/// Linear interpolation a + t (b - a), written as Dr.Jit does: fma(t, b, a - t a), which
/// gives exactly `a` at t = 0 and exactly `b` at t = 1.
template <typename T, typename B, typename U> Array<T> lerp(const Array<T>& a, const B& b, const U& t) {
  Array<T> tt = detail::lift<T>(t);
  return fma(tt, detail::lift<T>(b), fma(-tt, a, a));
}

/// x * x.
template <typename T> Array<T> square(const Array<T>& x) { return x * x; }

/// 1 where x >= 0 (+0 and -0 included), -1 elsewhere (NaN included), as Dr.Jit's sign().
/// NumPy's sign() differs: it gives 0 for zeros and NaN for NaN.
template <typename T> Array<T> sign(const Array<T>& x) {
  static_assert(!std::is_same_v<T, bool>, "sign() is not defined for Bool arrays");
  return select(x >= T(0), Array<T>(T(1), {}), Array<T>(T(std::is_signed_v<T> ? -1 : 1), {}));
}

/// |x| with the sign bit of y (as C's copysign: -0 and negative NaNs count as negative).
/// Differentiable in x (the derivative is ±1), not in y.
template <detail::math::MathFloat T, typename Y> Array<T> copysign(const Array<T>& x, const Y& y) {
  Array<T> magnitude = abs(x);
  Bool negative = detail::math::sign_bit(detail::lift<T>(y)) != detail::math::IntOf<T>(0);
  return select(negative, -magnitude, magnitude);
}

/// The remainder of x / y with the sign of x (C's fmod; NumPy's fmod agrees, while Python's
/// % and numpy.mod take the sign of y). Exact. For integers, C's % (x % 0 is x). The
/// derivatives are 1 for x and -trunc(x / y) for y, away from the jumps.
template <typename T, typename Y> Array<T> fmod(const Array<T>& x, const Y& y) {
  static_assert(!std::is_same_v<T, bool>, "fmod() is not defined for Bool arrays");
  return x % detail::lift<T>(y);
}

/// sqrt(x² + y²) without overflow or underflow in between (the larger magnitude is
/// factored out). NaN if either is NaN, except hypot(±inf, y) = +inf even when y is NaN
/// (as in C).
template <detail::math::MathFloat T, typename Y> Array<T> hypot(const Array<T>& x, const Y& y) {
  Array<T> ax = abs(x), ay = abs(detail::lift<T>(y));
  Array<T> hi = max(ax, ay), lo = min(ax, ay);
  Bool zero = hi == T(0);
  Array<T> ratio = lo / select(zero, Array<T>(T(1), {}), hi);
  Array<T> result = select(zero, Array<T>(T(0), {}), hi * sqrt(fma(ratio, ratio, T(1))));
  result = select(isnan(ax) | isnan(ay), ax + ay, result);
  Array<T> infinity(std::numeric_limits<T>::infinity(), {});
  return select((ax == infinity) | (ay == infinity), infinity, result);
}

}  // namespace kiln
