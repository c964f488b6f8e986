// The error function, its inverse, and the cube root.
//
// erf uses an odd series below |x| = 1 and erf = 1 - e^{-x^2} g(t) above, with g a
// polynomial in t = (x - k)/(x + k) (that change of variable makes erfc(x) e^{x^2} easy to
// fit) and e^{-x^2} computed from x^2 as a double word. erfinv starts from a polynomial in
// w = -log(1 - x^2) (or in sqrt(w) near ±1) good to ~2^-20 and takes one Halley step on
// erf(y) = x, using erfc for the residual near ±1 so it keeps full relative accuracy.
// cbrt scales x to m 2^(3q + r), guesses cbrt(m 2^r) with a short polynomial and takes one
// Halley step with an exact residual.
#pragma once

#include <kiln/math/common.h>
#include <kiln/math/exp_log.h>

namespace kiln {
namespace detail::math {

/// erf(x) - c1 x for 0 <= x <= 1, where erf(x) = x (c1 + c3 x^2 + ...) and c1 is split as
/// kErfC1 + kF[0] so that tiny x get a nearly correctly rounded c1 x.
template <typename T> constexpr T kErfC1 = pick<T>(1.12837923f, 1.1283791670955126);
template <typename T> Array<T> erf_small_tail(const Array<T>& ax) {
  static constexpr float kF[] = {-6.00041759e-08f, -0.37612626f,     0.112835862f,   -0.0268538371f,
                                 0.00518834777f,   -0.000801016286f, 7.85315351e-05f};
  static constexpr double kD[] = {1.5189103709620643e-17,  -0.3761263890318375,     0.11283791670954879,
                                  -0.02686617064507494,    0.005223977624784422,    -0.0008548326978198451,
                                  0.00012055330995396901,  -1.4925592094868621e-05, 1.6460944861985931e-06,
                                  -1.6349684139050527e-07, 1.4655348177889045e-08,  -1.1355164700135263e-09,
                                  5.926573307026445e-11};
  return ax * polynomial(ax * ax, kF, kD);
}
template <typename T> Array<T> erf_small(const Array<T>& ax) {
  return fma(ax, Array<T>(kErfC1<T>), erf_small_tail(ax));
}

/// e^{-x^2} and erfc(x) = e^{-x^2} g((x - k)/(x + k)) for 1 <= x <= kErfCutoff (g is
/// erfc(x) e^{x^2}; e^{-x^2} alone is valid for all 0 <= x <= kErfCutoff).
template <typename T> struct Erfc {
  Array<T> gauss, erfc;
};
template <typename T> constexpr T kErfCutoff = pick<T>(4.f, 6.0);  // erf rounds to 1 beyond
template <typename T> Erfc<T> erfc_large(const Array<T>& ax) {
  static constexpr float kF[] = {0.255395681f,   -0.427186191f,  0.24165684f,    -0.0789602473f,
                                 0.00377463829f, 0.00675072102f, -0.00112607551f};
  static constexpr double kD[] = {0.2108063640611436,      -0.37173673394897294,    0.25171319321745234,
                                  -0.12503305237892076,    0.03992253907514668,     -0.0039937011599481004,
                                  -0.002642365941047953,   0.0008759152833409183,   0.00022837978970800053,
                                  -0.00012887478307971415, -3.4174278983690704e-05, 1.859649011003044e-05,
                                  7.4938039594906724e-06,  -2.232332650545962e-06,  -1.5780222207670312e-06};
  constexpr T kCentre = pick<T>(2.f, 2.5);
  DoubleWord<T> square = two_product(ax, ax);
  Array<T> minus_lo = -square.lo;
  Array<T> gauss = exp_kernel(-square.hi, &minus_lo);
  Array<T> t = (ax - kCentre) / (ax + kCentre);
  return {gauss, gauss * polynomial(t, kF, kD)};
}

}  // namespace detail::math

// ---- public functions --------------------------------------------------------------------

/// The error function.
template <detail::math::MathFloat T> Array<T> erf(const Array<T>& x) {
  using namespace detail::math;
  if (carries_grad(x)) return differentiate<T>(DiffOp::Erf, x);
  Array<T> ax = abs(x);
  Array<T> large = select(ax > kErfCutoff<T>, Array<T>(T(1)), T(1) - erfc_large(ax).erfc);
  return flip_sign(select(ax < T(1), erf_small(ax), large), sign_bit(x));
}

/// The inverse error function on [-1, 1]: erfinv(±1) = ±inf, NaN outside.
template <detail::math::MathFloat T> Array<T> erfinv(const Array<T>& x) {
  using namespace detail::math;
  if (carries_grad(x)) return differentiate<T>(DiffOp::Erfinv, x);
  static constexpr float kCentralF[] = {1.62354231f,      0.241632015f,    -0.00573919481f,
                                        -0.000838463602f, 0.00019572505f,  -1.18546204e-05f,
                                        -1.91540198e-06f, 3.29935858e-07f, -3.33696448e-09f};
  static constexpr double kCentralD[] = {1.6235423071898678,      0.24163200745647823,    -0.005739190236861189,
                                         -0.0008384558666801257,  0.00019572310773431162, -1.1856360344822938e-05,
                                         -1.9150944119553323e-06, 3.300709196527471e-07,  -3.351863637722967e-09};
  static constexpr float kTailF[] = {3.08388591f,   1.00525117f,     0.00535745546f, -0.00365298754f,
                                     0.0025691255f, -0.00201473525f, 0.000850946642f};
  static constexpr double kTailD[] = {4.092223893771975,       1.0099790062058862,      0.0007048006038799853,
                                      -0.0006125985719479579,  0.00023418960447092754,  -5.7692930801450784e-05,
                                      -2.0347073191200245e-07, -1.2522506730806324e-05, 1.542078757575017e-05,
                                      -4.0238883332392255e-06};
  constexpr T kTailShift = pick<T>(3.25f, 4.25);
  Array<T> ax = abs(x);
  Array<T> w = -log((T(1) - ax) * (T(1) + ax));
  Array<T> central = polynomial(w - T(3), kCentralF, kCentralD);
  Array<T> tail = polynomial(sqrt(w) - kTailShift, kTailF, kTailD);
  Array<T> y = ax * select(w < T(6.25), central, tail);
  // Halley step on f(y) = erf(y) - |x|; above y = 1 the residual is (1 - |x|) - erfc(y),
  // where 1 - |x| is exact, so it stays accurate as |x| -> 1.
  Erfc<T> e = erfc_large(y);
  // Below 1, erf(y) - |x| = (c1 y - |x|) + tail + (c1 y rounding error), where c1 y - |x|
  // is exact (the two are within a factor 1.5).
  DoubleWord<T> linear = two_product(y, Array<T>(kErfC1<T>));
  Array<T> below = ((linear.hi - ax) + erf_small_tail(y)) + linear.lo;
  Array<T> residual = select(y < T(1), below, (T(1) - ax) - e.erfc);
  Array<T> u = residual * pick<T>(0.886226952f, 0.886226925452758) / e.gauss;  // f / f'
  y = y - u / fma(y, u, Array<T>(T(1)));
  y = select(ax == T(1), Array<T>(Format<T>::kInfinity), y);
  return flip_sign(y, sign_bit(x));
}

/// Cube root (odd: cbrt(-x) = -cbrt(x)).
template <detail::math::MathFloat T> Array<T> cbrt(const Array<T>& x) {
  using namespace detail::math;
  if (carries_grad(x)) return differentiate<T>(DiffOp::Cbrt, x);
  using F = Format<T>;
  static constexpr float kF[] = {0.552823424f, 0.587114275f, -0.162969664f, 0.0231049638f};
  static constexpr double kD[] = {0.4471408561370857,  0.9501013997429274,   -0.6661816806195135,  0.38536753045624145,
                                  -0.1444730049583931, 0.030904774130966352, -0.002859703679184757};
  constexpr IntOf<T> kSubnormalShift = sizeof(T) == 4 ? 24 : 54;  // a multiple of 3
  constexpr IntOf<T> kBias = F::kExponentBias;
  constexpr IntOf<T> kMantissaBits = F::kMantissaBits;
  Array<T> ax = abs(x);
  Bool subnormal = ax < F::kMinNormal;
  Array<T> a = select(subnormal, ax * pick<T>(0x1p24f, 0x1p54), ax);
  // a = m 2^e, e = 3q + r with r in {0, 1, 2}; the step runs on a_r = m 2^r in [1, 8).
  Ints<T> b = bits(a);
  Ints<T> e = (b >> kMantissaBits) - kBias;
  Ints<T> mantissa = b & F::kMantissaMask;
  Array<T> q = floor((cast<T>(e) + T(0.5)) * T(1.0 / 3.0));
  Ints<T> qi = cast<IntOf<T>>(q);
  Ints<T> r = e - qi * IntOf<T>(3);
  Array<T> m = from_bits<T>(mantissa | (kBias << kMantissaBits));
  Array<T> a_r = from_bits<T>(mantissa | ((r + kBias) << kMantissaBits));
  Array<T> factor =
      select(r == IntOf<T>(1), Array<T>(pick<T>(1.25992107f, 1.2599210498948732)),
             select(r == IntOf<T>(2), Array<T>(pick<T>(1.58740103f, 1.5874010519681996)), Array<T>(T(1))));
  Array<T> y = polynomial(m, kF, kD) * factor;
  // Halley: y -= y (y^3 - a) / (3a + 2 (y^3 - a)), with y^3 - a computed exactly via fma.
  DoubleWord<T> square = two_product(y, y);
  Array<T> residual = fma(square.lo, y, fma(square.hi, y, -a_r));
  y = y - y * residual / fma(residual, Array<T>(T(2)), a_r * T(3));
  Array<T> root = y * pow2<T>(qi - select(subnormal, Ints<T>(kSubnormalShift / 3), Ints<T>(0)));
  root = select((ax == T(0)) | !(ax < F::kInfinity), ax, root);
  return flip_sign(root, sign_bit(x));
}

}  // namespace kiln
