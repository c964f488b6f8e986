// The AD interface and the graph it builds (autodiff.h, src/ad/): check_grads() itself,
// CustomOp (typed, nested, and wrong callbacks through the runtime API), what traversals
// visit, gradient scopes, accumulation and clearing, the errors each misuse raises, and
// that the graph is freed with its arrays. Whether the derivatives are right is
// test_autodiff_rules.cpp's subject.
#include "autodiff_test_support.h"

using namespace kiln;
using kiln::test::AutodiffTest;
using kiln::test::expect_error;

namespace {

Float64 from(std::vector<double> values) { return Float64::from(values); }
std::vector<double> host(const Float64& a) { return a.to_vector(); }
using Vec3 = Array3<Float64>;

// ---- typed custom operations ---------------------------------------------------------------

/// y = x³ with hand-written derivatives; `forward_factor`/`backward_factor` replace the 3
/// of 3x² to make a deliberately wrong derivative.
struct Cube : CustomOp<std::tuple<Float64>, std::tuple<Float64>> {
  double forward_factor = 3, backward_factor = 3;
  Float64 x;
  Outputs eval(const Inputs& in) override {
    x = std::get<0>(in);
    return {x * x * x};
  }
  Outputs forward(const Inputs& dx) override { return {forward_factor * x * x * std::get<0>(dx)}; }
  Inputs backward(const Outputs& dy) override { return {backward_factor * x * x * std::get<0>(dy)}; }
};
Float64 cube(const Float64& x, double forward_factor = 3, double backward_factor = 3) {
  auto op = std::make_shared<Cube>();
  op->forward_factor = forward_factor;
  op->backward_factor = backward_factor;
  return std::get<0>(custom(op, x));
}

/// Two inputs (one a vector), three outputs: (a·|v|², a + v.x, v.y * v.z).
struct Mixed : CustomOp<std::tuple<Float64, Vec3>, std::tuple<Float64, Float64, Float64>> {
  Float64 a;
  Vec3 v;
  Outputs eval(const Inputs& in) override {
    std::tie(a, v) = in;
    return {a * squared_norm(v), a + v.x, v.y * v.z};
  }
  Outputs forward(const Inputs& d) override {
    const auto& [da, dv] = d;
    return {da * squared_norm(v) + 2.0 * a * dot(v, dv), da + dv.x, dv.y * v.z + v.y * dv.z};
  }
  Inputs backward(const Outputs& g) override {
    const auto& [g0, g1, g2] = g;
    Vec3 dv = v * (2.0 * a * g0);
    dv.x = dv.x + g1;
    dv.y = dv.y + g2 * v.z;
    dv.z = dv.z + g2 * v.y;
    return {g0 * squared_norm(v) + g1, dv};
  }
};

/// sin(x)² whose derivatives come from AD itself: each callback differentiates a fresh copy.
struct NestedSinSquared : CustomOp<std::tuple<Float64>, std::tuple<Float64>> {
  Float64 x;
  static Float64 body(const Float64& x) { return sin(x) * sin(x); }
  Outputs eval(const Inputs& in) override {
    x = std::get<0>(in);
    return {body(x)};
  }
  Outputs forward(const Inputs& dx) override {
    Float64 copy = x;
    enable_grad(copy);
    Float64 y = body(copy);
    forward_from(copy, std::get<0>(dx));
    return {grad(y)};
  }
  Inputs backward(const Outputs& dy) override {
    Float64 copy = x;
    enable_grad(copy);
    backward_from(body(copy), std::get<0>(dy));
    return {grad(copy)};
  }
};

class AutodiffCustom : public AutodiffTest {};

TEST_F(AutodiffCustom, TypedOpMatchesFiniteDifferences) {
  test::for_each_run([] {
    auto f = [](const Float64& x) { return cube(x) * 2.0 + sin(cube(x)); };
    KILN_EXPECT_GRADS(check_grads(f, test::domain_array(16, {-1.5, 1.5}, 0)));
  });
}

TEST_F(AutodiffCustom, SeveralInputsAndOutputsSomeUnused) {
  test::for_each_run([] {
    auto all_outputs = [](const Float64& a, const Vec3& v) { return custom(std::make_shared<Mixed>(), a, v); };
    auto one_output = [](const Float64& a, const Vec3& v) {  // the others' adjoints are zeros
      return exp(std::get<2>(custom(std::make_shared<Mixed>(), a, v)));
    };
    auto inputs = std::tuple(test::domain_array(8, {}, 0.1),
                             Vec3(test::domain_array(8, {}, 0.3), test::domain_array(8, {}, 0.6), from({0.5})));
    KILN_EXPECT_GRADS(check_grads(all_outputs, inputs));
    KILN_EXPECT_GRADS(check_grads(one_output, inputs));
  });
}

TEST_F(AutodiffCustom, CallbacksThatUseADThemselves) {
  test::for_each_run([] {
    auto f = [](const Float64& x) { return std::get<0>(custom(std::make_shared<NestedSinSquared>(), x * 1.5)); };
    KILN_EXPECT_GRADS(check_grads(f, test::domain_array(16, {-2, 2}, 0)));
  });
}

TEST_F(AutodiffCustom, NestedTraversalDoesNotReplaceTheOuterStatistics) {
  Float64 x = from({0.1, 0.2, 0.3});
  enable_grad(x);
  Float64 y = std::get<0>(custom(std::make_shared<NestedSinSquared>(), x));
  backward(sum(y));
  // sum, y, the op's hub, x; edges sum <- y <- hub <- x.
  EXPECT_EQ(last_traversal().nodes, 4u);
  EXPECT_EQ(last_traversal().edges, 3u);
}

TEST_F(AutodiffCustom, ReverseAfterForwardIgnoresTangentsOfOtherOutputs) {
  // forward() leaves tangents on every output still referenced; a later backward from one
  // output must not take the others' tangents for adjoints.
  Float64 a = from({1, 2}), b = from({3, 4});
  enable_grad(a);
  auto [p, q, r] = custom(std::make_shared<Mixed>(), a, Vec3(b, b, b));
  forward(a);
  EXPECT_EQ(host(grad(q)), (std::vector<double>{1, 1}));
  clear_grad(a);
  backward(sum(p));  // dp/da = |v|² = 3 b²
  EXPECT_EQ(host(grad(a)), (std::vector<double>{27, 48}));
}

/// x -> (2x, x as an integer): the integer output carries no derivatives.
struct WithIndex : CustomOp<std::tuple<Float64>, std::tuple<Float64, UInt32>> {
  Outputs eval(const Inputs& in) override { return {std::get<0>(in) * 2.0, cast<uint32_t>(std::get<0>(in))}; }
  Outputs forward(const Inputs& d) override { return {std::get<0>(d) * 2.0, UInt32(0u)}; }
  Inputs backward(const Outputs& g) override { return {std::get<0>(g) * 2.0}; }
};

TEST_F(AutodiffCustom, IntegerOutputsAndInputsWithoutDerivatives) {
  Float64 x = from({1.5, 2.5});
  auto [plain, plain_index] = custom(std::make_shared<WithIndex>(), x);
  EXPECT_FALSE(grad_enabled(plain));  // no input carries derivatives
  enable_grad(x);
  auto [doubled, index] = custom(std::make_shared<WithIndex>(), x);
  EXPECT_TRUE(grad_enabled(doubled));
  EXPECT_EQ(index.to_vector(), (std::vector<uint32_t>{1, 2}));
  forward(x);
  EXPECT_EQ(host(grad(doubled)), (std::vector<double>{2, 2}));
  KILN_EXPECT_GRADS(check_grads([](const Float64& x) { return std::get<0>(custom(std::make_shared<WithIndex>(), x)); },
                                from({1.5, 2.5})));
}

/// Callbacks through the runtime API that return the wrong number of gradients.
struct WrongCount : detail::CustomCallbacks {
  std::string name() const override { return "WrongCount"; }
  std::vector<detail::Index> forward_grads(const std::vector<detail::Index>&) override { return {}; }
  std::vector<detail::Index> backward_grads(const std::vector<detail::Index>& g) override {
    detail::inc_ref(g[0]);
    detail::inc_ref(g[0]);
    return {g[0], g[0]};
  }
};
Float64 wrong_count(const Float64& x) {
  Float64 value = detach(x) * 2.0;
  std::vector<detail::AdValue> out = detail::ad_custom(std::make_shared<WrongCount>(), {x.operand()}, {value.index()});
  return Float64::steal(out[0]);
}

TEST_F(AutodiffCustom, BackwardReturningTooManyGradientsRaises) {
  Float64 x = from({1, 2});
  enable_grad(x);
  Float64 y = wrong_count(x);
  expect_error<ValueError>([&] { backward(sum(y)); }, "WrongCount.backward() returned 2 gradients, expected 1");
}

TEST_F(AutodiffCustom, ForwardReturningTooFewGradientsRaises) {
  Float64 x = from({1, 2});
  enable_grad(x);
  Float64 y = wrong_count(x);
  expect_error<ValueError>([&] { forward(x); }, "WrongCount.forward() returned 0 gradients, expected 1");
}

/// Callbacks through the runtime API whose gradients have the wrong number of lanes (2).
struct WrongLanes : detail::CustomCallbacks {
  std::string name() const override { return "WrongLanes"; }
  static std::vector<detail::Index> two_lanes() { return {detail::make_literal(VarType::Float64, 0, 2)}; }
  std::vector<detail::Index> forward_grads(const std::vector<detail::Index>&) override { return two_lanes(); }
  std::vector<detail::Index> backward_grads(const std::vector<detail::Index>&) override { return two_lanes(); }
};
Float64 wrong_lanes(const Float64& x) {
  Float64 value = detach(x) * 2.0;
  std::vector<detail::AdValue> out = detail::ad_custom(std::make_shared<WrongLanes>(), {x.operand()}, {value.index()});
  return Float64::steal(out[0]);
}

TEST_F(AutodiffCustom, BackwardReturningAGradientOfTheWrongLaneCountRaises) {
  Float64 x = from({1, 2, 3});
  enable_grad(x);
  Float64 y = wrong_lanes(x);
  expect_error<ValueError>([&] { backward(sum(y)); },
                           "WrongLanes.backward() returned a gradient of 2 lanes for input 0, which has 3");
}

TEST_F(AutodiffCustom, ForwardReturningATangentOfTheWrongLaneCountRaises) {
  Float64 x = from({1, 2, 3});
  enable_grad(x);
  Float64 y = wrong_lanes(x);
  expect_error<ValueError>([&] { forward(x); },
                           "WrongLanes.forward() returned a gradient of 2 lanes for output 0, which has 3");
}

// ---- check_grads() itself ---------------------------------------------------------------------

class CheckGrads : public AutodiffTest {};

TEST_F(CheckGrads, ReportsAWrongReverseDerivative) {
  Float64 x = test::domain_array(8, {0.5, 2}, 0);
  GradCheckResult result = check_grads([](const Float64& x) { return cube(x, 3, 2.5); }, x);
  EXPECT_FALSE(result.ok);
  EXPECT_NE(result.message.find("check_grads: reverse mode: <J^T·v, u> = "), std::string::npos) << result.message;
  EXPECT_NE(result.message.find("check_grads: forward vs reverse mode"), std::string::npos) << result.message;
  EXPECT_NE(result.message.find("rtol 1e-05"), std::string::npos) << result.message;
  EXPECT_EQ(result.message.find("forward mode, output"), std::string::npos) << result.message;
  GradCheckOptions forward_only;
  forward_only.modes = GradMode::Forward;
  EXPECT_TRUE(check_grads([](const Float64& x) { return cube(x, 3, 2.5); }, x, forward_only).ok);
}

TEST_F(CheckGrads, ReportsAWrongForwardDerivativeLaneByLane) {
  Float64 x = test::domain_array(8, {0.5, 2}, 0);
  GradCheckResult result = check_grads([](const Float64& x) { return cube(x, 3.01, 3); }, x);
  EXPECT_FALSE(result.ok);
  EXPECT_NE(result.message.find("check_grads: forward mode, output 0 lane 0: J·u = "), std::string::npos)
      << result.message;
  EXPECT_EQ(result.message.find("check_grads: reverse mode"), std::string::npos) << result.message;
  GradCheckOptions reverse_only;
  reverse_only.modes = GradMode::Reverse;
  EXPECT_TRUE(check_grads([](const Float64& x) { return cube(x, 3.01, 3); }, x, reverse_only).ok);
}

TEST_F(CheckGrads, OutputsThatDoNotDependOnTheInputs) {
  // Output 1 carries no derivatives; input 1 is not used (its gradient is zero).
  auto f = [](const std::tuple<Float64, Float64>& in) { return std::tuple(std::get<0>(in) * 2.0, from({1, 2, 3})); };
  KILN_EXPECT_GRADS(check_grads(f, std::tuple(from({1, 2}), from({3, 4}))));
}

TEST_F(CheckGrads, FloatInputsIndicesAndErrors) {
  // Float (float32) inputs take the float32 defaults; indices pass through and non-float
  // outputs are not compared.
  UInt32 index = UInt32::from(std::vector<uint32_t>{2, 0, 1});
  auto f = [](const Float& x, const UInt32& i) { return std::tuple(gather(x * x, i), i); };
  KILN_EXPECT_GRADS(check_grads(f, std::tuple(Float::from(std::vector<float>{0.5f, 1, 2}), index)));
  GradCheckResult wrong = check_grads([](const Float& x) { return cast<float>(cube(cast<double>(x), 3.5, 3.5)); },
                                      Float::from(std::vector<float>{0.5f, 1, 2}));
  EXPECT_NE(wrong.message.find("rtol 0.01 "), std::string::npos) << wrong.message;
  EXPECT_NE(wrong.message.find("(eps 0.001, "), std::string::npos) << wrong.message;
  EXPECT_THROW(check_grads([](const UInt32& i) { return i; }, index), ValueError);
  EXPECT_THROW(check_grads([&](const Float64& x) { return index; }, from({1, 2})), ValueError);
}

TEST_F(CheckGrads, SameSeedSameDirections) {
  Float64 x = test::domain_array(8, {0.5, 2}, 0);
  auto wrong = [](const Float64& x) { return cube(x, 3.01, 3); };
  EXPECT_EQ(check_grads(wrong, x).message, check_grads(wrong, x).message);
  GradCheckOptions other;
  other.seed = 7;
  EXPECT_NE(check_grads(wrong, x).message, check_grads(wrong, x, other).message);
}

// ---- what traversals visit --------------------------------------------------------------------

class AutodiffTraversal : public AutodiffTest {};

TEST_F(AutodiffTraversal, UnrelatedBranchesAreNotVisited) {
  Float64 x = from({0.1, 0.2, 0.3}), y = from({1, 2, 3});
  enable_grad(x, y);
  Float64 a1 = x * 2.0, a2 = sin(a1), a3 = a2 + 1.0;  // a = f(x): 3 nodes, one edge each
  Float64 b1 = y * 3.0, b2 = exp(b1);                 // b = g(y): 2 nodes, one edge each
  Float64 c1 = x * x, c2 = cos(c1);                   // c = h(x): x*x has two edges from x
  Float64 loss = sum(a3);

  // Reverse from sum(a3): loss, a3, a2, a1, x and the 4 edges between them.
  size_t edges_before = detail::ad_edge_count();
  backward(loss, /*retain_graph=*/true);
  EXPECT_EQ(last_traversal().nodes, 5u);
  EXPECT_EQ(last_traversal().edges, 4u);
  EXPECT_EQ(detail::ad_edge_count(), edges_before);  // retained

  // Both branches: sum, d, a2, a1, x, b2, b1, y; sum <- d, d <- a2 and b2, two per chain.
  Float64 d = a2 * b2;
  backward(sum(d), /*retain_graph=*/true);
  EXPECT_EQ(last_traversal().nodes, 8u);
  EXPECT_EQ(last_traversal().edges, 7u);

  // forward_to(c2) from x: c2, c1, x; x -> c1 twice and c1 -> c2. Not a or b.
  set_grad(x, from({1, 1, 1}));
  Float64 tangent = forward_to(c2);
  EXPECT_EQ(last_traversal().nodes, 3u);
  EXPECT_EQ(last_traversal().edges, 3u);
  for (size_t i = 0; i < 3; ++i) EXPECT_NEAR(tangent.read(i), -std::sin(x.read(i) * x.read(i)) * 2 * x.read(i), 1e-12);

  // forward() from y: y, b1, b2, d (the sum of d was a temporary: freed); 3 edges.
  forward(y);
  EXPECT_EQ(last_traversal().nodes, 4u);
  EXPECT_EQ(last_traversal().edges, 3u);

  // Without retain_graph the traversed edges are freed, and only those.
  edges_before = detail::ad_edge_count();
  backward(loss);
  EXPECT_EQ(detail::ad_edge_count(), edges_before - 4);
}

// ---- gradient scopes ------------------------------------------------------------------------

class AutodiffScopes : public AutodiffTest {};

TEST_F(AutodiffScopes, SuspendRecordsNothingAndResumeRecordsAgain) {
  Float64 x = from({1, 2, 3});
  enable_grad(x);
  {
    GradScope suspended = suspend_grad();
    size_t nodes = detail::ad_node_count();
    Float64 target = x * 1.0;
    scatter_add(target, x, arange<UInt32>(3));
    EXPECT_FALSE(grad_enabled(x * 2.0));
    EXPECT_FALSE(grad_enabled(sin(x)));
    EXPECT_FALSE(grad_enabled(sum(x)));
    EXPECT_FALSE(grad_enabled(target));
    EXPECT_FALSE(grad_enabled(cube(x)));
    EXPECT_EQ(detail::ad_node_count(), nodes);
    {
      GradScope resumed = resume_grad();
      Float64 z = x * 3.0;
      EXPECT_TRUE(grad_enabled(z));
      backward(sum(z));
    }
    EXPECT_FALSE(grad_enabled(x * 4.0));
  }
  EXPECT_TRUE(grad_enabled(x * 5.0));
  EXPECT_EQ(host(grad(x)), (std::vector<double>{3, 3, 3}));
}

TEST_F(AutodiffScopes, IsolateStopsAtOlderNodesUntilTheScopeEnds) {
  Float64 x = from({1, 2, 3});
  enable_grad(x);
  Float64 a = x * x;  // created before the scope
  {
    GradScope isolated = isolate_grad();
    Float64 b = a * 3.0;
    backward(sum(b));
    EXPECT_EQ(last_traversal().nodes, 3u);  // sum, b, and a, which is not expanded
    EXPECT_EQ(last_traversal().edges, 2u);
    EXPECT_EQ(host(grad(x)), (std::vector<double>{0, 0, 0}));
    backward(sum(a * 0.5));  // a second contribution to a, also postponed
  }
  EXPECT_EQ(host(grad(x)), (std::vector<double>{7, 14, 21}));  // (3 + 0.5) * 2x
}

TEST_F(AutodiffScopes, AnIsolateScopeLeftByAnExceptionDropsWhatReachedItsBoundary) {
  // Ending the scope would run a traversal; while an exception unwinds it must not (a
  // throwing destructor there ends the process), and the failed computation's gradients
  // never arrive.
  Float64 x = from({1, 2, 3});
  enable_grad(x);
  Float64 a = x * x;
  try {
    GradScope isolated = isolate_grad();
    backward(sum(a * 3.0));
    throw ValueError("the computation failed");
  } catch (const ValueError& e) {
    EXPECT_STREQ(e.what(), "the computation failed");
  }
  EXPECT_EQ(host(grad(x)), (std::vector<double>{0, 0, 0}));
  backward(sum(a));  // the graph is intact
  EXPECT_EQ(host(grad(x)), (std::vector<double>{2, 4, 6}));
}

// ---- accumulation and clearing ------------------------------------------------------------------

class AutodiffSemantics : public AutodiffTest {};

TEST_F(AutodiffSemantics, GradientsAccumulateOnInputsAcrossBackwardCalls) {
  Float64 x = from({1, 2});
  enable_grad(x);
  backward(sum(x * 2.0));
  backward(sum(x * x));
  EXPECT_EQ(host(grad(x)), (std::vector<double>{4, 6}));
  clear_grad(x);
  EXPECT_EQ(host(grad(x)), (std::vector<double>{0, 0}));
  accumulate_grad(x, from({1, 1}));
  EXPECT_EQ(host(grad(x)), (std::vector<double>{1, 1}));
}

TEST_F(AutodiffSemantics, ReverseKeepsOnlyInputGradientsForwardKeepsReferencedOnes) {
  Float64 x = from({1, 2});
  enable_grad(x);
  Float64 a = x * 3.0, y = a * a;
  forward(x);
  EXPECT_EQ(host(grad(a)), (std::vector<double>{3, 3}));
  EXPECT_EQ(host(grad(y)), (std::vector<double>{18, 36}));
  clear_grad(x);
  backward_from(y, from({1, 1}), /*retain_graph=*/true);
  EXPECT_EQ(host(grad(x)), (std::vector<double>{18, 36}));
  EXPECT_EQ(host(grad(a)), (std::vector<double>{0, 0}));
  EXPECT_EQ(host(grad(y)), (std::vector<double>{0, 0}));
}

TEST_F(AutodiffSemantics, ForwardTwiceGivesTheSameTangents) {
  // Tangents restart at zero downstream of the sources: the second forward() replaces the
  // first one's tangents instead of adding to them (also for a one-lane node fed by many
  // lanes, whose sum is pending until the traversal settles it).
  Float64 x = from({1, 2}), p = from({0.5});
  enable_grad(x, p);
  Float64 a = x * 3.0, y = a * a, total = sum(x * p);
  for (int pass = 0; pass < 2; ++pass) {
    SCOPED_TRACE(pass);
    forward(x);
    EXPECT_EQ(host(grad(a)), (std::vector<double>{3, 3}));
    EXPECT_EQ(host(grad(y)), (std::vector<double>{18, 36}));
    EXPECT_EQ(host(grad(total)), (std::vector<double>{1}));  // sum(p · 1) over 2 lanes
  }
  forward(p);  // from another source: x's tangents are gone from the nodes downstream of p
  EXPECT_EQ(host(grad(total)), (std::vector<double>{3}));
  EXPECT_EQ(host(grad(y)), (std::vector<double>{18, 36}));  // not downstream of p: kept
}

TEST_F(AutodiffSemantics, BackwardFromAVectorWithSharedComponents) {
  Float64 x = from({1, 2});
  enable_grad(x);
  Float64 a = x * 2.0;
  Vec3 y(a, a, x * x);  // a appears twice: both seeds reach it
  backward_from(y, Vec3(from({1, 1}), from({10, 10}), from({100, 100})));
  EXPECT_EQ(host(grad(x)), (std::vector<double>{2 + 20 + 200, 2 + 20 + 400}));

  Float64 p = from({1, 2}), q = from({3, 4});
  enable_grad(p, q);
  Float64 z = p * 2.0 + q;
  forward_from(Vec3(p, p, q), Vec3(from({1, 1}), from({10, 10}), from({100, 100})));
  EXPECT_EQ(host(grad(z)), (std::vector<double>{2 * 11 + 100, 2 * 11 + 100}));
}

TEST_F(AutodiffSemantics, OneLaneSeedCoversEveryLane) {
  Float64 x = from({1, 2, 3});
  enable_grad(x);
  backward_from(x * x, Float64(0.5));
  EXPECT_EQ(host(grad(x)), (std::vector<double>{1, 2, 3}));
}

TEST_F(AutodiffSemantics, BackwardToCollectsFromEveryNodeWithAGradient) {
  Float64 x = from({1, 2}), w = from({5, 7});
  enable_grad(x);
  enable_grad(w);
  Float64 a = x * 3.0, y = a * x, z = w * x;  // y = 3x², z = wx
  set_grad(y, from({1, 1}));
  set_grad(z, from({1, 0}));
  EXPECT_EQ(host(backward_to(x)), (std::vector<double>{6 * 1 + 5, 6 * 2}));
  EXPECT_EQ(last_traversal().nodes, 4u);                  // x, a, y, z: not w
  EXPECT_EQ(host(grad(w)), (std::vector<double>{0, 0}));  // only paths from x
  // Into an intermediate node: its inputs get nothing.
  Float64 b = x * 2.0, c = b * b;
  set_grad(c, from({1, 1}));
  EXPECT_EQ(host(backward_to(b)), (std::vector<double>{4, 8}));  // dc/db = 2b
  EXPECT_EQ(host(grad(x)), (std::vector<double>{11, 12}));       // unchanged
  expect_error<ValueError>([&] { backward_to(from({1.0})); }, "backward_to()");
}

TEST_F(AutodiffSemantics, ForwardToStartsFromEveryNodeWithAGradient) {
  Float64 x = from({1, 2});
  enable_grad(x);
  Float64 a = x * 3.0, y = a * x;  // y = 3x², through a and directly
  set_grad(a, from({1, 1}));       // only a has a tangent: dy = x · da
  EXPECT_EQ(host(forward_to(y)), (std::vector<double>{1, 2}));
  clear_grad(y);              // (a target's tangent accumulates, like an input's adjoint)
  set_grad(x, from({1, 1}));  // now x: dy = 6x (a's tangent was cleared by the traversal)
  EXPECT_EQ(host(forward_to(y)), (std::vector<double>{6, 12}));
}

TEST_F(AutodiffSemantics, NonDifferentiableOpsStopGradients) {
  Float64 x = from({1.5, -2.5});
  enable_grad(x);
  EXPECT_FALSE(grad_enabled(floor(x)));
  EXPECT_FALSE(grad_enabled(round(x)));
  EXPECT_FALSE(grad_enabled(cast<double>(cast<int32_t>(x))));
  EXPECT_FALSE(grad_enabled(select(x > 0.0, from({1, 1}), from({2, 2}))));
  EXPECT_FALSE(grad_enabled(detach(x) * 2.0));
  EXPECT_TRUE(grad_enabled(cast<float>(x)));
  Float f = cast<float>(x) * 2.f;
  backward(sum(f));
  EXPECT_EQ(host(grad(x)), (std::vector<double>{2, 2}));
}

// ---- errors: each misuse raises a specific error that names the operation -------------------

class AutodiffErrors : public AutodiffTest {};

TEST_F(AutodiffErrors, BackwardOnANonScalarWithoutASeed) {
  Float64 x = from({1, 2, 3});
  enable_grad(x);
  expect_error<SizeError>([&] { backward(x * 2.0); }, "backward(): y has 3 lanes");
}

TEST_F(AutodiffErrors, GradOfAnIntegerArray) {
  expect_error<TypeError>([] { grad(Int32::from(std::vector<int32_t>{1, 2})); }, "grad()");
}

TEST_F(AutodiffErrors, EnableGradOfAnIntegerArray) {
  Int32 i = Int32::from(std::vector<int32_t>{1, 2});
  expect_error<TypeError>([&] { enable_grad(i); }, "enable_grad()");
}

TEST_F(AutodiffErrors, SetGradWithTheWrongSize) {
  Float64 x = from({1, 2, 3});
  enable_grad(x);
  expect_error<SizeError>([&] { set_grad(x, from({1, 2})); }, "set_grad(): the gradient has 2 lanes");
}

TEST_F(AutodiffErrors, AccumulateGradWithTheWrongSize) {
  Float64 x = from({1, 2, 3});
  enable_grad(x);
  expect_error<SizeError>([&] { accumulate_grad(x, from({1, 2})); }, "accumulate_grad(): the gradient has 2 lanes");
}

TEST_F(AutodiffErrors, SetGradOnAnArrayWithoutDerivatives) {
  Float64 x = from({1, 2, 3});
  expect_error<ValueError>([&] { set_grad(x, from({1, 2, 3})); }, "set_grad()");
}

TEST_F(AutodiffErrors, BackwardOnAnArrayWithoutDerivatives) {
  expect_error<ValueError>([] { backward(from({1})); }, "backward()");
}

TEST_F(AutodiffErrors, ScatterReduceMinMaxWithDerivatives) {
  Float64 target = from({1, 2, 3}), value = from({5, 0});
  enable_grad(value);
  UInt32 index = UInt32::from(std::vector<uint32_t>{0, 2});
  expect_error<ValueError>([&] { scatter_reduce(ReduceOp::Min, target, value, index); }, "scatter_reduce(Min)");
  expect_error<ValueError>([&] { scatter_reduce(ReduceOp::Max, target, value, index); }, "scatter_reduce(Max)");
}

TEST_F(AutodiffErrors, BackwardTwiceThroughAFreedGraph) {
  Float64 x = from({1, 2});
  enable_grad(x);
  Float64 loss = sum(x * x);
  backward(loss);
  expect_error<ValueError>([&] { backward(loss); }, "backward()");
  EXPECT_EQ(host(grad(x)), (std::vector<double>{2, 4}));
}

TEST_F(AutodiffErrors, RetainGraphAllowsASecondBackward) {
  Float64 x = from({1, 2});
  enable_grad(x);
  Float64 loss = sum(x * x);
  backward(loss, /*retain_graph=*/true);
  backward(loss);
  EXPECT_EQ(host(grad(x)), (std::vector<double>{4, 8}));
  expect_error<ValueError>([&] { backward(loss); }, "backward()");
}

TEST_F(AutodiffErrors, ForwardToThroughAFreedGraph) {
  Float64 x = from({1, 2});
  enable_grad(x);
  Float64 y = x * x;
  backward(sum(y));
  set_grad(x, from({1, 1}));
  expect_error<ValueError>([&] { forward_to(y); }, "forward_to()");
}

TEST_F(AutodiffErrors, ForwardThroughAFreedGraphUntilXIsUsedAgain) {
  Float64 x = from({1, 2});
  enable_grad(x);
  Float64 y = x * x;
  backward(sum(y));  // frees x's uses
  expect_error<ValueError>([&] { forward(x); }, "forward()");
  Float64 z = sin(x);  // a new use: tangents can leave x again
  forward(x);
  for (size_t i = 0; i < 2; ++i) EXPECT_NEAR(grad(z).read(i), std::cos(x.read(i)), 1e-15);
  EXPECT_EQ(last_traversal().nodes, 2u);  // x and z; not the freed y
}

// ---- leaks ----------------------------------------------------------------------------------------

class AutodiffLeaks : public AutodiffTest {};

TEST_F(AutodiffLeaks, TheGraphIsFreedWithItsArrays) {
  size_t nodes = detail::ad_node_count(), edges = detail::ad_edge_count();
  {
    Float64 x = from({0.5, 1, 1.5}), p = from({2});
    enable_grad(x, p);
    Float64 t = x * p;
    scatter_add(t, cube(x), UInt32::from(std::vector<uint32_t>{0, 0, 2}));
    Float64 n = std::get<0>(custom(std::make_shared<NestedSinSquared>(), t));
    Float64 loss = sum(prefix_sum(n) * gather(t, arange<UInt32>(3) % 2u));
    forward(p);
    backward(loss, /*retain_graph=*/true);
    {
      GradScope isolated = isolate_grad();
      backward(sum(t * 2.0));
    }
    EXPECT_GT(detail::ad_node_count(), nodes);
    EXPECT_GT(detail::ad_edge_count(), edges);
  }
  EXPECT_EQ(detail::ad_node_count(), nodes);
  EXPECT_EQ(detail::ad_edge_count(), edges);
}

}  // namespace

TEST_F(AutodiffSemantics, DerivativesWithoutValuesCarryTraversalsButComputeNothing) {
  Float64 x = from({1, 2});
  enable_grad(x);
  Float64 y = sin(x) * x;  // never evaluated below
  Vec3 v(y, y * 2.0, x);
  Vec3 carriers = derivatives_without_values(v);
  kernel_history(true);
  EXPECT_EQ(host(carriers.x), (std::vector<double>{0, 0}));  // zeros: no kernel computed y
  for (const KernelLaunch& launch : kernel_history()) EXPECT_EQ(launch.ops, 0u);
  backward(sum(carriers.x * 3.0 + carriers.z));
  for (size_t i = 0; i < 2; ++i)
    EXPECT_NEAR(host(grad(x))[i], 3 * (std::cos(i + 1.0) * (i + 1.0) + std::sin(i + 1.0)) + 1, 1e-12);
  EXPECT_FALSE(grad_enabled(derivatives_without_values(detach(y))));
}

TEST_F(AutodiffSemantics, ScatteringDerivativesWithoutValuesRunsNoKernelAndKeepsTheDerivatives) {
  Float64 x = from({1, 2, 3});
  enable_grad(x);
  Float64 carriers = derivatives_without_values(x * x);
  EXPECT_TRUE(values_known_zero(carriers));
  EXPECT_FALSE(values_known_zero(x));
  Float64 block = zeros<Float64>(2);
  kernel_history(true);
  scatter_add(block, carriers, UInt32{0, 1, 1});
  eval(block);
  for (const KernelLaunch& launch : kernel_history()) EXPECT_EQ(launch.side_effects, 0u) << "no zero is added";
  EXPECT_EQ(host(block), (std::vector<double>{0, 0}));
  backward(sum(block * from({1, 10})));
  EXPECT_EQ(host(grad(x)), (std::vector<double>{2, 40, 60}));  // d(x^2) = 2x, times 1, 10, 10
}
