// The math library (include/kiln/math.h): maximum ULP error against glibc over ~10^6
// inputs per function and precision, the IEEE / C99 Annex F special values, and
// bit-identical results on the LLVM backend and the reference interpreter.
//
// References: for float, glibc's double function on the same input (not rounded to float,
// so a correctly rounded result measures <= 0.5 ulp); for double, glibc's long double
// function (x86-64: 64-bit significand), except erfinv, which glibc lacks: its reference
// is Halley's method iterated on erfl / erfcl in long double. Each measured row of the
// table in docs/math.md is printed as an "[ ulp  ]" line, each op count as "[ ops  ]".
#include <kiln/kiln.h>
#include <kiln/math.h>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

using namespace kiln;

namespace {

using LD = long double;

// ---- measuring ---------------------------------------------------------------------------

/// |got - reference| in units in the last place of T at the reference. NaN against NaN
/// and equal infinities are 0; a NaN or infinity mismatch is +inf.
template <typename T> double ulp_error(T got, LD reference) {
  if (std::isnan(reference) || std::isnan(got)) return std::isnan(reference) && std::isnan(got) ? 0 : INFINITY;
  LD rounded = LD(T(reference));  // overflows to inf like the true result would
  if (std::isinf(rounded) || std::isinf(got)) {
    if (rounded == LD(got)) return 0;
    if (!std::isinf(got))
      reference = std::copysign(LD(std::numeric_limits<T>::max()), reference);
    else
      return INFINITY;
  }
  int exponent = 0;
  std::frexp(reference, &exponent);                         // |reference| in [2^(exponent-1), 2^exponent)
  int min_exponent = std::numeric_limits<T>::min_exponent;  // 2^(min_exponent-1) = min normal
  int e = std::max(exponent, min_exponent) - std::numeric_limits<T>::digits;
  return double(std::fabs(LD(got) - reference) / std::ldexp(LD(1), e));
}

struct Worst {
  double ulp = 0;
  std::string where;
};

template <typename T> std::string describe(const std::vector<T>& args) {
  std::string s;
  char buffer[64];
  for (T a : args) {
    std::snprintf(buffer, sizeof buffer, "%s%.17g", s.empty() ? "" : ", ", double(a));
    s += buffer;
  }
  return s;
}

// ---- inputs ------------------------------------------------------------------------------

/// Deterministic input sets built from uniform and log-spaced sweeps.
template <typename T> class Inputs {
 public:
  explicit Inputs(uint64_t seed) : rng_(seed) {}
  /// `count` values uniform in [lo, hi].
  Inputs& uniform(double lo, double hi, size_t count) {
    std::uniform_real_distribution<double> u(lo, hi);
    for (size_t i = 0; i < count; ++i) values_.push_back(T(u(rng_)));
    return *this;
  }
  /// `count` values with |x| log-uniform in [lo, hi], random signs when `both_signs`.
  Inputs& log_uniform(double lo, double hi, size_t count, bool both_signs = true) {
    std::uniform_real_distribution<double> u(std::log(lo), std::log(hi));
    for (size_t i = 0; i < count; ++i) {
      T v = T(std::exp(u(rng_)));
      values_.push_back(both_signs && (rng_() & 1) ? -v : v);
    }
    return *this;
  }
  /// 1 - d and -(1 - d) for d log-uniform in [lo, hi] (inputs near ±1).
  Inputs& near_one(double lo, double hi, size_t count) {
    std::uniform_real_distribution<double> u(std::log(lo), std::log(hi));
    for (size_t i = 0; i < count; ++i) {
      T v = T(1) - T(std::exp(u(rng_)));
      values_.push_back(rng_() & 1 ? -v : v);
    }
    return *this;
  }
  Inputs& add(std::initializer_list<T> values) {
    values_.insert(values_.end(), values);
    return *this;
  }
  const std::vector<T>& values() const { return values_; }

 private:
  std::mt19937_64 rng_;
  std::vector<T> values_;
};

template <typename T> std::vector<T> special_values() {
  using L = std::numeric_limits<T>;
  return {T(0),      -T(0),     L::infinity(), -L::infinity(),  L::quiet_NaN(),
          T(1),      T(-1),     T(0.5),        T(-0.5),         T(2),
          T(-2),     T(3),      T(-3),         L::denorm_min(), -L::denorm_min(),
          L::min(),  -L::min(), L::max(),      -L::max(),       T(1e-30),
          T(-1e-30), T(100),    T(-100),       T(1000),         T(-1000)};
}

// ---- the functions under test --------------------------------------------------------------

template <typename T> using Unary = std::function<Array<T>(const Array<T>&)>;
template <typename T> using Binary = std::function<Array<T>(const Array<T>&, const Array<T>&)>;

template <typename T> std::vector<T> run(const Unary<T>& f, const std::vector<T>& x) {
  return f(Array<T>::from(x)).to_vector();
}
template <typename T> std::vector<T> run(const Binary<T>& f, const std::vector<T>& x, const std::vector<T>& y) {
  return f(Array<T>::from(x), Array<T>::from(y)).to_vector();
}

/// erfinv reference: Halley's method on erf(y) = x in long double, with the erfc residual near ±1.
LD erfinv_reference(LD x) {
  if (std::isnan(x) || std::fabs(x) > 1) return NAN;
  if (std::fabs(x) == 1) return std::copysign(LD(INFINITY), x);
  if (x == 0) return x;
  LD a = std::fabs(x);
  // Start from the asymptotic form, then iterate to convergence.
  LD w = -std::log((1 - a) * (1 + a));
  LD y = a < LD(0.9) ? a * LD(0.886226925452758) * (1 + LD(0.2) * w) : std::sqrt(w - std::log(w) * LD(0.5));
  for (int i = 0; i < 60; ++i) {
    LD residual = a < LD(0.5) ? erfl(y) - a : (1 - a) - erfcl(y);
    LD step = residual * LD(0.88622692545275801364908374167057259L) * expl(y * y);
    LD next = y - step / (1 + y * step);  // Halley
    if (next == y) break;
    y = next;
  }
  return std::copysign(y, x);
}

/// One row of the accuracy table: a function, its references and its input sets.
struct UnaryCase {
  const char* name;
  Unary<float> f32;
  Unary<double> f64;
  std::function<double(double)> reference32;  // double reference for float inputs
  std::function<LD(LD)> reference64;          // long double reference for double inputs
  std::function<void(Inputs<float>&)> inputs32;
  std::function<void(Inputs<double>&)> inputs64;
  double bound32, bound64;                                        // asserted max ULP error
  double special_limit32 = INFINITY, special_limit64 = INFINITY;  // skip larger finite specials
};

#define KILN_UNARY(name) [](const auto& x) { return kiln::name(x); }

constexpr double kPi = 3.14159265358979323846;
constexpr size_t kMillion = 1000000;
/// The tested domain of sin, cos and tan (see docs/math.md for larger arguments).
constexpr double kTrigLimit32 = 5e5, kTrigLimit64 = 1e14;

std::vector<UnaryCase> unary_cases() {
  std::vector<UnaryCase> cases;
  auto trig32 = [](Inputs<float>& in) {
    in.uniform(-kPi / 4, kPi / 4, 300000).uniform(-2 * kPi, 2 * kPi, 300000).log_uniform(1e-30, kTrigLimit32, 400000);
  };
  auto trig64 = [](Inputs<double>& in) {
    in.uniform(-kPi / 4, kPi / 4, 300000).uniform(-2 * kPi, 2 * kPi, 300000).log_uniform(1e-300, kTrigLimit64, 400000);
  };
  cases.push_back({"sin", KILN_UNARY(sin), KILN_UNARY(sin), [](double x) { return std::sin(x); },
                   [](LD x) { return sinl(x); }, trig32, trig64, 1, 1, kTrigLimit32, kTrigLimit64});
  cases.push_back({"cos", KILN_UNARY(cos), KILN_UNARY(cos), [](double x) { return std::cos(x); },
                   [](LD x) { return cosl(x); }, trig32, trig64, 1, 1, kTrigLimit32, kTrigLimit64});
  cases.push_back({"tan", KILN_UNARY(tan), KILN_UNARY(tan), [](double x) { return std::tan(x); },
                   [](LD x) { return tanl(x); }, trig32, trig64, 2.5, 2.5, kTrigLimit32, kTrigLimit64});
  auto inverse_trig = [](auto& in) {
    in.uniform(-1, 1, 500000).log_uniform(1e-30, 1, 300000).near_one(1e-7, 0.5, 200000);
  };
  cases.push_back({"asin", KILN_UNARY(asin), KILN_UNARY(asin), [](double x) { return std::asin(x); },
                   [](LD x) { return asinl(x); }, inverse_trig, inverse_trig, 1, 1});
  cases.push_back({"acos", KILN_UNARY(acos), KILN_UNARY(acos), [](double x) { return std::acos(x); },
                   [](LD x) { return acosl(x); }, inverse_trig, inverse_trig, 1.5, 1.5});
  auto atan_inputs = [](auto& in) { in.uniform(-4, 4, 400000).log_uniform(1e-30, 1e30, 600000); };
  cases.push_back({"atan", KILN_UNARY(atan), KILN_UNARY(atan), [](double x) { return std::atan(x); },
                   [](LD x) { return atanl(x); }, atan_inputs, atan_inputs, 2, 2});
  cases.push_back({"exp", KILN_UNARY(exp), KILN_UNARY(exp), [](double x) { return std::exp(x); },
                   [](LD x) { return expl(x); },
                   [](Inputs<float>& in) {
                     in.uniform(-0.35, 0.35, 300000).uniform(-104, 89, 400000).log_uniform(1e-30, 1, 300000);
                   },
                   [](Inputs<double>& in) {
                     in.uniform(-0.35, 0.35, 300000).uniform(-746, 710, 400000).log_uniform(1e-300, 1, 300000);
                   },
                   1, 1});
  cases.push_back({"exp2", KILN_UNARY(exp2), KILN_UNARY(exp2), [](double x) { return std::exp2(x); },
                   [](LD x) { return exp2l(x); },
                   [](Inputs<float>& in) {
                     in.uniform(-0.5, 0.5, 300000).uniform(-151, 129, 400000).log_uniform(1e-30, 1, 300000);
                   },
                   [](Inputs<double>& in) {
                     in.uniform(-0.5, 0.5, 300000).uniform(-1076, 1025, 400000).log_uniform(1e-300, 1, 300000);
                   },
                   1, 1});
  auto log32 = [](Inputs<float>& in) {
    in.log_uniform(1e-45, 3e38, 500000, false)
        .uniform(0.5, 2, 300000)
        .near_one(1e-7, 0.3, 100000)
        .uniform(1, 1.0001, 100000);
  };
  auto log64 = [](Inputs<double>& in) {
    in.log_uniform(5e-324, 1.7e308, 500000, false)
        .uniform(0.5, 2, 300000)
        .near_one(1e-16, 0.3, 100000)
        .uniform(1, 1.0001, 100000);
  };
  cases.push_back({"log", KILN_UNARY(log), KILN_UNARY(log), [](double x) { return std::log(x); },
                   [](LD x) { return logl(x); }, log32, log64, 1, 1});
  cases.push_back({"log2", KILN_UNARY(log2), KILN_UNARY(log2), [](double x) { return std::log2(x); },
                   [](LD x) { return log2l(x); }, log32, log64, 1.5, 1.5});
  cases.push_back(
      {"sinh", KILN_UNARY(sinh), KILN_UNARY(sinh), [](double x) { return std::sinh(x); }, [](LD x) { return sinhl(x); },
       [](Inputs<float>& in) { in.uniform(-2, 2, 300000).uniform(-90, 90, 400000).log_uniform(1e-30, 1, 300000); },
       [](Inputs<double>& in) { in.uniform(-2, 2, 300000).uniform(-711, 711, 400000).log_uniform(1e-300, 1, 300000); },
       2, 2});
  cases.push_back(
      {"cosh", KILN_UNARY(cosh), KILN_UNARY(cosh), [](double x) { return std::cosh(x); }, [](LD x) { return coshl(x); },
       [](Inputs<float>& in) { in.uniform(-2, 2, 300000).uniform(-90, 90, 400000).log_uniform(1e-30, 1, 300000); },
       [](Inputs<double>& in) { in.uniform(-2, 2, 300000).uniform(-711, 711, 400000).log_uniform(1e-300, 1, 300000); },
       1.5, 1.5});
  cases.push_back(
      {"tanh", KILN_UNARY(tanh), KILN_UNARY(tanh), [](double x) { return std::tanh(x); }, [](LD x) { return tanhl(x); },
       [](Inputs<float>& in) { in.uniform(-1, 1, 300000).uniform(-10, 10, 400000).log_uniform(1e-30, 1, 300000); },
       [](Inputs<double>& in) { in.uniform(-1, 1, 300000).uniform(-22, 22, 400000).log_uniform(1e-300, 1, 300000); }, 2,
       2});
  cases.push_back({"erf", KILN_UNARY(erf), KILN_UNARY(erf), [](double x) { return std::erf(x); },
                   [](LD x) { return erfl(x); },
                   [](Inputs<float>& in) {
                     in.uniform(-1.5, 1.5, 300000).uniform(-4.5, 4.5, 400000).log_uniform(1e-30, 1, 300000);
                   },
                   [](Inputs<double>& in) {
                     in.uniform(-1.5, 1.5, 300000).uniform(-6.5, 6.5, 400000).log_uniform(1e-300, 1, 300000);
                   },
                   1.5, 1.5});
  cases.push_back(
      {"erfinv", KILN_UNARY(erfinv), KILN_UNARY(erfinv), [](double x) { return double(erfinv_reference(x)); },
       [](LD x) { return erfinv_reference(x); },
       [](Inputs<float>& in) { in.uniform(-1, 1, 500000).near_one(6e-8, 0.5, 300000).log_uniform(1e-30, 1, 200000); },
       [](Inputs<double>& in) {
         in.uniform(-1, 1, 500000).near_one(1.2e-16, 0.5, 300000).log_uniform(1e-300, 1, 200000);
       },
       3, 3});
  cases.push_back({"cbrt", KILN_UNARY(cbrt), KILN_UNARY(cbrt), [](double x) { return std::cbrt(x); },
                   [](LD x) { return cbrtl(x); },
                   [](Inputs<float>& in) { in.uniform(-8, 8, 300000).log_uniform(1e-45, 3e38, 700000); },
                   [](Inputs<double>& in) { in.uniform(-8, 8, 300000).log_uniform(5e-324, 1.7e308, 700000); }, 1, 1});
  return cases;
}

/// Max ULP error of `f` over `inputs` against `reference`.
template <typename T, typename Ref>
Worst measure_unary(const Unary<T>& f, const std::vector<T>& inputs, const Ref& reference) {
  std::vector<T> got = run(f, inputs);
  Worst worst;
  for (size_t i = 0; i < inputs.size(); ++i) {
    double e = ulp_error<T>(got[i], LD(reference(inputs[i])));
    if (e > worst.ulp) {
      worst.ulp = e;
      worst.where = describe<T>({inputs[i]}) + " -> " + describe<T>({got[i]});
    }
  }
  return worst;
}

void print_row(const char* name, const char* type, const Worst& w, size_t count) {
  std::printf("[ ulp  ] %-7s %-6s max %.3f ulp over %zu inputs (worst at %s)\n", name, type, w.ulp, count,
              w.where.c_str());
}

}  // namespace

// ---- accuracy --------------------------------------------------------------------------------

TEST(Math, UnaryFunctionsMeetTheirUlpBounds) {
  uint64_t seed = 1;
  for (const UnaryCase& c : unary_cases()) {
    Inputs<float> in32(seed++);
    c.inputs32(in32);
    std::vector<float> x32 = in32.values();
    for (float s : special_values<float>())
      if (!(std::fabs(s) > c.special_limit32) || std::isinf(s)) x32.push_back(s);
    ASSERT_GE(x32.size(), kMillion);
    Worst w32 = measure_unary<float>(c.f32, x32, c.reference32);
    print_row(c.name, "float", w32, x32.size());
    EXPECT_LE(w32.ulp, c.bound32) << c.name << "(float) worst at " << w32.where;

    Inputs<double> in64(seed++);
    c.inputs64(in64);
    std::vector<double> x64 = in64.values();
    for (double s : special_values<double>())
      if (!(std::fabs(s) > c.special_limit64) || std::isinf(s)) x64.push_back(s);
    ASSERT_GE(x64.size(), kMillion);
    Worst w64 = measure_unary<double>(c.f64, x64, c.reference64);
    print_row(c.name, "double", w64, x64.size());
    EXPECT_LE(w64.ulp, c.bound64) << c.name << "(double) worst at " << w64.where;
  }
}

namespace {

/// Pairs (x, y) for a binary function.
template <typename T> struct Pairs {
  std::vector<T> x, y;
  void add(T a, T b) {
    x.push_back(a);
    y.push_back(b);
  }
};

template <typename T> Pairs<T> pow_inputs(uint64_t seed) {
  constexpr bool f32 = sizeof(T) == 4;
  std::mt19937_64 rng(seed);
  auto uniform = [&](double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng); };
  auto log_uniform = [&](double lo, double hi) { return std::exp(uniform(std::log(lo), std::log(hi))); };
  Pairs<T> p;
  for (int i = 0; i < 300000; ++i) p.add(T(log_uniform(1e-3, 1e3)), T(uniform(-12, 12)));
  // Results near overflow and underflow, where the log must be carried in extra precision.
  double big_y = f32 ? 200 : 1500;
  for (int i = 0; i < 200000; ++i) p.add(T(uniform(0.5, 2)), T(uniform(-big_y, big_y)));
  for (int i = 0; i < 100000; ++i) {
    T x = T(1) + T(uniform(-1, 1) * (f32 ? 1e-3 : 1e-9));
    p.add(x, T(uniform(-1, 1) * (f32 ? 1e5 : 1e12)));
  }
  for (int i = 0; i < 100000; ++i) p.add(T(-log_uniform(0.1, 10)), T(std::nearbyint(uniform(-30, 30))));
  double tiny = f32 ? 1e-38 : 1e-300, huge = f32 ? 1e38 : 1e300;
  for (int i = 0; i < 200000; ++i) p.add(T(log_uniform(tiny, huge)), T(uniform(-3, 3)));
  for (int i = 0; i < 100000; ++i) p.add(T(log_uniform(1e-3, 1e3)), T(std::nearbyint(uniform(-40, 40))));
  return p;
}

template <typename T> Pairs<T> atan2_inputs(uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto uniform = [&](double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng); };
  auto signed_log = [&](double lo, double hi) {
    double v = std::exp(uniform(std::log(lo), std::log(hi)));
    return rng() & 1 ? -v : v;
  };
  Pairs<T> p;
  for (int i = 0; i < 400000; ++i) p.add(T(signed_log(1e-30, 1e30)), T(signed_log(1e-30, 1e30)));
  for (int i = 0; i < 400000; ++i) p.add(T(uniform(-10, 10)), T(uniform(-10, 10)));
  for (int i = 0; i < 200000; ++i) {  // near the diagonals, where the octant reduction switches
    T x = T(signed_log(1e-3, 1e3));
    p.add(T(x * uniform(0.3, 3)) * (rng() & 1 ? 1 : -1), x);
  }
  return p;
}

template <typename T, typename Ref> Worst measure_binary(const Binary<T>& f, const Pairs<T>& p, const Ref& reference) {
  std::vector<T> got = run(f, p.x, p.y);
  Worst worst;
  for (size_t i = 0; i < got.size(); ++i) {
    double e = ulp_error<T>(got[i], LD(reference(p.x[i], p.y[i])));
    if (e > worst.ulp) {
      worst.ulp = e;
      worst.where = describe<T>({p.x[i], p.y[i]}) + " -> " + describe<T>({got[i]});
    }
  }
  return worst;
}

constexpr double kPowBound = 1.5, kAtan2Bound = 2;

Binary<float> pow32 = [](const Float& x, const Float& y) { return kiln::pow(x, y); };
Binary<double> pow64 = [](const Float64& x, const Float64& y) { return kiln::pow(x, y); };
Binary<float> atan2_32 = [](const Float& y, const Float& x) { return kiln::atan2(y, x); };
Binary<double> atan2_64 = [](const Float64& y, const Float64& x) { return kiln::atan2(y, x); };

/// Same IEEE class as the reference: NaN, equal infinities, zeros of the same sign.
template <typename T> bool same_class(T got, LD reference) {
  if (std::isnan(reference)) return std::isnan(got);
  if (std::isinf(T(reference))) return LD(got) == LD(T(reference));
  if (T(reference) == 0) return got == 0 && std::signbit(got) == std::signbit(reference);
  return std::isfinite(got) && got != 0;
}

}  // namespace

TEST(Math, PowMeetsItsUlpBound) {
  Pairs<float> p32 = pow_inputs<float>(101);
  ASSERT_GE(p32.x.size(), kMillion);
  Worst w32 = measure_binary<float>(pow32, p32, [](float x, float y) { return std::pow(double(x), double(y)); });
  print_row("pow", "float", w32, p32.x.size());
  EXPECT_LE(w32.ulp, kPowBound) << w32.where;
  Pairs<double> p64 = pow_inputs<double>(102);
  Worst w64 = measure_binary<double>(pow64, p64, [](double x, double y) { return powl(x, y); });
  print_row("pow", "double", w64, p64.x.size());
  EXPECT_LE(w64.ulp, kPowBound) << w64.where;
}

TEST(Math, Atan2MeetsItsUlpBound) {
  Pairs<float> p32 = atan2_inputs<float>(201);
  ASSERT_GE(p32.x.size(), kMillion);
  Worst w32 = measure_binary<float>(atan2_32, p32, [](float y, float x) { return std::atan2(double(y), double(x)); });
  print_row("atan2", "float", w32, p32.x.size());
  EXPECT_LE(w32.ulp, kAtan2Bound) << w32.where;
  Pairs<double> p64 = atan2_inputs<double>(202);
  Worst w64 = measure_binary<double>(atan2_64, p64, [](double y, double x) { return atan2l(y, x); });
  print_row("atan2", "double", w64, p64.x.size());
  EXPECT_LE(w64.ulp, kAtan2Bound) << w64.where;
}

TEST(Math, SincosMatchesSinAndCos) {
  std::vector<float> x = Inputs<float>(7).uniform(-100, 100, 10000).values();
  auto [s, c] = kiln::sincos(Float::from(x));
  std::vector<float> s_got = s.to_vector(), c_got = c.to_vector();
  std::vector<float> s_ref = kiln::sin(Float::from(x)).to_vector(), c_ref = kiln::cos(Float::from(x)).to_vector();
  for (size_t i = 0; i < x.size(); ++i) {
    ASSERT_EQ(s_got[i], s_ref[i]) << x[i];
    ASSERT_EQ(c_got[i], c_ref[i]) << x[i];
  }
}

// ---- special values -----------------------------------------------------------------------------

template <typename T> void check_unary_specials(const UnaryCase& c) {
  constexpr bool f32 = sizeof(T) == 4;
  std::vector<T> x = special_values<T>();
  std::vector<T> got;
  if constexpr (f32)
    got = run(c.f32, x);
  else
    got = run(c.f64, x);
  double limit = f32 ? c.special_limit32 : c.special_limit64;
  for (size_t i = 0; i < x.size(); ++i) {
    LD reference = f32 ? LD(c.reference32(double(x[i]))) : c.reference64(LD(x[i]));
    if (std::fabs(x[i]) > limit && std::isfinite(x[i])) {
      // Outside the reduction's domain: only boundedness is promised (docs/math.md).
      EXPECT_FALSE(std::isnan(got[i])) << c.name << "(" << x[i] << ")";
      continue;
    }
    EXPECT_TRUE(same_class<T>(got[i], reference))
        << c.name << "(" << double(x[i]) << ") = " << double(got[i]) << ", glibc " << double(reference);
    EXPECT_LE(ulp_error<T>(got[i], reference), f32 ? c.bound32 : c.bound64) << c.name << "(" << double(x[i]) << ")";
  }
}

TEST(Math, UnarySpecialValuesMatchGlibc) {
  for (const UnaryCase& c : unary_cases()) {
    check_unary_specials<float>(c);
    check_unary_specials<double>(c);
  }
}

template <typename T, typename Ref>
void check_binary_specials(const char* name, const Binary<T>& f, const Ref& reference, double bound) {
  std::vector<T> s = special_values<T>();
  s.push_back(T(0.25));
  s.push_back(T(-0.75));
  s.push_back(T(5));
  s.push_back(T(-7));
  s.push_back(T(4.5));
  Pairs<T> p;
  for (T a : s)
    for (T b : s) p.add(a, b);
  std::vector<T> got = run(f, p.x, p.y);
  for (size_t i = 0; i < got.size(); ++i) {
    LD r = LD(reference(p.x[i], p.y[i]));
    EXPECT_TRUE(same_class<T>(got[i], r)) << name << "(" << double(p.x[i]) << ", " << double(p.y[i])
                                          << ") = " << double(got[i]) << ", glibc " << double(r);
    EXPECT_LE(ulp_error<T>(got[i], r), bound) << name << "(" << double(p.x[i]) << ", " << double(p.y[i]) << ")";
  }
}

TEST(Math, PowAndAtan2SpecialValuesMatchGlibc) {
  check_binary_specials<float>("pow", pow32, [](float x, float y) { return std::pow(x, y); }, kPowBound);
  check_binary_specials<double>("pow", pow64, [](double x, double y) { return powl(x, y); }, kPowBound);
  check_binary_specials<float>("atan2", atan2_32, [](float y, float x) { return std::atan2(y, x); }, kAtan2Bound);
  check_binary_specials<double>("atan2", atan2_64, [](double y, double x) { return atan2l(y, x); }, kAtan2Bound);
}

TEST(Math, AnnexFCasesByName) {
  const float inf = INFINITY, nan = NAN;
  auto one = [](Float (*f)(const Float&), float x) { return f(Float(x)).item(); };
  EXPECT_EQ(one(kiln::log<float>, 0.f), -inf);
  EXPECT_EQ(one(kiln::log<float>, -0.f), -inf);
  EXPECT_TRUE(std::isnan(one(kiln::log<float>, -1.f)));
  EXPECT_EQ(one(kiln::log<float>, inf), inf);
  EXPECT_EQ(one(kiln::log2<float>, 0.f), -inf);
  EXPECT_EQ(one(kiln::exp<float>, -inf), 0.f);
  EXPECT_EQ(one(kiln::exp<float>, inf), inf);
  EXPECT_EQ(one(kiln::exp<float>, 100.f), inf);
  EXPECT_EQ(one(kiln::exp<float>, -200.f), 0.f);
  EXPECT_TRUE(std::isnan(one(kiln::exp<float>, nan)));
  EXPECT_TRUE(std::signbit(one(kiln::sin<float>, -0.f)));
  EXPECT_TRUE(std::signbit(one(kiln::tan<float>, -0.f)));
  EXPECT_TRUE(std::signbit(one(kiln::asin<float>, -0.f)));
  EXPECT_TRUE(std::signbit(one(kiln::atan<float>, -0.f)));
  EXPECT_TRUE(std::signbit(one(kiln::sinh<float>, -0.f)));
  EXPECT_TRUE(std::signbit(one(kiln::tanh<float>, -0.f)));
  EXPECT_TRUE(std::signbit(one(kiln::erf<float>, -0.f)));
  EXPECT_TRUE(std::signbit(one(kiln::erfinv<float>, -0.f)));
  EXPECT_TRUE(std::signbit(one(kiln::cbrt<float>, -0.f)));
  EXPECT_TRUE(std::isnan(one(kiln::sin<float>, inf)));
  EXPECT_TRUE(std::isnan(one(kiln::asin<float>, 1.5f)));
  EXPECT_EQ(one(kiln::acos<float>, 1.f), 0.f);
  EXPECT_EQ(one(kiln::erfinv<float>, 1.f), inf);
  EXPECT_EQ(one(kiln::erfinv<float>, -1.f), -inf);
  EXPECT_TRUE(std::isnan(one(kiln::erfinv<float>, 1.5f)));
  EXPECT_EQ(one(kiln::tanh<float>, inf), 1.f);
  EXPECT_EQ(one(kiln::cosh<float>, -inf), inf);
  auto pow = [](float x, float y) { return kiln::pow(Float(x), Float(y)).item(); };
  EXPECT_EQ(pow(nan, 0.f), 1.f);
  EXPECT_EQ(pow(1.f, nan), 1.f);
  EXPECT_EQ(pow(-1.f, inf), 1.f);
  EXPECT_TRUE(std::isnan(pow(-1.f, nan)));
  EXPECT_EQ(pow(-0.f, -3.f), -inf);
  EXPECT_EQ(pow(0.f, -2.f), inf);
  EXPECT_TRUE(std::signbit(pow(-0.f, 3.f)));
  EXPECT_EQ(pow(-inf, -3.f), -0.f);
  EXPECT_TRUE(std::signbit(pow(-inf, -3.f)));
  EXPECT_EQ(pow(-inf, 0.5f), inf);
  EXPECT_TRUE(std::isnan(pow(-2.f, 0.5f)));
  EXPECT_EQ(pow(-2.f, 3.f), -8.f);
  EXPECT_EQ(pow(0.5f, -inf), inf);
  EXPECT_EQ(pow(2.f, -inf), 0.f);
  auto atan2 = [](float y, float x) { return kiln::atan2(Float(y), Float(x)).item(); };
  EXPECT_EQ(atan2(0.f, -0.f), float(kPi));
  EXPECT_EQ(atan2(-0.f, -0.f), -float(kPi));
  EXPECT_TRUE(std::signbit(atan2(-0.f, 0.f)));
  EXPECT_EQ(atan2(inf, -inf), float(3 * kPi / 4));
  EXPECT_EQ(atan2(-inf, inf), -float(kPi / 4));
  EXPECT_EQ(atan2(1.f, 0.f), float(kPi / 2));
}

// ---- the same bits on every backend ---------------------------------------------------------

template <typename T> bool same_bits(T a, T b) {
  return (std::isnan(a) && std::isnan(b)) || std::memcmp(&a, &b, sizeof(T)) == 0;
}

template <typename T, typename Program> void expect_backends_agree(const char* name, const Program& program) {
  std::vector<T> jit = program();
  kiln::set_flag(kiln::Flag::Interpreter, true);
  std::vector<T> interpreted = program();
  kiln::set_flag(kiln::Flag::Interpreter, false);
  ASSERT_EQ(jit.size(), interpreted.size());
  for (size_t i = 0; i < jit.size(); ++i)
    ASSERT_TRUE(same_bits(jit[i], interpreted[i]))
        << name << " lane " << i << ": LLVM " << double(jit[i]) << ", interpreter " << double(interpreted[i]);
}

template <typename T> void check_backends(const UnaryCase& c, uint64_t seed) {
  Inputs<T> in(seed);
  if constexpr (sizeof(T) == 4)
    c.inputs32(in);
  else
    c.inputs64(in);
  // A small sample: every 4000th generated input plus the special values.
  std::vector<T> x;
  for (size_t i = 0; i < in.values().size(); i += 4000) x.push_back(in.values()[i]);
  for (T s : special_values<T>()) x.push_back(s);
  expect_backends_agree<T>(c.name, [&] {
    if constexpr (sizeof(T) == 4)
      return run(c.f32, x);
    else
      return run(c.f64, x);
  });
}

TEST(Math, LlvmAndInterpreterGiveIdenticalResults) {
  uint64_t seed = 300;
  for (const UnaryCase& c : unary_cases()) {
    check_backends<float>(c, seed++);
    check_backends<double>(c, seed++);
  }
  auto sample = [](const auto& pairs) {
    auto p = pairs;
    p.x.resize(200);
    p.y.resize(200);
    return p;
  };
  Pairs<float> p32 = sample(pow_inputs<float>(9));
  Pairs<double> p64 = sample(pow_inputs<double>(9));
  expect_backends_agree<float>("pow", [&] { return run(pow32, p32.x, p32.y); });
  expect_backends_agree<double>("pow", [&] { return run(pow64, p64.x, p64.y); });
  Pairs<float> a32 = sample(atan2_inputs<float>(9));
  Pairs<double> a64 = sample(atan2_inputs<double>(9));
  expect_backends_agree<float>("atan2", [&] { return run(atan2_32, a32.x, a32.y); });
  expect_backends_agree<double>("atan2", [&] { return run(atan2_64, a64.x, a64.y); });
}

// ---- cost ---------------------------------------------------------------------------------------

/// Prints the number of IR ops each function adds to a kernel (for docs/math.md).
TEST(Math, OpCounts) {
  auto count = [](auto&& program) {
    kiln::kernel_history(true);
    program();
    auto history = kiln::kernel_history();
    return history.empty() ? size_t(0) : history.back().ops;
  };
  std::vector<float> x32(64, 0.5f);
  std::vector<double> x64(64, 0.5);
  for (const UnaryCase& c : unary_cases()) {
    size_t ops32 = count([&] { run(c.f32, x32); });
    size_t ops64 = count([&] { run(c.f64, x64); });
    std::printf("[ ops  ] %-7s float %3zu  double %3zu\n", c.name, ops32, ops64);
  }
  size_t p32 = count([&] { run(pow32, x32, x32); }), p64 = count([&] { run(pow64, x64, x64); });
  std::printf("[ ops  ] %-7s float %3zu  double %3zu\n", "pow", p32, p64);
  size_t a32 = count([&] { run(atan2_32, x32, x32); }), a64 = count([&] { run(atan2_64, x64, x64); });
  std::printf("[ ops  ] %-7s float %3zu  double %3zu\n", "atan2", a32, a64);
}
