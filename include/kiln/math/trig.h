// Trigonometric functions and their inverses.
//
// sin, cos and tan reduce |x| = n pi/2 + r with a three-part Cody–Waite split of pi/2
// and fma; r is kept as a double word (hi + lo) so the reduction adds almost no error.
// Minimax polynomials of sin and cos on |r| <= pi/4 are then chosen and signed by the
// quadrant n mod 4. The reduction is accurate while round(x 2/pi) is the right quadrant
// count: up to |x| ~ 2^19 (float) / 2^47 (double) as measured (docs/math.md). Beyond that
// accuracy degrades and then is lost (there is no Payne–Hanek reduction); sin and cos stay
// in [-1, 1] and no finite input gives NaN.
// asin/acos use asin(x) = pi/2 - 2 asin(sqrt((1-x)/2)) above 1/2; atan reduces to
// |t| <= tan(pi/8) with the octant identities.
#pragma once

#include <kiln/math/common.h>

#include <utility>

namespace kiln {
namespace detail::math {

/// |x| = quadrant * pi/2 + (hi + lo), |hi + lo| <= ~pi/4, for x >= 0.
template <typename T> struct QuarterTurns {
  Ints<T> quadrant;
  Array<T> hi, lo;
};
template <typename T> QuarterTurns<T> reduce_quarter_turns(const Array<T>& ax) {
  // pi/2 = kC1 + kC2 + kC3 (each the rounding of what the previous ones leave).
  constexpr T kC1 = pick<T>(1.57079637f, 1.5707963267948966);
  constexpr T kC2 = pick<T>(-4.37113883e-08f, 6.123233995736766e-17);
  constexpr T kC3 = pick<T>(-1.71512451e-15f, -1.4973849048591698e-33);
  Array<T> n = round(ax * pick<T>(0.636619747f, 0.6366197723675814));
  // Exact while |r1| < 1: ax and n kC1 are both multiples of ulp(kC1) / 2 or finer.
  Array<T> r1 = fma(n, Array<T>(-kC1), ax);
  // r1 - n kC2 can cancel heavily, so it is summed error-free (product and sum).
  DoubleWord<T> product = two_product(n, Array<T>(-kC2));
  DoubleWord<T> sum = two_sum(r1, product.hi);
  Array<T> lo = fma(n, Array<T>(-kC3), sum.lo + product.lo);
  // Beyond the supported range the reduction is meaningless; keep results bounded
  // (NaN, from x = ±inf, passes through).
  Bool failed = abs(sum.hi) > T(1);
  Array<T> zero(T(0));
  return {cast<IntOf<T>>(n), select(failed, zero, sum.hi), select(failed, zero, lo)};
}

/// sin(hi + lo) for |hi| <= pi/4, |lo| <= ulp(hi).
template <typename T> Array<T> sin_reduced(const Array<T>& hi, const Array<T>& lo, const Array<T>& z) {
  static constexpr float kF[] = {-0.166666552f, 0.00833218917f, -0.000195182918f};
  static constexpr double kD[] = {-0.1666666666666663,   0.00833333333332184,    -0.00019841269829358522,
                                  2.755731353851032e-06, -2.505073438836169e-08, 1.5895433223217964e-10};
  // sin(hi + lo) ~ sin(hi) + lo cos(hi) ~ hi + hi z P(z) + lo (1 - z/2).
  Array<T> correction = fma(lo * z, Array<T>(T(-0.5)), lo);
  return hi + fma(hi * z, polynomial(z, kF, kD), correction);
}

/// cos(hi + lo) for |hi| <= pi/4, |lo| <= ulp(hi); z = hi * hi.
template <typename T> Array<T> cos_reduced(const Array<T>& hi, const Array<T>& lo, const Array<T>& z) {
  static constexpr float kF[] = {0.0416666456f, -0.00138873095f, 2.44323273e-05f};
  static constexpr double kD[] = {0.041666666666666595,   -0.0013888888888873342, 2.480158728900208e-05,
                                  -2.755731421703866e-07, 2.087570539594709e-09,  -1.1358749231760443e-11};
  // cos(hi + lo) ~ 1 - z/2 + z^2 Q(z) - hi lo. 1 - z/2 is rounded to w, and (1 - w) - z/2
  // recovers that rounding error exactly.
  Array<T> h = z * T(0.5);
  Array<T> w = T(1) - h;
  return w + (((T(1) - w) - h) + fma(z * z, polynomial(z, kF, kD), -(hi * lo)));
}

/// sin and cos of |x| reduced, with the quadrant.
template <typename T> struct SinCosReduced {
  Ints<T> quadrant;
  Array<T> sin, cos;
};
template <typename T> SinCosReduced<T> sincos_reduced(const Array<T>& ax) {
  QuarterTurns<T> q = reduce_quarter_turns(ax);
  Array<T> z = q.hi * q.hi;
  return {q.quadrant, sin_reduced(q.hi, q.lo, z), cos_reduced(q.hi, q.lo, z)};
}

/// The sign bit when bit 1 of `quadrant` is set (quadrants 2 and 3 are negative).
template <typename T> Ints<T> quadrant_sign(const Ints<T>& quadrant) {
  return (quadrant & IntOf<T>(2)) << IntOf<T>(sizeof(T) * 8 - 2);
}

/// base + atan(t) for |t| <= tan(pi/8), where base = base_hi + base_lo is a multiple of
/// pi/4 with |base_hi| >= |t| or base_hi == 0; atan(t) = t + t^3 P(t^2), and base_hi + t is
/// summed exactly so the result is rounded about once.
template <typename T> Array<T> atan_plus(const Array<T>& t, const Array<T>& base_hi, const Array<T>& base_lo) {
  static constexpr float kF[] = {-0.333333164f, 0.199985281f, -0.14244391f, 0.105991684f, -0.0609005243f};
  static constexpr double kD[] = {-0.333333333333332,   0.19999999999953674, -0.14285714280199951, 0.11111110783523481,
                                  -0.09090897758642913, 0.07692060233556,    -0.06663104390678773, 0.05847893080522268,
                                  -0.05039328280980297, 0.03806533564290129, -0.01790825412497573};
  Array<T> z = t * t;
  Array<T> tail = (t * z) * polynomial(z, kF, kD);
  DoubleWord<T> head = fast_two_sum(base_hi, t);
  return head.hi + (head.lo + (tail + base_lo));
}

/// pi/4 = kQuarterPiHi + kQuarterPiLo, kQuarterPiHi short enough that k * hi is exact
/// for k = 0..4.
template <typename T> constexpr T kQuarterPiHi = pick<T>(0.785398245f, 0.7853981633974483);
template <typename T> constexpr T kQuarterPiLo = pick<T>(-8.14603425e-08f, 3.061616997868383e-17);

/// asin(s) - s for s in [0, 1/2], z = s^2: s z P(z).
template <typename T> Array<T> asin_tail(const Array<T>& s, const Array<T>& z) {
  static constexpr float kF[] = {0.166666597f,  0.0750052184f, 0.044513382f,
                                 0.0318388455f, 0.0143169165f, 0.0376917385f};
  static constexpr double kD[] = {
      0.1666666666666676,   0.07499999999970865,   0.044642857174562935, 0.030381942709751794, 0.02237221493941312,
      0.017351612786401623, 0.013980812137203676,  0.011398975505353138, 0.010779923457889525, 0.0037075727256119556,
      0.02170477986030116,  -0.020995488056003295, 0.03262649689349218};
  return (s * z) * polynomial(z, kF, kD);
}

/// For |x| <= 1/2, asin|x| = ax + tail. Above, with s = sqrt((1 - |x|) / 2) rounded,
/// asin|x| = pi/2 - 2 asin(s) and 2 asin(s) = 2s + (2 tail + twice_s_error), where
/// twice_s_error = (z - s^2) / s corrects the rounding of the square root.
template <typename T> struct ArcsinReduced {
  Bool upper;
  Array<T> s, tail, twice_s_error;
};
template <typename T> ArcsinReduced<T> arcsin_reduce(const Array<T>& ax) {
  Bool upper = ax > T(0.5);
  Array<T> z = select(upper, fma(ax, Array<T>(T(-0.5)), Array<T>(T(0.5))), ax * ax);
  Array<T> root = sqrt(z);
  // + kMinNormal keeps 0/0 away at |x| = 1 and leaves every other root unchanged.
  Array<T> twice_s_error = fma(-root, root, z) / (root + Format<T>::kMinNormal);
  Array<T> s = select(upper, root, ax);
  return {upper, s, asin_tail(s, z), twice_s_error};
}

}  // namespace detail::math

// ---- public functions --------------------------------------------------------------------

/// Sine (argument in radians).
template <detail::math::MathFloat T> Array<T> sin(const Array<T>& x) {
  using namespace detail::math;
  if (carries_grad(x)) return differentiate<T>(DiffOp::Sin, x);
  SinCosReduced<T> r = sincos_reduced(abs(x));
  Bool odd = (r.quadrant & IntOf<T>(1)) != IntOf<T>(0);
  return flip_sign(select(odd, r.cos, r.sin), quadrant_sign<T>(r.quadrant) ^ sign_bit(x));
}

/// Cosine (argument in radians).
template <detail::math::MathFloat T> Array<T> cos(const Array<T>& x) {
  using namespace detail::math;
  if (carries_grad(x)) return differentiate<T>(DiffOp::Cos, x);
  SinCosReduced<T> r = sincos_reduced(abs(x));
  Bool odd = (r.quadrant & IntOf<T>(1)) != IntOf<T>(0);
  return flip_sign(select(odd, r.sin, r.cos), quadrant_sign<T>(r.quadrant + IntOf<T>(1)));
}

/// {sin x, cos x}, sharing the argument reduction.
template <detail::math::MathFloat T> std::pair<Array<T>, Array<T>> sincos(const Array<T>& x) {
  using namespace detail::math;
  if (carries_grad(x)) return {sin(x), cos(x)};
  SinCosReduced<T> r = sincos_reduced(abs(x));
  Bool odd = (r.quadrant & IntOf<T>(1)) != IntOf<T>(0);
  Array<T> s = flip_sign(select(odd, r.cos, r.sin), quadrant_sign<T>(r.quadrant) ^ sign_bit(x));
  Array<T> c = flip_sign(select(odd, r.sin, r.cos), quadrant_sign<T>(r.quadrant + IntOf<T>(1)));
  return {s, c};
}

/// Tangent: sin r / cos r, or -cos r / sin r in odd quadrants.
template <detail::math::MathFloat T> Array<T> tan(const Array<T>& x) {
  using namespace detail::math;
  if (carries_grad(x)) return differentiate<T>(DiffOp::Tan, x);
  SinCosReduced<T> r = sincos_reduced(abs(x));
  Bool odd = (r.quadrant & IntOf<T>(1)) != IntOf<T>(0);
  Array<T> t = select(odd, r.cos, r.sin) / select(odd, -r.sin, r.cos);
  return flip_sign(t, sign_bit(x));
}

/// Arcsine, in [-pi/2, pi/2]; NaN outside [-1, 1].
template <detail::math::MathFloat T> Array<T> asin(const Array<T>& x) {
  using namespace detail::math;
  if (carries_grad(x)) return differentiate<T>(DiffOp::Asin, x);
  constexpr T kHalfPiHi = pick<T>(1.57079637f, 1.5707963267948966);
  constexpr T kHalfPiLo = pick<T>(-4.37113883e-08f, 6.123233995736766e-17);
  ArcsinReduced<T> r = arcsin_reduce(abs(x));
  // Above 1/2: pi/2 - 2s summed exactly (|pi/2| > |2s|), then the small terms, rounded once.
  DoubleWord<T> head = fast_two_sum(Array<T>(kHalfPiHi), -(r.s + r.s));
  Array<T> small = (kHalfPiLo + head.lo) - fma(r.tail, Array<T>(T(2)), r.twice_s_error);
  return flip_sign(select(r.upper, head.hi + small, r.s + r.tail), sign_bit(x));
}

/// Arccosine, in [0, pi]; NaN outside [-1, 1].
template <detail::math::MathFloat T> Array<T> acos(const Array<T>& x) {
  using namespace detail::math;
  if (carries_grad(x)) return differentiate<T>(DiffOp::Acos, x);
  constexpr T kHalfPiHi = pick<T>(1.57079637f, 1.5707963267948966);
  constexpr T kHalfPiLo = pick<T>(-4.37113883e-08f, 6.123233995736766e-17);
  constexpr T kPiHi = pick<T>(3.14159274f, 3.141592653589793);
  constexpr T kPiLo = pick<T>(-8.74227766e-08f, 1.2246467991473532e-16);
  ArcsinReduced<T> r = arcsin_reduce(abs(x));
  // |x| <= 1/2: pi/2 - asin x. Above: 2 asin(s) for x > 0, pi - 2 asin(s) for x < 0.
  Array<T> middle = kHalfPiHi - (flip_sign(r.s + r.tail, sign_bit(x)) - kHalfPiLo);
  Array<T> twice_s = r.s + r.s;
  Array<T> twice_rest = fma(r.tail, Array<T>(T(2)), r.twice_s_error);
  Array<T> upper = select(x < T(0), kPiHi - (twice_s - (kPiLo - twice_rest)), twice_s + twice_rest);
  return select(r.upper, upper, middle);
}

/// Arctangent, in [-pi/2, pi/2].
template <detail::math::MathFloat T> Array<T> atan(const Array<T>& x) {
  using namespace detail::math;
  if (carries_grad(x)) return differentiate<T>(DiffOp::Atan, x);
  Array<T> ax = abs(x);
  // Octants: |x| <= tan(pi/8): t = |x|; up to tan(3pi/8): pi/4 + atan((|x|-1)/(|x|+1));
  // above: pi/2 + atan(-1/|x|).
  Bool far = ax > pick<T>(2.41421366f, 2.414213562373095);
  Bool mid = ax > pick<T>(0.414213568f, 0.41421356237309503);
  Array<T> one(T(1));
  Array<T> t = select(far, -one, select(mid, ax - T(1), ax)) / select(far, ax, select(mid, ax + T(1), one));
  Array<T> k = select(far, Array<T>(T(2)), select(mid, one, Array<T>(T(0))));
  return flip_sign(atan_plus(t, k * kQuarterPiHi<T>, k * kQuarterPiLo<T>), sign_bit(x));
}

/// atan(y / x) in the quadrant of (x, y), in [-pi, pi], with the signed-zero and infinity
/// cases of C99 Annex F.
template <detail::math::MathFloat T> Array<T> atan2(const Array<T>& y, const Array<T>& x) {
  using namespace detail::math;
  if (carries_grad(y, x)) return differentiate<T>(DiffOp::Atan2, y, x);
  using F = Format<T>;
  Array<T> ax = abs(x), ay = abs(y);
  Array<T> lesser = min(ax, ay), greater = max(ax, ay);
  // The angle of (greater, lesser) is in [0, pi/4]; reduce it to |t| <= tan(pi/8). Both infinite
  // counts as the diagonal; 0/0 and inf/inf give t = 0.
  Bool mid = (lesser > greater * pick<T>(0.414213568f, 0.41421356237309503)) | (lesser == F::kInfinity);
  Array<T> t = select(mid, lesser - greater, lesser) / select(mid, lesser + greater, greater);
  t = select(isnan(t), Array<T>(T(0)), t);
  // angle = k pi/4 ± atan(t): reflect about pi/4 when |y| > |x|, about pi/2 when x < 0.
  Bool swap = ay > ax;
  Bool negative_x = sign_bit(x) != IntOf<T>(0);
  Array<T> k = select(mid, Array<T>(T(1)), Array<T>(T(0)));
  k = select(swap, T(2) - k, k);
  k = select(negative_x, T(4) - k, k);
  Ints<T> flip = select(swap, Ints<T>(F::kSignMask), Ints<T>(0)) ^ sign_bit(x);
  Array<T> angle = atan_plus(flip_sign(t, flip), k * kQuarterPiHi<T>, k * kQuarterPiLo<T>);
  angle = select(isnan(x) | isnan(y), x + y, angle);
  return flip_sign(angle, sign_bit(y));
}

}  // namespace kiln
