// Are the derivatives right? The rules (src/ad/rules.cpp), one table entry per
// differentiable operation, each checked by check_grads() in forward and reverse mode
// against central finite differences in float64, on every backend; then compositions
// (vector and matrix algebra), memory operations with index conflicts (exact adjoints),
// broadcasting, and <J·u, v> = <u, Jᵀ·v> on a mixed program. A DiffOp without a table
// entry fails AutodiffRulesTable.EveryDiffOpHasACase: adding an op to KILN_DIFF_TABLE asks
// for its test.
#include "autodiff_test_support.h"

#include <algorithm>
#include <set>

using namespace kiln;
using kiln::test::AutodiffTest;
using kiln::test::Domain;

namespace {

/// A program of up to three Float64 inputs (unused ones get zero gradients).
using Program = std::function<Float64(const Float64& a, const Float64& b, const Float64& c)>;

struct RuleCase {
  DiffOp op;
  std::string name;  ///< test name (letters, digits, underscores)
  Program program;
  Domain a{}, b{}, c{};
  GradCheckOptions options{};
  size_t lanes = 16;
};

/// Float (f32) programs, cast from and back to Float64: float rounding, hence a larger
/// step and looser tolerances.
GradCheckOptions float32_options() {
  GradCheckOptions options;
  options.eps = 1e-2;
  options.rtol = 1e-3;
  options.atol = 1e-3;
  return options;
}

Float to_f32(const Float64& x) { return cast<float>(x); }
Float64 to_f64(const Float& x) { return cast<double>(x); }

/// Indices with repeats (0..4) for 16 lanes, and a permutation of 16 lanes.
UInt32 repeated_index(size_t n) {
  std::vector<uint32_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = uint32_t(i * 7 % 5);
  return UInt32::from(v);
}
UInt32 permutation(size_t n) {
  std::vector<uint32_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = uint32_t(i * 5 % n);  // n a power of two: 5 is coprime
  return UInt32::from(v);
}
Bool some_lanes(size_t n) { return arange<UInt32>(n) % 3u != 0u; }

const Domain kPositive{0.3, 3.0};
const Domain kAwayFromZero{0.2, 2.0, /*alternate=*/true};
const Domain kUnit{-0.9, 0.9};

std::vector<RuleCase> rule_cases() {
  using F = const Float64&;
  std::vector<RuleCase> cases = {
      {DiffOp::Neg, "Neg", [](F a, F b, F) { return -a * b; }},
      {DiffOp::Abs, "Abs", [](F a, F, F) { return abs(a); }, kAwayFromZero},
      {DiffOp::Sqrt, "Sqrt", [](F a, F, F) { return sqrt(a); }, kPositive},
      {DiffOp::Rcp, "Rcp", [](F a, F, F) { return rcp(a); }, kPositive},
      {DiffOp::Rsqrt, "Rsqrt", [](F a, F, F) { return rsqrt(a); }, kPositive},
      {DiffOp::Cast,
       "Cast_f64_f32_f64",
       [](F a, F b, F) { return to_f64(to_f32(a) * to_f32(b)); },
       {},
       {},
       {},
       float32_options()},
      {DiffOp::Add, "Add", [](F a, F b, F) { return a + b; }},
      {DiffOp::Sub, "Sub", [](F a, F b, F) { return a - b; }},
      {DiffOp::Mul, "Mul", [](F a, F b, F) { return a * b; }},
      {DiffOp::Mul, "Mul_same_operand", [](F a, F, F) { return a * a; }},
      {DiffOp::Div, "Div", [](F a, F b, F) { return a / b; }, {}, kPositive},
      {DiffOp::Mod, "Mod", [](F a, F b, F) { return fmod(a * 5.3, b); }, {0.1, 2, true}, {0.3, 0.7, true}},
      {DiffOp::Min, "Min", [](F a, F b, F) { return min(a, b); }},
      {DiffOp::Max, "Max", [](F a, F b, F) { return max(a, b); }},
      {DiffOp::Fma, "Fma", [](F a, F b, F c) { return fma(a, b, c); }},
      {DiffOp::Select, "Select", [](F a, F b, F c) { return select(a > b, a * c, b - c); }},
      {DiffOp::Exp, "Exp", [](F a, F, F) { return exp(a); }, {-3, 3}},
      {DiffOp::Exp2, "Exp2", [](F a, F, F) { return exp2(a); }, {-3, 3}},
      {DiffOp::Expm1, "Expm1", [](F a, F, F) { return expm1(a); }, {-3, 3}},
      {DiffOp::Log, "Log", [](F a, F, F) { return log(a); }, {0.2, 5}},
      {DiffOp::Log1p, "Log1p", [](F a, F, F) { return log1p(a); }, {-0.8, 5}},
      {DiffOp::Log2, "Log2", [](F a, F, F) { return log2(a); }, {0.2, 5}},
      {DiffOp::Pow, "Pow", [](F a, F b, F) { return pow(a, b); }, {0.5, 2}, {-1.5, 2.5}},
      {DiffOp::Pow, "Pow_literal_exponent", [](F a, F, F) { return pow(a, Float64(3.0)); }, kAwayFromZero},
      {DiffOp::Sin, "Sin", [](F a, F, F) { return sin(a); }, {-4, 4}},
      {DiffOp::Cos, "Cos", [](F a, F, F) { return cos(a); }, {-4, 4}},
      {DiffOp::Tan, "Tan", [](F a, F, F) { return tan(a); }, {-1.2, 1.2}},
      {DiffOp::Asin, "Asin", [](F a, F, F) { return asin(a); }, kUnit},
      {DiffOp::Acos, "Acos", [](F a, F, F) { return acos(a); }, kUnit},
      {DiffOp::Atan, "Atan", [](F a, F, F) { return atan(a); }, {-3, 3}},
      {DiffOp::Atan2, "Atan2", [](F a, F b, F) { return atan2(a, b); }, kAwayFromZero, {0.3, 2, true}},
      {DiffOp::Sinh, "Sinh", [](F a, F, F) { return sinh(a); }, {-2, 2}},
      {DiffOp::Cosh, "Cosh", [](F a, F, F) { return cosh(a); }, {-2, 2}},
      {DiffOp::Tanh, "Tanh", [](F a, F, F) { return tanh(a); }, {-2, 2}},
      {DiffOp::Erf, "Erf", [](F a, F, F) { return erf(a); }, {-2, 2}},
      {DiffOp::Erfinv, "Erfinv", [](F a, F, F) { return erfinv(a); }, kUnit},
      {DiffOp::Cbrt, "Cbrt", [](F a, F, F) { return cbrt(a); }, {0.2, 3, true}},
      // Memory operations: conflicts, masks, and what a scatter leaves of the old target.
      {DiffOp::Gather, "Gather_repeated_indices", [](F a, F b, F) { return gather(a, repeated_index(16)) * b; }},
      {DiffOp::Gather, "Gather_masked", [](F a, F, F) { return gather(sin(a), permutation(16), some_lanes(16)); }},
      {DiffOp::Scatter, "Scatter_masked_keeps_old_target",
       [](F a, F b, F c) {
         Float64 target = b * c;
         scatter(target, a * 2.0, permutation(16), some_lanes(16));
         return target * c;
       }},
      {DiffOp::Scatter, "Scatter_fewer_values",
       [](F a, F b, F) {
         Float64 target = exp(b);
         scatter(target, gather(a, arange<UInt32>(6)), arange<UInt32>(6) * 2u + 1u);
         return target;
       }},
      {DiffOp::Scatter, "Scatter_into_a_shared_input",  // copy on write: b itself is not changed
       [](F a, F b, F) {
         Float64 target = b;
         scatter(target, gather(a, arange<UInt32>(8)), arange<UInt32>(8) * 2u + 1u);
         return target * b;
       }},
      {DiffOp::Scatter, "Scatter_twice_overlapping",  // the second overwrites some of the first
       [](F a, F b, F c) {
         Float64 target = c * 1.0;
         scatter(target, gather(a, arange<UInt32>(8)), arange<UInt32>(8) * 2u);      // the even slots
         scatter(target, gather(b * b, arange<UInt32>(4)), arange<UInt32>(4) + 5u);  // slots 5 to 8
         return gather(target, arange<UInt32>(16) % 12u) * c;
       }},
      {DiffOp::ScatterAdd, "ScatterAdd_repeated_indices",
       [](F a, F b, F c) {
         Float64 target = b * 1.0;
         scatter_add(target, a * c, repeated_index(16));
         return target;
       }},
      {DiffOp::ScatterAdd,
       "ScatterAdd_masked",
       [](F a, F b, F) {
         Float64 target = sqrt(b);
         scatter_add(target, a * a, repeated_index(16), some_lanes(16));
         return target;
       },
       {},
       kPositive},
      // Horizontal operations (one-lane results broadcast back over the lanes).
      {DiffOp::Sum, "Sum", [](F a, F b, F) { return sum(a * b) * b; }},
      {DiffOp::Prod, "Prod", [](F a, F, F) { return prod(a); }, {0.8, 1.25}},
      {DiffOp::ReduceMin, "ReduceMin", [](F a, F b, F) { return min(a) * b; }},
      {DiffOp::ReduceMax, "ReduceMax", [](F a, F b, F) { return max(a) * b; }},
      {DiffOp::PrefixSum, "PrefixSum_inclusive", [](F a, F b, F) { return prefix_sum(a * b); }},
      {DiffOp::PrefixSum, "PrefixSum_exclusive", [](F a, F b, F) { return prefix_sum(a * b, true); }},
      {DiffOp::BlockSum, "BlockSum", [](F a, F, F) { return block_sum(a, 4); }},
      {DiffOp::BlockSum, "BlockSum_short_last_block", [](F a, F b, F) { return block_sum(a * b, 5); }},
  };
  // Float (f32) sanity entries: the same rules in single precision.
  auto f32 = [&](DiffOp op, std::string name, std::function<Float(const Float&, const Float&)> body, Domain a = {},
                 Domain b = {}) {
    cases.push_back({op,
                     "Float_" + name,
                     [body](F x, F y, F) { return to_f64(body(to_f32(x), to_f32(y))); },
                     a,
                     b,
                     {},
                     float32_options()});
  };
  f32(DiffOp::Mul, "Mul", [](const Float& a, const Float& b) { return a * b; });
  f32(DiffOp::Div, "Div", [](const Float& a, const Float& b) { return a / b; }, {}, kPositive);
  f32(DiffOp::Exp, "Exp", [](const Float& a, const Float&) { return exp(a); }, {-2, 2});
  f32(DiffOp::Sin, "Sin", [](const Float& a, const Float&) { return sin(a); }, {-3, 3});
  f32(DiffOp::Sqrt, "Sqrt", [](const Float& a, const Float&) { return sqrt(a); }, kPositive);
  f32(DiffOp::Gather, "Gather", [](const Float& a, const Float&) { return gather(a, repeated_index(16)); });
  f32(DiffOp::Sum, "Sum", [](const Float& a, const Float& b) { return sum(a) * b; });
  return cases;
}

const std::vector<RuleCase>& all_cases() {
  static const std::vector<RuleCase> cases = rule_cases();
  return cases;
}

class AutodiffRules : public AutodiffTest, public ::testing::WithParamInterface<RuleCase> {};

TEST_P(AutodiffRules, MatchesFiniteDifferences) {
  const RuleCase& c = GetParam();
  test::for_each_run([&] {
    auto inputs = std::tuple(test::domain_array(c.lanes, c.a, 0.0), test::domain_array(c.lanes, c.b, 0.5),
                             test::domain_array(c.lanes, c.c, 0.25));
    KILN_EXPECT_GRADS(check_grads(c.program, inputs, c.options));
  });
}

INSTANTIATE_TEST_SUITE_P(Table, AutodiffRules, ::testing::ValuesIn(all_cases()),
                         [](const ::testing::TestParamInfo<RuleCase>& info) { return info.param.name; });

TEST(AutodiffRulesTable, EveryDiffOpHasACase) {
  std::set<DiffOp> covered;
  for (const RuleCase& c : all_cases()) covered.insert(c.op);
  std::string missing;
#define KILN_CHECK_COVERED(name, arity) \
  if (!covered.count(DiffOp::name)) missing += std::string(missing.empty() ? "" : ", ") + #name;
  KILN_DIFF_TABLE(KILN_CHECK_COVERED)
#undef KILN_CHECK_COVERED
  EXPECT_TRUE(missing.empty()) << "DiffOps without an entry in the rule table (test_autodiff_rules.cpp): " << missing;
  EXPECT_EQ(covered.size(), kDiffOpCount);
}

TEST(AutodiffRulesTable, CaseNamesAreUnique) {
  std::set<std::string> names;
  for (const RuleCase& c : all_cases()) EXPECT_TRUE(names.insert(c.name).second) << "duplicate case " << c.name;
}

// ---- vector and matrix algebra ----------------------------------------------------------------

using Vec3 = Array3<Float64>;
using Vec4 = Array4<Float64>;
using Mat3 = Matrix<Float64, 3>;
using Mat4 = Matrix<Float64, 4>;
constexpr size_t kLanes = 8;

template <size_t N> Vector<Float64, N> vector_input(double phase, Domain domain = {}) {
  Vector<Float64, N> v;
  for (size_t j = 0; j < N; ++j) v[j] = test::domain_array(kLanes, domain, phase + 0.13 * double(j));
  return v;
}
/// Entries in [-1, 1] plus `diagonal` on the diagonal: well conditioned for diagonal 3.
template <size_t N> Matrix<Float64, N> matrix_input(double phase, double diagonal = 3) {
  Matrix<Float64, N> m;
  for (size_t r = 0; r < N; ++r)
    for (size_t c = 0; c < N; ++c)
      m(r, c) = test::domain_array(kLanes, {}, phase + 0.07 * double(r * N + c)) + (r == c ? diagonal : 0.0);
  return m;
}

class AutodiffAlgebra : public AutodiffTest {};

TEST_F(AutodiffAlgebra, VectorOperations) {
  test::for_each_run([] {
    auto inputs = std::tuple(vector_input<3>(0.0), vector_input<3>(0.5));
    KILN_EXPECT_GRADS(check_grads([](const Vec3& a, const Vec3& b) { return dot(a, b); }, inputs));
    KILN_EXPECT_GRADS(check_grads([](const Vec3& a, const Vec3& b) { return cross(a, b); }, inputs));
    KILN_EXPECT_GRADS(check_grads([](const Vec3& a) { return norm(a); }, vector_input<3>(0.3, {0.5, 2})));
    KILN_EXPECT_GRADS(check_grads([](const Vec3& a) { return normalize(a); }, vector_input<3>(0.3, {0.5, 2})));
    KILN_EXPECT_GRADS(check_grads([](const Vec4& a) { return squared_norm(a) * a; }, vector_input<4>(0.1)));
  });
}

TEST_F(AutodiffAlgebra, MatrixOperations) {
  test::for_each_run([] {
    KILN_EXPECT_GRADS(check_grads([](const Mat3& a, const Mat3& b) { return a * b; },
                                  std::tuple(matrix_input<3>(0.0, 0), matrix_input<3>(0.4, 0))));
    KILN_EXPECT_GRADS(check_grads([](const Mat3& a, const Vec3& v) { return a * v; },
                                  std::tuple(matrix_input<3>(0.2, 0), vector_input<3>(0.6))));
    KILN_EXPECT_GRADS(check_grads([](const Mat3& a) { return inverse(a); }, matrix_input<3>(0.1)));
    KILN_EXPECT_GRADS(check_grads([](const Mat4& a) { return inverse(a); }, matrix_input<4>(0.7)));
    KILN_EXPECT_GRADS(check_grads([](const Mat3& a) { return determinant(a); }, matrix_input<3>(0.3, 1)));
    KILN_EXPECT_GRADS(check_grads([](const Mat4& a) { return determinant(a); }, matrix_input<4>(0.9, 1)));
    KILN_EXPECT_GRADS(check_grads([](const Mat4& m, const Vec3& p) { return transform_point(m, p); },
                                  std::tuple(matrix_input<4>(0.5), vector_input<3>(0.2))));
    KILN_EXPECT_GRADS(check_grads([](const Mat4& m, const Vec3& n) { return transform_normal(m, n); },
                                  std::tuple(matrix_input<4>(0.8), vector_input<3>(0.4))));
  });
}

// ---- memory operations: exact adjoints under index conflicts and masks ------------------------

class AutodiffMemory : public AutodiffTest {};

Float64 from(std::vector<double> values) { return Float64::from(values); }

TEST_F(AutodiffMemory, GatherWithRepeatedIndicesAccumulates) {
  test::for_each_run([] {
    Float64 x = from({1, 2, 3, 4, 5});
    enable_grad(x);
    UInt32 index = UInt32::from(std::vector<uint32_t>{0, 0, 2, 0, 4, 2});
    Float64 weight = from({1, 10, 100, 1000, 10000, 100000});
    Float64 y = gather(x, index) * weight;
    backward(sum(y));
    EXPECT_EQ(test::host(grad(x)), (std::vector<double>{1011, 0, 100100, 0, 10000}));

    Float64 x2 = from({1, 2, 3, 4, 5});
    enable_grad(x2);
    Float64 masked = gather(x2, index, arange<UInt32>(6) != 1u) * weight;
    forward_from(x2, from({1, 2, 3, 4, 5}));
    EXPECT_EQ(test::host(grad(masked)), (std::vector<double>{1, 0, 300, 1000, 50000, 300000}));
    clear_grad(x2);  // forward_from() left the tangent on the input; adjoints would add to it
    backward_from(masked, from({1, 1, 1, 1, 1, 1}));
    EXPECT_EQ(test::host(grad(x2)), (std::vector<double>{1001, 0, 100100, 0, 10000}));
  });
}

TEST_F(AutodiffMemory, ScatterAddWithRepeatedIndices) {
  test::for_each_run([] {
    Float64 base = from({10, 20, 30, 40}), value = from({1, 2, 3, 4, 5, 6});
    enable_grad(base, value);
    UInt32 index = UInt32::from(std::vector<uint32_t>{1, 1, 3, 1, 0, 3});
    Float64 target = base * 1.0;
    scatter_add(target, value, index);
    EXPECT_EQ(test::host(target), (std::vector<double>{15, 27, 30, 49}));
    // Forward: the target's tangent sums the values' tangents per slot.
    forward_from(std::tuple(base, value), std::tuple(from({0, 0, 0, 0}), from({1, 2, 3, 4, 5, 6})));
    EXPECT_EQ(test::host(grad(target)), (std::vector<double>{5, 7, 0, 9}));
    clear_grad(base);
    clear_grad(value);
    // Reverse: every value gets its slot's adjoint; the old target passes straight through.
    backward_from(target, from({1, 2, 3, 4}));
    EXPECT_EQ(test::host(grad(value)), (std::vector<double>{2, 2, 4, 2, 1, 4}));
    EXPECT_EQ(test::host(grad(base)), (std::vector<double>{1, 2, 3, 4}));
  });
}

TEST_F(AutodiffMemory, MaskedScatterOverwritesOnlyActiveLanes) {
  test::for_each_run([] {
    Float64 base = from({1, 2, 3, 4, 5, 6}), value = from({7, 8, 9});
    enable_grad(base, value);
    UInt32 index = UInt32::from(std::vector<uint32_t>{4, 0, 2});
    Bool active = arange<UInt32>(3) != 1u;  // lane 1 (to slot 0) writes nothing
    Float64 target = base * 1.0;
    scatter(target, value, index, active);
    EXPECT_EQ(test::host(target), (std::vector<double>{1, 2, 9, 4, 7, 6}));
    forward_from(std::tuple(base, value), std::tuple(from({1, 1, 1, 1, 1, 1}), from({10, 20, 30})));
    EXPECT_EQ(test::host(grad(target)), (std::vector<double>{1, 1, 30, 1, 10, 1}));
    clear_grad(base);
    clear_grad(value);
    backward_from(target, from({1, 2, 3, 4, 5, 6}));
    // The old target's adjoint: zero where a value overwrote it.
    EXPECT_EQ(test::host(grad(base)), (std::vector<double>{1, 2, 0, 4, 0, 6}));
    EXPECT_EQ(test::host(grad(value)), (std::vector<double>{5, 0, 3}));
  });
}

TEST_F(AutodiffMemory, VectorGatherAndScatterAdd) {
  test::for_each_run([] {
    auto f = [](const Float64& flat, const Vec3& v) {
      Vec3 p = gather<Vec3>(flat, UInt32::from(std::vector<uint32_t>{0, 2, 2, 1, 0, 2, 1, 0}));
      Float64 out = flat * 1.0;
      scatter_add(out, p * v, UInt32::from(std::vector<uint32_t>{1, 1, 0, 2, 0, 1, 2, 2}));
      return out;
    };
    KILN_EXPECT_GRADS(check_grads(f, std::tuple(test::domain_array(9, {}, 0.0), vector_input<3>(0.5))));
  });
}

// ---- broadcasting, select, min/max ------------------------------------------------------------

class AutodiffLanes : public AutodiffTest {};

TEST_F(AutodiffLanes, OneLaneParameterGetsTheSumOverLanes) {
  test::for_each_run([] {
    Float64 p = from({1.5}), x = from({1, 2, 3, 4, 5, 6, 7});
    enable_grad(p);
    Float64 y = p * x + p * p;
    forward(p);  // the tangent of y: x + 2p on every lane
    EXPECT_EQ(test::host(grad(y)), (std::vector<double>{4, 5, 6, 7, 8, 9, 10}));
    clear_grad(p);
    backward(sum(y));
    Float64 g = grad(p);
    ASSERT_EQ(g.size(), 1u);
    EXPECT_DOUBLE_EQ(g.item(), 28 + 2 * 1.5 * 7);
  });
}

TEST_F(AutodiffLanes, BroadcastParameterMatchesFiniteDifferences) {
  test::for_each_run([] {
    auto f = [](const Float64& p, const Float64& x) {
      Float64 y = select(x > 0.0, sin(p * x), min(x, p) + max(p, x * x));
      Float64 t = gather(p, arange<UInt32>(x.size()) * 0u);  // every lane reads the one lane
      return y * t + atan2(p, x);
    };
    KILN_EXPECT_GRADS(check_grads(f, std::tuple(from({0.7}), test::domain_array(13, {-2, 2}, 0.1))));
  });
}

TEST_F(AutodiffLanes, SelectMinMaxRouteTheGradient) {
  test::for_each_run([] {
    Float64 a = from({-2, -1, 1, 2}), b = from({0.5, -3, 4, 1});
    enable_grad(a, b);
    Float64 y = select(a > 0.0, a * 2.0, a * -3.0) + min(a, b) * 10.0 + max(a, b) * 100.0;
    backward(sum(y));
    EXPECT_EQ(test::host(grad(a)), (std::vector<double>{-3 + 10, -3 + 100, 2 + 10, 2 + 100}));
    EXPECT_EQ(test::host(grad(b)), (std::vector<double>{100, 10, 100, 10}));
  });
}

// ---- <J·u, v> = <u, Jᵀ·v> on a mixed program --------------------------------------------------

TEST_F(AutodiffLanes, ForwardAndReverseAreAdjoint) {
  // Vectors, math functions, a one-lane parameter, gathers with conflicts, scatter_add, a
  // scan and a reduction in one program; J·u from forward mode, Jᵀ·v from reverse mode.
  auto program = [](const Vec3& p, const Float64& scale, const Float64& table) {
    Float64 r = norm(p) * scale;
    Float64 looked_up = gather(table, cast<uint32_t>(abs(p.x) * 3.0) % uint32_t(table.size()));
    Float64 accumulated = table * 0.5;
    scatter_add(accumulated, exp(-r) * looked_up, arange<UInt32>(p.size()) % 3u);
    Vec3 q = normalize(cross(p, Vec3(scale, r, looked_up)));
    return std::tuple(q, prefix_sum(r * q.y), accumulated * sum(tanh(looked_up)));
  };
  test::for_each_run([&] {
    std::tuple inputs(vector_input<3>(0.2, {0.3, 2}), from({1.3}), test::domain_array(5, {}, 0.4));
    auto u = std::tuple(vector_input<3>(0.9), from({-0.6}), test::domain_array(5, {}, 0.8));
    enable_grad(inputs);
    auto y = std::apply(program, inputs);
    forward_from(inputs, u);
    auto jvp = grad(y);
    clear_grad(inputs);
    auto v = std::tuple(vector_input<3>(0.35), test::domain_array(kLanes, {}, 0.15), test::domain_array(5, {}, 0.6));
    backward_from(y, v);
    auto vjp = grad(inputs);
    auto inner = [](const auto& a, const auto& b) {
      std::vector<std::vector<double>> left, right;
      for_each_array(a, [&](const Float64& x) { left.push_back(test::host(x)); });
      for_each_array(b, [&](const Float64& x) { right.push_back(test::host(x)); });
      double s = 0;
      for (size_t k = 0; k < left.size(); ++k)
        for (size_t i = 0; i < left[k].size(); ++i) s += left[k][i] * right[k][i];
      return s;
    };
    double forward_side = inner(jvp, v), reverse_side = inner(u, vjp);
    EXPECT_NEAR(forward_side, reverse_side, 1e-12 * (std::fabs(forward_side) + 1))
        << forward_side << " vs " << reverse_side;
    EXPECT_NE(forward_side, 0.0);
  });
}

}  // namespace
