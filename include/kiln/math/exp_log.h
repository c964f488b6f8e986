// Exponentials, logarithms (log1p and expm1 included), pow and the hyperbolic functions.
//
// exp reduces x = n ln2 + r (Cody–Waite, ln2 split in two, fma) and evaluates a minimax
// polynomial of e^r on |r| <= ln2/2; the result is scaled by 2^n in two exact halves. log
// splits x = m 2^e with m in [sqrt(1/2), sqrt(2)) and uses log(m) = 2 atanh(s),
// s = (m-1)/(m+1), so only a short odd series in s is needed. pow evaluates
// exp(y log|x|) with log|x| and the product carried as double words (hi + lo), which is
// what keeps results near overflow accurate. Coefficients: see docs/math.md.
#pragma once

#include <kiln/math/common.h>

namespace kiln {
namespace detail::math {

// ---- exp ---------------------------------------------------------------------------------

/// e^r for |r| <= ln2/2 (1 + r + c2 r^2 + ..., minimax).
template <typename T> Array<T> exp_polynomial(const Array<T>& r) {
  static constexpr float kF[] = {1.f, 1.f, 0.49999994f, 0.166665167f, 0.0416681021f, 0.00836918224f, 0.00138385606f};
  static constexpr double kD[] = {1.0,
                                  1.0,
                                  0.5000000000000011,
                                  0.16666666666666435,
                                  0.041666666666525735,
                                  0.008333333333475662,
                                  0.0013888888944890772,
                                  0.0001984126955613822,
                                  2.480149169549762e-05,
                                  2.7557534084168405e-06,
                                  2.763077716947934e-07,
                                  2.5019036284756888e-08};
  return polynomial(r, kF, kD);
}

/// e^(x + lo) * 2^shift, where `lo` is a small correction to x (|lo| <= ulp(x)). Valid
/// while n = round(x / ln2) + shift stays within twice the exponent range; callers select
/// inf or 0 beyond their overflow and underflow thresholds.
template <typename T>
Array<T> exp_kernel(const Array<T>& x, const std::type_identity_t<Array<T>>* lo = nullptr, int shift = 0) {
  Array<T> n = round(x * pick<T>(1.44269502f, 1.4426950408889634));
  // x - n ln2 with ln2 = hi + lo: the first fma is exact (|r| < 1), the second rounds once.
  Array<T> r = fma(n, Array<T>(pick<T>(-0.693147182f, -0.6931471805599453)), x);
  r = fma(n, Array<T>(pick<T>(1.90465421e-09f, -2.3190468138462996e-17)), r);
  if (lo) r = r + *lo;
  Ints<T> k = cast<IntOf<T>>(n);
  if (shift) k = k + IntOf<T>(shift);
  return scale(exp_polynomial(r), k);
}

/// Thresholds beyond which e^x is inf or 0 (inside them exp_kernel(x) is valid).
template <typename T> constexpr T kExpOverflow = pick<T>(88.8f, 709.8);
template <typename T> constexpr T kExpUnderflow = pick<T>(-104.f, -745.2);

/// Selects the IEEE results of e^x outside [kExpUnderflow, kExpOverflow].
template <typename T> Array<T> exp_limits(const Array<T>& x, const Array<T>& value) {
  Array<T> y = select(x > kExpOverflow<T>, Array<T>(Format<T>::kInfinity), value);
  return select(x < kExpUnderflow<T>, Array<T>(T(0)), y);
}

// ---- log ---------------------------------------------------------------------------------

/// log x = e ln2 + log(m) with x = m 2^e, m in [sqrt(1/2), sqrt(2)), for positive finite x
/// (subnormals included). `f` = m - 1 is exact.
template <typename T> struct LogReduction {
  Array<T> e, m, f;
};
template <typename T> LogReduction<T> log_reduce(const Array<T>& x) {
  using F = Format<T>;
  constexpr T kSubnormalShift = pick<T>(24.f, 54.0);  // 2^shift makes every subnormal normal
  constexpr IntOf<T> kSqrtHalf = sizeof(T) == 4 ? IntOf<T>(0x3f3504f3) : IntOf<T>(0x3fe6a09e667f3bcdLL);
  Bool subnormal = x < F::kMinNormal;
  Array<T> scaled = select(subnormal, x * pick<T>(0x1p24f, 0x1p54), x);
  // Offsetting the bits by those of sqrt(1/2) makes the exponent field floor(log2(x / sqrt(1/2))).
  Ints<T> offset = bits(scaled) - kSqrtHalf;
  Ints<T> e = offset >> IntOf<T>(F::kMantissaBits);
  Array<T> m = from_bits<T>((offset & F::kMantissaMask) + kSqrtHalf);
  Array<T> ef = cast<T>(e) - select(subnormal, Array<T>(kSubnormalShift), Array<T>(T(0)));
  return {ef, m, m - T(1)};
}

/// ln2 = kLn2Hi + kLn2Lo, with kLn2Hi short enough that e * kLn2Hi is exact for every
/// exponent e (16 bits for float, 42 for double).
template <typename T> constexpr T kLn2Hi = pick<T>(0.693145752f, 0.6931471805598903);
template <typename T> constexpr T kLn2Lo = pick<T>(1.42860677e-06f, 5.497923018708371e-14);

/// log(1 + f) - f for f = m - 1 in [sqrt(1/2) - 1, sqrt(2) - 1]: with s = f / (2 + f),
/// log(1 + f) = 2s + s^3 R(s^2) and 2s = f - s f, so log(1 + f) = f - s (f - s^2 R(s^2)).
template <typename T> Array<T> log1p_tail(const Array<T>& f) {
  static constexpr float kF[] = {0.666667759f, 0.399775833f, 0.29870829f};
  static constexpr double kD[] = {0.6666666666666734, 0.39999999999416685, 0.28571428742026406, 0.22222198603664525,
                                  0.1818356302244445, 0.15314077733424436, 0.14795732565686656};
  Array<T> s = f / (f + T(2));
  Array<T> z = s * s;
  return s * fma(z, polynomial(z, kF, kD), -f);
}

/// IEEE special cases of log-like functions: value for finite x > 0, `at_zero` for ±0,
/// NaN for x < 0 and NaN, +inf for +inf.
template <typename T> Array<T> log_limits(const Array<T>& x, const Array<T>& value, T at_zero) {
  Array<T> special = select(x == T(0), Array<T>(at_zero), select(x < T(0), Array<T>(Format<T>::kNaN), x));
  return select((x > T(0)) & (x < Format<T>::kInfinity), value, special);
}

/// log|x| as a double word, accurate to about 2^-(p+8) relative (p = 24 or 53): enough
/// for pow near overflow, where |y log x| is ~700 and every bit of log x counts.
template <typename T> DoubleWord<T> log_double_word(const Array<T>& x) {
  // Coefficients of 2 atanh(s) - 2s - (2/3) s^3 (powers 5, 7, ...).
  static constexpr float kF[] = {0.400001526f, 0.285470843f, 0.234199002f};
  static constexpr double kD[] = {0.40000000000002256, 0.2857142857009934, 0.22222222520009027, 0.18181784355997213,
                                  0.15386757998186507, 0.1325679885012907, 0.13196533377366937};
  LogReduction<T> red = log_reduce(x);
  // s = f / (m + 1) as a double word; m + 1 = d_hi + d_lo exactly.
  Array<T> d_hi = red.m + T(1);
  Array<T> d_lo = red.m - (d_hi - T(1));
  Array<T> s = red.f / d_hi;
  Array<T> remainder = fma(-s, d_hi, red.f);
  Array<T> s_lo = fma(-s, d_lo, remainder) / d_hi;
  // (2/3) s^3 as a double word.
  DoubleWord<T> z = two_product(s, s);
  DoubleWord<T> cube = two_product(z.hi, s);
  cube.lo = fma(z.lo, s, cube.lo);
  DoubleWord<T> third = two_product(cube.hi, Array<T>(pick<T>(0.666666687f, 0.6666666666666666)));
  third.lo = fma(cube.hi, Array<T>(pick<T>(-1.98682155e-08f, 3.700743415417188e-17)), third.lo);
  third.lo = fma(cube.lo, Array<T>(pick<T>(0.666666687f, 0.6666666666666666)), third.lo);
  Array<T> rest = cube.hi * z.hi * polynomial(z.hi, kF, kD);
  // d/ds 2 atanh(s) = 2 / (1 - s^2) ~ 2 (1 + s^2) carries s_lo.
  Array<T> two_s_lo = s_lo + s_lo;
  Array<T> small = fma(two_s_lo, z.hi, two_s_lo) + (rest + third.lo);
  DoubleWord<T> series = fast_two_sum(s + s, third.hi);
  DoubleWord<T> sum = fast_two_sum(red.e * kLn2Hi<T>, series.hi);
  Array<T> lo = sum.lo + (series.lo + fma(red.e, Array<T>(kLn2Lo<T>), small));
  return fast_two_sum(sum.hi, lo);
}

}  // namespace detail::math

// ---- public functions --------------------------------------------------------------------

/// e^x. Overflows to inf above ~88.72 (float) / ~709.78 (double); underflows to 0.
template <detail::math::MathFloat T> Array<T> exp(const Array<T>& x) {
  using namespace detail::math;
  if (carries_grad(x)) return differentiate<T>(DiffOp::Exp, x);
  return exp_limits(x, exp_kernel(x));
}

/// 2^x, exact for integer x in range.
template <detail::math::MathFloat T> Array<T> exp2(const Array<T>& x) {
  using namespace detail::math;
  if (carries_grad(x)) return differentiate<T>(DiffOp::Exp2, x);
  static constexpr float kF[] = {
      1.f, 0.693147182f, 0.240226507f, 0.0555040352f, 0.00961806066f, 0.00133392261f, 0.000154636204f, 1.4074466e-05f};
  static constexpr double kD[] = {1.0,
                                  0.6931471805599453,
                                  0.2402265069591007,
                                  0.05550410866482338,
                                  0.009618129107630232,
                                  0.0013333558146032343,
                                  0.00015403530388860564,
                                  1.5252734169805007e-05,
                                  1.3215491405150375e-06,
                                  1.0177930062807663e-07,
                                  7.052894265700139e-09,
                                  4.4738166980450357e-10,
                                  2.8848758490202246e-11};
  constexpr T kOverflow = pick<T>(128.f, 1024.0);     // 2^x is inf above
  constexpr T kUnderflow = pick<T>(-152.f, -1077.0);  // 2^x rounds to 0 below
  Array<T> n = round(x);
  Array<T> y = scale(polynomial(x - n, kF, kD), cast<IntOf<T>>(n));
  y = select(x > kOverflow, Array<T>(Format<T>::kInfinity), y);
  return select(x < kUnderflow, Array<T>(T(0)), y);
}

/// Natural logarithm: log(±0) = -inf, log(x < 0) = NaN, log(inf) = inf.
template <detail::math::MathFloat T> Array<T> log(const Array<T>& x) {
  using namespace detail::math;
  if (carries_grad(x)) return differentiate<T>(DiffOp::Log, x);
  LogReduction<T> red = log_reduce(x);
  // e kLn2Hi + f is summed exactly (|e kLn2Hi| >= |f| unless e == 0), then the small terms.
  DoubleWord<T> head = fast_two_sum(red.e * kLn2Hi<T>, red.f);
  Array<T> tail = head.lo + fma(red.e, Array<T>(kLn2Lo<T>), log1p_tail(red.f));
  return log_limits(x, head.hi + tail, -Format<T>::kInfinity);
}

/// Base-2 logarithm, exact for powers of two.
template <detail::math::MathFloat T> Array<T> log2(const Array<T>& x) {
  using namespace detail::math;
  if (carries_grad(x)) return differentiate<T>(DiffOp::Log2, x);
  constexpr T kLog2eHi = pick<T>(1.44269502f, 1.4426950408889634);
  constexpr T kLog2eLo = pick<T>(1.92596303e-08f, 2.0355273740931033e-17);
  LogReduction<T> red = log_reduce(x);
  // log2 x = e + (f + tail) log2(e), with f log2(e) carried as a double word.
  DoubleWord<T> product = two_product(red.f, Array<T>(kLog2eHi));
  Array<T> lo = fma(red.f, Array<T>(kLog2eLo), product.lo);
  lo = fma(log1p_tail(red.f), Array<T>(kLog2eHi), lo);
  DoubleWord<T> head = fast_two_sum(red.e, product.hi);
  return log_limits(x, head.hi + (head.lo + lo), -Format<T>::kInfinity);
}

/// x^y with the special cases of C99 Annex F (pow(x, ±0) = 1, pow(1, y) = 1, pow(-1, ±inf)
/// = 1, signed zeros and infinities for odd integer y, NaN for x < 0 and non-integer y).
template <detail::math::MathFloat T> Array<T> pow(const Array<T>& x, const Array<T>& y) {
  using namespace detail::math;
  if (carries_grad(x, y)) return differentiate<T>(DiffOp::Pow, x, y);
  using F = Format<T>;
  Array<T> ax = abs(x);
  DoubleWord<T> l = log_double_word(ax);
  l.hi = select(ax == T(0), Array<T>(-F::kInfinity), select(ax == F::kInfinity, ax, l.hi));
  DoubleWord<T> t = two_product(y, l.hi);
  t.lo = fma(y, l.lo, t.lo);
  Array<T> magnitude = exp_limits(t.hi, exp_kernel(t.hi, &t.lo));
  // Sign: negative for x with the sign bit set (including -0) and odd integer y.
  Array<T> half = y * T(0.5);
  Bool integer = trunc(y) == y;  // true for ±inf, which behave as even integers
  Bool odd = integer & (trunc(half) != half);
  Array<T> result = select(odd, flip_sign(magnitude, sign_bit(x)), magnitude);
  result = select((x < T(0)) & (x > -F::kInfinity) & !integer, Array<T>(F::kNaN), result);
  result = select(isnan(x) | isnan(y), x + y, result);
  Bool one = (x == T(1)) | (y == T(0)) | ((ax == T(1)) & isinf(y));
  return select(one, Array<T>(T(1)), result);
}
template <detail::math::MathFloat T, typename S>
  requires detail::ScalarOperand<T, S>
Array<T> pow(const Array<T>& x, S y) {
  return pow(x, Array<T>(static_cast<T>(y)));
}
template <detail::math::MathFloat T, typename S>
  requires detail::ScalarOperand<T, S>
Array<T> pow(S x, const Array<T>& y) {
  return pow(Array<T>(static_cast<T>(x)), y);
}

/// log(1 + x), accurate for tiny |x| (where log(1 + x) would round 1 + x to 1). With
/// u = 1 + x rounded, log(1 + x) = log(u) + (x - (u - 1)) / u to first order: the second
/// term restores what rounding u lost. log1p(-1) = -inf, log1p(x < -1) = NaN.
template <detail::math::MathFloat T> Array<T> log1p(const Array<T>& x) {
  using namespace detail::math;
  if (carries_grad(x)) return differentiate<T>(DiffOp::Log1p, x);
  Array<T> u = x + T(1);
  Bool corrected = (u > T(0)) & (u < Format<T>::kInfinity);
  Array<T> lost = select(corrected, (x - (u - T(1))) / u, Array<T>(T(0)));
  return select(x == T(0), x, log(u) + lost);  // keeps the sign of -0
}

/// e^x - 1, accurate for tiny |x| (where exp(x) - 1 cancels). Kahan's form: with u = e^x
/// rounded, (u - 1) x / log(u) divides out the rounding of u. Overflows like exp();
/// expm1(-inf) = -1.
template <detail::math::MathFloat T> Array<T> expm1(const Array<T>& x) {
  using namespace detail::math;
  if (carries_grad(x)) return differentiate<T>(DiffOp::Expm1, x);
  Array<T> u = exp(x);
  Array<T> u_minus_1 = u - T(1);
  Array<T> result = select(u == Format<T>::kInfinity, u, u_minus_1 * x / log(u));
  result = select(u_minus_1 == T(-1), u_minus_1, result);
  return select(u == T(1), x, result);
}

/// Hyperbolic sine; overflows to ±inf beyond ~89.4 (float) / ~710.5 (double).
template <detail::math::MathFloat T> Array<T> sinh(const Array<T>& x) {
  using namespace detail::math;
  if (carries_grad(x)) return differentiate<T>(DiffOp::Sinh, x);
  static constexpr float kF[] = {0.166666672f, 0.00833331048f, 0.000198428956f, 2.78221319e-06f};
  static constexpr double kD[] = {0.16666666666666669,   0.008333333333332912,   0.0001984126984159341,
                                  2.755731910675577e-06, 2.5052130999182934e-08, 1.6056659088839705e-10,
                                  7.776604595296321e-13};
  constexpr T kOverflow = pick<T>(89.5f, 710.5);
  Array<T> ax = abs(x);
  // |x| < 1: odd series (no cancellation). Otherwise (e^|x| - e^-|x|) / 2 from e^|x| / 2.
  Array<T> z = ax * ax;
  Array<T> small = fma(ax * z, polynomial(z, kF, kD), ax);
  Array<T> half = exp_kernel(ax, nullptr, -1);
  Array<T> large = select(ax > kOverflow, Array<T>(Format<T>::kInfinity), half - T(0.25) / half);
  return flip_sign(select(ax < T(1), small, large), sign_bit(x));
}

/// Hyperbolic cosine; overflows to inf beyond ~89.4 (float) / ~710.5 (double).
template <detail::math::MathFloat T> Array<T> cosh(const Array<T>& x) {
  using namespace detail::math;
  if (carries_grad(x)) return differentiate<T>(DiffOp::Cosh, x);
  constexpr T kOverflow = pick<T>(89.5f, 710.5);
  Array<T> ax = abs(x);
  Array<T> half = exp_kernel(ax, nullptr, -1);
  return select(ax > kOverflow, Array<T>(Format<T>::kInfinity), half + T(0.25) / half);
}

/// Hyperbolic tangent.
template <detail::math::MathFloat T> Array<T> tanh(const Array<T>& x) {
  using namespace detail::math;
  if (carries_grad(x)) return differentiate<T>(DiffOp::Tanh, x);
  static constexpr float kF[] = {-0.333333164f, 0.133325443f, -0.0538475476f, 0.021050714f, -0.0062428494f};
  static constexpr double kD[] = {-0.333333333333333,     0.1333333333332658,    -0.05396825396373973,
                                  0.021869488385344863,   -0.008863232594294652, 0.0035920919682068796,
                                  -0.0014555424957586915, 0.0005884432111011147, -0.00023337865439119056,
                                  8.331265818419842e-05,  -1.949253916129038e-05};
  constexpr T kSaturated = pick<T>(9.f, 20.0);  // tanh rounds to 1 beyond this
  Array<T> ax = abs(x);
  Array<T> z = ax * ax;
  Array<T> small = fma(ax * z, polynomial(z, kF, kD), ax);
  // 1 - 2 / (e^2|x| + 1) has no harmful cancellation once |x| >= 0.55.
  Array<T> large = T(1) - T(2) / (exp_kernel(ax + ax) + T(1));
  large = select(ax > kSaturated, Array<T>(T(1)), large);
  return flip_sign(select(ax < T(0.55), small, large), sign_bit(x));
}

}  // namespace kiln
