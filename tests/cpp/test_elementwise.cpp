// The elementwise helpers (elementwise.h: clip, clamp, lerp, square, sign, copysign, fmod,
// hypot), log1p and expm1 (math/exp_log.h) and the componentwise vector functions
// (vector_math.h), against the C library on the host, on both backends; derivatives of
// the composites by check_grads().
#include <kiln/kiln.h>

#include <gtest/gtest.h>

#include "autodiff_test_support.h"

#include <cmath>
#include <limits>
#include <random>
#include <vector>

using namespace kiln;
using kiln::test::AutodiffTest;
using kiln::test::run_on;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

/// Same value, NaNs equal, signed zeros distinguished.
bool same(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return a == b && std::signbit(a) == std::signbit(b);
}

/// Runs `program` on the LLVM backend and on the interpreter; both must give `expected`
/// exactly (NaNs equal, zero signs compared).
template <typename T, typename Program>
void expect_exact(const char* what, Program&& program, const std::vector<double>& expected) {
  for (bool interpreter : {false, true}) {
    std::vector<T> got = run_on(interpreter, [&] { return program().to_vector(); });
    ASSERT_EQ(got.size(), expected.size()) << what;
    for (size_t i = 0; i < got.size(); ++i)
      EXPECT_TRUE(same(double(got[i]), double(T(expected[i]))))
          << what << (interpreter ? " (interpreter)" : " (llvm)") << " lane " << i << ": got " << got[i]
          << ", expected " << T(expected[i]);
  }
}

const std::vector<double> kEdges = {0.0, -0.0, 1.0, -1.0, 2.5, -7.25, 1e-30, -3e5, kInf, -kInf, kNaN, 0.75};

template <typename T> class ElementwiseTyped : public ::testing::Test {};
using FloatTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(ElementwiseTyped, FloatTypes);

TYPED_TEST(ElementwiseTyped, MatchTheCLibraryOnEdgeValues) {
  using T = TypeParam;
  using A = Array<T>;
  std::vector<T> xs, ys;
  for (double x : kEdges)
    for (double y : kEdges) {
      xs.push_back(T(x));
      ys.push_back(T(y));
    }
  auto host = [&](auto f) {
    std::vector<double> out;
    for (size_t i = 0; i < xs.size(); ++i) out.push_back(double(f(xs[i], ys[i])));
    return out;
  };
  A x = A::from(xs), y = A::from(ys);
  expect_exact<T>("copysign", [&] { return copysign(x, y); }, host([](T a, T b) { return std::copysign(a, b); }));
  expect_exact<T>("fmod", [&] { return fmod(x, y); }, host([](T a, T b) { return std::fmod(a, b); }));
  expect_exact<T>("square", [&] { return square(x); }, host([](T a, T) { return a * a; }));
  expect_exact<T>("sign", [&] { return sign(x); }, host([](T a, T) { return a >= 0 ? T(1) : T(-1); }));
  // hypot: C's special cases exactly, the rest within an ulp or two of the C library.
  std::vector<double> reference = host([](T a, T b) { return std::hypot(a, b); });
  for (bool interpreter : {false, true}) {
    std::vector<T> got = run_on(interpreter, [&] { return hypot(x, y).to_vector(); });
    for (size_t i = 0; i < got.size(); ++i) {
      if (!std::isfinite(reference[i]) || reference[i] == 0)
        EXPECT_TRUE(same(double(got[i]), reference[i])) << "hypot(" << xs[i] << ", " << ys[i] << ") = " << got[i];
      else
        EXPECT_NEAR(double(got[i]), reference[i], reference[i] * 4 * std::numeric_limits<T>::epsilon())
            << "hypot(" << xs[i] << ", " << ys[i] << ")";
    }
  }
}

TYPED_TEST(ElementwiseTyped, FmodIsExactForHugeQuotients) {
  using T = TypeParam;
  std::vector<T> xs = {T(1e30), T(-1e30), T(3.0e38), T(7.5), T(-7.5), T(0.3)};
  std::vector<T> ys = {T(3), T(3), T(1e-3), T(-2), T(2), T(0.1)};
  std::vector<double> expected;
  for (size_t i = 0; i < xs.size(); ++i) expected.push_back(double(std::fmod(xs[i], ys[i])));
  expect_exact<T>("fmod", [&] { return fmod(Array<T>::from(xs), Array<T>::from(ys)); }, expected);
  EXPECT_EQ(fmod(Array<T>(T(-7.5)), T(2)).item(), T(-1.5));  // the sign of the dividend
}

/// The LLVM backend's fmod takes one fma for quotients below 2^(p-1) and frem for the rest
/// (lower.cpp, float_remainder): both must give C's result bit for bit.
TYPED_TEST(ElementwiseTyped, FmodMatchesTheCLibraryOnRandomMagnitudes) {
  using T = TypeParam;
  std::mt19937 rng(11);
  std::normal_distribution<double> normal;
  std::uniform_int_distribution<int> exponent(-60, 60);
  std::vector<T> xs, ys;
  std::vector<double> expected;
  for (int i = 0; i < (1 << 16); ++i) {
    xs.push_back(T(std::ldexp(normal(rng), exponent(rng))));
    ys.push_back(T(std::ldexp(normal(rng), exponent(rng))));
    expected.push_back(double(std::fmod(xs.back(), ys.back())));
  }
  expect_exact<T>("fmod", [&] { return fmod(Array<T>::from(xs), Array<T>::from(ys)); }, expected);
}

TEST(Elementwise, FmodOfIntegersIsCRemainder) {
  Int32 x = Int32{7, -7, 7, -7, 5}, y = Int32{3, 3, -3, -3, 0};
  EXPECT_EQ(fmod(x, y).to_vector(), (std::vector<int32_t>{1, -1, 1, -1, 5}));
}

TEST(Elementwise, ClipLerpAndSignOnArraysAndScalars) {
  Float x = Float{-2.f, -0.5f, 0.f, 0.25f, 3.f};
  EXPECT_EQ(clip(x, -1.f, 1.f).to_vector(), (std::vector<float>{-1.f, -0.5f, 0.f, 0.25f, 1.f}));
  EXPECT_EQ(clamp(x, Float{0, 0, 0, 0, 0}, 0.5f).to_vector(), (std::vector<float>{0, 0, 0, 0.25f, 0.5f}));
  EXPECT_EQ(clip(Int32{-5, 3, 9}, 0, 4).to_vector(), (std::vector<int32_t>{0, 3, 4}));
  Float a = Float{1.f, -3.f, 0.1f}, b = Float{5.f, 7.f, 0.7f};
  EXPECT_EQ(lerp(a, b, 0.f).to_vector(), a.to_vector());  // exact at both ends
  EXPECT_EQ(lerp(a, b, 1.f).to_vector(), b.to_vector());
  EXPECT_EQ(lerp(a, b, 0.25f).read(1), -0.5f);
  EXPECT_EQ(sign(Int32{-4, 0, 9}).to_vector(), (std::vector<int32_t>{-1, 1, 1}));
  EXPECT_EQ(sign(UInt32{0, 7}).to_vector(), (std::vector<uint32_t>{1, 1}));
}

/// Relative error of log1p / expm1 against the C library in double (float results), or in
/// long double (double results), over tiny, small and moderate arguments.
template <typename T, typename F, typename R> double max_relative_error(F kiln_fn, R reference, bool include_negative) {
  std::vector<T> xs;
  for (double e = -40; e <= 1; e += 0.37) {
    xs.push_back(T(std::pow(10.0, e) * 1.2345));
    if (include_negative && e < -0.1) xs.push_back(-T(std::pow(10.0, e) * 1.2345));
  }
  std::vector<T> got = kiln_fn(Array<T>::from(xs)).to_vector();
  double worst = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    long double want = reference((long double)xs[i]);
    if (want == 0) continue;
    worst = std::max(worst, double(std::fabs(((long double)got[i] - want) / want)));
  }
  return worst;
}

TYPED_TEST(ElementwiseTyped, Log1pAndExpm1AreAccurateNearZero) {
  using T = TypeParam;
  constexpr double ulp = std::numeric_limits<T>::epsilon();
  auto ref_log1p = [](long double x) { return std::log1p(x); };
  auto ref_expm1 = [](long double x) { return std::expm1(x); };
  for (bool interpreter : {false, true}) {
    run_on(interpreter, [&] {
      EXPECT_LT((max_relative_error<T>([](const Array<T>& x) { return log1p(x); }, ref_log1p, true)), 3 * ulp);
      EXPECT_LT((max_relative_error<T>([](const Array<T>& x) { return expm1(x); }, ref_expm1, true)), 3 * ulp);
      // The naive forms lose every digit at tiny x: the comparison above can fail.
      EXPECT_GT((max_relative_error<T>([](const Array<T>& x) { return log(x + T(1)); }, ref_log1p, true)), 0.5);
      return 0;
    });
  }
}

TYPED_TEST(ElementwiseTyped, Log1pAndExpm1SpecialValues) {
  using T = TypeParam;
  std::vector<T> xs = {T(0), T(-0.0), T(-1), T(-2), T(kInf), T(-kInf), T(kNaN), T(1e4)};
  std::vector<double> log1p_ref, expm1_ref;
  for (T x : xs) {
    log1p_ref.push_back(double(std::log1p(x)));
    expm1_ref.push_back(double(std::expm1(x)));
  }
  Array<T> x = Array<T>::from(xs);
  expect_exact<T>("log1p", [&] { return log1p(x); }, log1p_ref);
  expect_exact<T>("expm1", [&] { return expm1(x); }, expm1_ref);
}

TEST(ElementwiseVectors, ComponentwiseFunctionsAndComparisons) {
  Array3f v(Float{1.f, 4.f}, Float{9.f, 16.f}, Float{0.25f, 2.f});
  Array3f root = sqrt(v);
  EXPECT_EQ(root.x.to_vector(), (std::vector<float>{1.f, 2.f}));
  EXPECT_EQ(root.z.to_vector(), (std::vector<float>{0.5f, std::sqrt(2.f)}));
  EXPECT_EQ(pow(v, 2.f).y.to_vector(), (std::vector<float>{81.f, 256.f}));
  EXPECT_EQ(clip(v, 1.f, 10.f).y.to_vector(), (std::vector<float>{9.f, 10.f}));
  EXPECT_EQ(max(v, Float(3.f)).x.to_vector(), (std::vector<float>{3.f, 4.f}));
  Vector<Bool, 3> less = v < Array3f(Float(5.f));
  EXPECT_EQ(less.x.read(0), true);
  EXPECT_EQ(less.y.read(0), false);
  EXPECT_EQ(any(less).size(), 2u);  // one Bool per lane
  Bool all_less = all(v < 20.f), any_less = any(v < 1.f);
  EXPECT_TRUE(all_less.read(0) && all_less.read(1));
  EXPECT_TRUE(any_less.read(0) && !any_less.read(1));
  Array3f picked = select(less, v, Array3f(Float(-1.f)));
  EXPECT_EQ(picked.y.to_vector(), (std::vector<float>{-1.f, -1.f}));
  EXPECT_EQ(picked.z.to_vector(), (std::vector<float>{0.25f, 2.f}));
  Array3f mixed = lerp(v, Array3f(Float(0.f)), 0.5f);
  EXPECT_EQ(mixed.y.to_vector(), (std::vector<float>{4.5f, 8.f}));
}

// ---- derivatives of the composites -------------------------------------------------------

using F = const Float64&;
class ElementwiseGrads : public AutodiffTest {};

TEST_F(ElementwiseGrads, CompositesMatchFiniteDifferences) {
  auto away = test::domain_array(16, {0.2, 2.0, true}, 0.0);
  auto other = test::domain_array(16, {0.3, 1.5, true}, 0.5);
  auto t = test::domain_array(16, {0.0, 1.0}, 0.25);
  test::for_each_run([&] {
    KILN_EXPECT_GRADS(check_grads([](F x, F lo) { return clip(x, lo * 0.5, 1.0); }, std::tuple(away, other)));
    KILN_EXPECT_GRADS(check_grads([](F a, F b, F s) { return lerp(a, b, s); }, std::tuple(away, other, t)));
    KILN_EXPECT_GRADS(check_grads([](F x, F y) { return hypot(x, y); }, std::tuple(away, other)));
    KILN_EXPECT_GRADS(check_grads([](F x, F y) { return copysign(x, y); }, std::tuple(away, other)));
    KILN_EXPECT_GRADS(check_grads([](F x) { return square(x); }, std::tuple(away)));
    KILN_EXPECT_GRADS(check_grads([](F x, F y) { return fmod(x * 7.0, y); }, std::tuple(away, other)));
    KILN_EXPECT_GRADS(check_grads([](F x, F y) { return norm(Array3f64(x, y, x * y)) + hypot(log1p(x * x), expm1(y)); },
                                  std::tuple(away, other)));
  });
}

}  // namespace
