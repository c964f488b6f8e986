// Zero times an infinite or undefined partial derivative is zero: every derivative rule of
// KILN_DIFF_TABLE fed its singular points (sqrt, rsqrt, cbrt and log at 0, asin and acos
// at ±1, pow at 0, atan2 at the origin, division by 0, overflowing exponentials, a product
// with a zero factor ...) with a zero tangent or adjoint gives exactly 0, never NaN, in
// forward and reverse mode, traced straight or inside a branch in symbolic and evaluated
// mode, on the JIT and the interpreter. Then the branch a select did not take: its NaN or
// infinite partials must not reach the input through a unit seed either. A DiffOp without
// a case fails AutodiffSingular.EveryDiffOpHasACase.
#include "autodiff_test_support.h"

#include <cmath>
#include <limits>
#include <ostream>
#include <set>

using namespace kiln;
using kiln::test::AutodiffTest;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kHalfPi = 1.5707963267948966;

using Program = std::function<Float64(const Float64& a, const Float64& b)>;

/// Where the case's program is traced.
enum class Placement {
  Straight,  ///< straight-line code
  Branch,    ///< inside an if_stmt (symbolic or evaluated, as the run's global mode)
};

struct SingularCase {
  std::string name;
  std::optional<DiffOp> op;  ///< the rule the case covers (none: a composite)
  Program program;
  std::vector<double> a, b;    ///< lanes (b: one lane or as many as a)
  bool straight_only = false;  ///< horizontal ops and scatters cannot run inside a branch
  double seed = 0;             ///< tangent of every input / adjoint of the result
};

/// gtest names a failing case by this, not by its bytes.
[[maybe_unused]] void PrintTo(const SingularCase& c, std::ostream* os) { *os << c.name; }

Float64 of(const std::vector<double>& v) { return Float64::from(v); }

/// The cases: each rule at the points where its partial derivatives are infinite or NaN.
std::vector<SingularCase> singular_cases() {
  auto unary = [](const char* name, DiffOp op, auto fn, std::vector<double> a) {
    return SingularCase{name, op, [fn](const Float64& x, const Float64&) { return fn(x); }, std::move(a), {0.0}};
  };
  auto binary = [](const char* name, DiffOp op, auto fn, std::vector<double> a, std::vector<double> b) {
    return SingularCase{name, op, [fn](const Float64& x, const Float64& y) { return fn(x, y); }, std::move(a),
                        std::move(b)};
  };
  std::vector<double> zeros{0.0, -0.0}, overflow{800.0, -800.0, kInf};
  std::vector<SingularCase> cases = {
      unary("Neg", DiffOp::Neg, [](const Float64& x) { return -x; }, {kInf, -kInf}),
      unary("Abs", DiffOp::Abs, [](const Float64& x) { return abs(x); }, {0.0, kInf}),
      unary("Sqrt", DiffOp::Sqrt, [](const Float64& x) { return sqrt(x); }, {0.0, -0.0, -1.0}),
      unary("Rcp", DiffOp::Rcp, [](const Float64& x) { return rcp(x); }, zeros),
      unary("Rsqrt", DiffOp::Rsqrt, [](const Float64& x) { return rsqrt(x); }, {0.0, -1.0}),
      unary("Cast", DiffOp::Cast, [](const Float64& x) { return cast<double>(cast<float>(x)); }, {1e300, kInf}),
      binary("Add", DiffOp::Add, [](const Float64& x, const Float64& y) { return x + y; }, {kInf}, {-kInf}),
      binary("Sub", DiffOp::Sub, [](const Float64& x, const Float64& y) { return x - y; }, {kInf}, {kInf}),
      binary("Mul", DiffOp::Mul, [](const Float64& x, const Float64& y) { return x * y; }, {0.0, kInf, 1.0},
             {kInf, 0.0, kInf}),
      binary("Div", DiffOp::Div, [](const Float64& x, const Float64& y) { return x / y; }, {1.0, 0.0, kInf},
             {0.0, 0.0, kInf}),
      binary("Mod", DiffOp::Mod, [](const Float64& x, const Float64& y) { return fmod(x, y); }, {1.0, kInf},
             {0.0, 2.0}),
      binary("Min", DiffOp::Min, [](const Float64& x, const Float64& y) { return min(x, y); }, {kInf, 0.0},
             {-kInf, 0.0}),
      binary("Max", DiffOp::Max, [](const Float64& x, const Float64& y) { return max(x, y); }, {kInf, 0.0},
             {-kInf, 0.0}),
      binary("Fma", DiffOp::Fma, [](const Float64& x, const Float64& y) { return fma(x, y, x); }, {0.0, kInf},
             {kInf, 0.0}),
      binary("Select", DiffOp::Select,
             [](const Float64& x, const Float64& y) { return select(x > 0.0, x * y, y); }, {1.0, -1.0}, {kInf}),
      unary("Exp", DiffOp::Exp, [](const Float64& x) { return exp(x); }, overflow),
      unary("Exp2", DiffOp::Exp2, [](const Float64& x) { return exp2(x); }, {1100.0, kInf}),
      unary("Expm1", DiffOp::Expm1, [](const Float64& x) { return expm1(x); }, overflow),
      unary("Log", DiffOp::Log, [](const Float64& x) { return log(x); }, {0.0, -0.0, -1.0}),
      unary("Log2", DiffOp::Log2, [](const Float64& x) { return log2(x); }, {0.0, -1.0}),
      unary("Log1p", DiffOp::Log1p, [](const Float64& x) { return log1p(x); }, {-1.0, -2.0}),
      binary("Pow", DiffOp::Pow, [](const Float64& x, const Float64& y) { return pow(x, y); },
             {0.0, 0.0, -1.0, 0.0}, {0.5, -1.0, 0.5, 0.0}),
      unary("Sin", DiffOp::Sin, [](const Float64& x) { return sin(x); }, {kInf}),
      unary("Cos", DiffOp::Cos, [](const Float64& x) { return cos(x); }, {kInf}),
      unary("Tan", DiffOp::Tan, [](const Float64& x) { return tan(x); }, {kHalfPi, kInf}),
      unary("Asin", DiffOp::Asin, [](const Float64& x) { return asin(x); }, {1.0, -1.0, 2.0}),
      unary("Acos", DiffOp::Acos, [](const Float64& x) { return acos(x); }, {1.0, -1.0, 2.0}),
      unary("Atan", DiffOp::Atan, [](const Float64& x) { return atan(x); }, {kInf, 1e300}),
      binary("Atan2", DiffOp::Atan2, [](const Float64& x, const Float64& y) { return atan2(x, y); }, {0.0, kInf},
             {0.0, kInf}),
      unary("Sinh", DiffOp::Sinh, [](const Float64& x) { return sinh(x); }, overflow),
      unary("Cosh", DiffOp::Cosh, [](const Float64& x) { return cosh(x); }, overflow),
      unary("Tanh", DiffOp::Tanh, [](const Float64& x) { return tanh(x); }, {kInf, 1e300}),
      unary("Erf", DiffOp::Erf, [](const Float64& x) { return erf(x); }, {kInf, 1e300}),
      unary("Erfinv", DiffOp::Erfinv, [](const Float64& x) { return erfinv(x); }, {1.0, -1.0, 2.0}),
      unary("Cbrt", DiffOp::Cbrt, [](const Float64& x) { return cbrt(x); }, zeros),
      // Memory and horizontal operations, straight-line only: a branch's functions cannot
      // reduce over lanes, and returning a scattered array of another size from a branch
      // is not a per-lane result.
      SingularCase{"Gather", DiffOp::Gather,
                   [](const Float64& x, const Float64& y) { return gather(x * y, UInt32::from({0, 1, 1})); },
                   {0.0, kInf}, {kInf, 0.0}, true},
      SingularCase{"Scatter", DiffOp::Scatter,
                   [](const Float64& x, const Float64& y) {
                     Float64 t = x * 1.0;
                     scatter(t, y * x, UInt32(0));
                     return t;
                   },
                   {0.0, kInf}, {kInf, 0.0}, true},
      SingularCase{"ScatterAdd", DiffOp::ScatterAdd,
                   [](const Float64& x, const Float64& y) {
                     Float64 t = x * 1.0;
                     scatter_add(t, y * x, UInt32(1));
                     return t;
                   },
                   {0.0, kInf}, {kInf, 0.0}, true},
      SingularCase{"Sum", DiffOp::Sum, [](const Float64& x, const Float64& y) { return sum(x * y) + x; },
                   {0.0, kInf}, {kInf, 0.0}, true},
      SingularCase{"Prod", DiffOp::Prod, [](const Float64& x, const Float64&) { return prod(x) + x; },
                   {0.0, 0.0, 2.0}, {0.0}, true},
      SingularCase{"ReduceMin", DiffOp::ReduceMin, [](const Float64& x, const Float64&) { return min(x) + x; },
                   {0.0, kInf, -kInf}, {0.0}, true},
      SingularCase{"ReduceMax", DiffOp::ReduceMax, [](const Float64& x, const Float64&) { return max(x) + x; },
                   {0.0, kInf, -kInf}, {0.0}, true},
      SingularCase{"PrefixSum", DiffOp::PrefixSum,
                   [](const Float64& x, const Float64& y) { return prefix_sum(x * y); }, {0.0, kInf}, {kInf, 0.0},
                   true},
      SingularCase{"BlockSum", DiffOp::BlockSum,
                   [](const Float64& x, const Float64& y) { return block_sum(x * y, 2); }, {0.0, kInf, 1.0, 0.0},
                   {kInf, 0.0, kInf, 1.0}, true},
      // A composite: the renderer's old safe_sqrt, sqrt(max(x, 0)), whose zero tangent at
      // x <= 0 met sqrt's infinite slope at 0 (NaN pixels in forward mode).
      SingularCase{"OldSafeSqrt", std::nullopt,
                   [](const Float64& x, const Float64&) { return sqrt(max(x, Float64(0.0))); }, {0.0, -0.5}, {0.0}},
  };
  // The branch a select does not take, with a unit seed: its infinite or NaN partials meet
  // the select's zero adjoint (reverse) and are dropped by the select (forward).
  auto unselected = [](const char* name, auto fn) {
    return SingularCase{name,
                        std::nullopt,
                        [fn](const Float64& x, const Float64&) { return select(x > 0.0, fn(x), Float64(0.0)); },
                        {0.0, -1.0},
                        {0.0},
                        false,
                        1.0};
  };
  cases.push_back(unselected("UnselectedSqrt", [](const Float64& x) { return sqrt(x); }));
  cases.push_back(unselected("UnselectedLog", [](const Float64& x) { return log(x); }));
  cases.push_back(unselected("UnselectedRcp", [](const Float64& x) { return rcp(x); }));
  cases.push_back(unselected("UnselectedAsin", [](const Float64& x) { return asin(x + 1.0); }));
  cases.push_back(unselected("UnselectedPow", [](const Float64& x) { return pow(x, Float64(0.5)); }));
  return cases;
}

const std::vector<SingularCase>& all_cases() {
  static const std::vector<SingularCase> cases = singular_cases();
  return cases;
}

/// The case's program, traced where `placement` says.
Float64 traced(const SingularCase& c, Placement placement, const Float64& a, const Float64& b) {
  if (placement == Placement::Straight) return c.program(a, b);
  // Every lane takes the true branch; the arguments are per lane.
  Float64 wide_b = b + zeros<Float64>(a.size());
  return if_stmt(
      zeros<UInt32>(a.size()) == 0u, [&c](const Float64& x, const Float64& y) { return c.program(x, y); },
      [](const Float64& x, const Float64&) { return x; }, std::tuple(a, wide_b));
}

/// Lanes of `values` that are not exactly 0 (every case's derivative is 0 at its points:
/// a zero seed, or the branch a select did not take).
std::string nonzero_lanes(const std::vector<double>& values) {
  std::string bad;
  for (size_t i = 0; i < values.size(); ++i)
    if (values[i] != 0.0) bad += " lane " + std::to_string(i) + ": " + std::to_string(values[i]);
  return bad;
}

class AutodiffSingular : public AutodiffTest, public ::testing::WithParamInterface<SingularCase> {};

TEST_P(AutodiffSingular, ZeroSeedsGiveZeroNeverNaN) {
  const SingularCase& c = GetParam();
  for (Placement placement : {Placement::Straight, Placement::Branch}) {
    if (placement == Placement::Branch && c.straight_only) continue;
    SCOPED_TRACE(placement == Placement::Straight ? "straight-line" : "inside an if_stmt");
    test::for_each_run([&] {
      {  // forward: tangent `seed` on both inputs
        Float64 a = of(c.a), b = of(c.b);
        enable_grad(a, b);
        set_grad(a, full<Float64>(c.seed, a.size()));
        set_grad(b, full<Float64>(c.seed, b.size()));
        Float64 y = traced(c, placement, a, b);
        std::vector<double> tangent = forward_to(y).to_vector();
        EXPECT_EQ(nonzero_lanes(tangent), "") << "forward mode";
      }
      {  // reverse: adjoint `seed` on every lane of the result
        Float64 a = of(c.a), b = of(c.b);
        enable_grad(a, b);
        Float64 y = traced(c, placement, a, b);
        backward_from(y, full<Float64>(c.seed, y.size()));
        EXPECT_EQ(nonzero_lanes(grad(a).to_vector()), "") << "reverse mode, first input";
        EXPECT_EQ(nonzero_lanes(grad(b).to_vector()), "") << "reverse mode, second input";
      }
    });
  }
}

INSTANTIATE_TEST_SUITE_P(Table, AutodiffSingular, ::testing::ValuesIn(all_cases()),
                         [](const ::testing::TestParamInfo<SingularCase>& info) { return info.param.name; });

TEST(AutodiffSingularTable, EveryDiffOpHasACase) {
  std::set<DiffOp> covered;
  for (const SingularCase& c : all_cases())
    if (c.op) covered.insert(*c.op);
  std::string missing;
#define KILN_CHECK_COVERED(name, arity) \
  if (!covered.count(DiffOp::name)) missing += std::string(missing.empty() ? "" : ", ") + #name;
  KILN_DIFF_TABLE(KILN_CHECK_COVERED)
#undef KILN_CHECK_COVERED
  EXPECT_TRUE(missing.empty()) << "DiffOps without singular points (test_autodiff_singular.cpp): " << missing;
}

}  // namespace
