// Kernel identity, literal generalization, opaque values, compilation reasons, kernel
// history listings and graphviz() (the disk cache has its own test files).
#include <kiln/kiln.h>

#include <gtest/gtest.h>

#include "ir/verify.h"

#include <cstring>

using namespace kiln;

namespace {

class KernelCache : public ::testing::Test {
 protected:
  void SetUp() override {
    set_flag(Flag::DiskCache, false);  // every compilation here must really compile
    set_generalization_threshold(2);
    kernel_history(true);
  }
  void TearDown() override {
    set_flag(Flag::DiskCache, true);
    set_flag(Flag::Generalize, true);
    set_generalization_threshold(2);
    EXPECT_EQ(detail::verify_ir(), "");
  }
};

/// y = x * a + b over `n` lanes; `tag` changes the structure (so each test has its own shape).
std::vector<float> affine(float a, float b, size_t n = 37, int tag = 0) {
  Float x = arange<Float>(n);
  for (int i = 0; i < tag; ++i) x = sqrt(x);
  return (x * a + b).to_vector();
}

bool compiled(const KernelLaunch& launch) {
  return launch.source == KernelSource::Compiled || launch.source == KernelSource::Generalized;
}

size_t compilations(const std::vector<KernelLaunch>& history) {
  size_t n = 0;
  for (const KernelLaunch& launch : history) n += compiled(launch);
  return n;
}

}  // namespace

TEST_F(KernelCache, LabelsSizesAndCreationSitesAreNotPartOfTheKernel) {
  auto program = [](size_t n, const char* label) {
    Float x = arange<Float>(n);
    set_label(x, label);
    Float y = x * 3.f + 1.f;  // the same literals, created on one line
    set_label(y, label);
    return y;
  };
  eval(program(10, "first"));
  eval(program(1000, "second"));
  Float other = arange<Float>(10) * Float(3.f) + Float(1.f);  // created on another line
  eval(other);
  auto h = kernel_history();
  ASSERT_EQ(h.size(), 3u);
  EXPECT_EQ(h[0].hash, h[1].hash);
  EXPECT_EQ(h[0].hash, h[2].hash);
  EXPECT_EQ(h[1].source, KernelSource::Memory);
  EXPECT_EQ(h[2].source, KernelSource::Memory);
}

TEST_F(KernelCache, LiteralValuesChangeTheKeyButNotTheShape) {
  set_flag(Flag::Generalize, false);
  affine(2.f, 1.f, 37, 1);
  affine(3.f, 1.f, 37, 1);
  affine(2.f, 1.f, 37, 2);  // one more op: another shape
  auto h = kernel_history();
  ASSERT_EQ(h.size(), 3u);
  EXPECT_NE(h[0].hash, h[1].hash);
  EXPECT_EQ(h[0].shape_hash, h[1].shape_hash);
  EXPECT_NE(h[0].shape_hash, h[2].shape_hash);
}

TEST_F(KernelCache, EqualLiteralValuesDoNotChangeTheShape) {
  set_flag(Flag::Generalize, false);
  affine(2.f, 5.f, 37, 3);
  affine(2.f, 2.f, 37, 3);  // a == b: still two literal slots
  auto h = kernel_history();
  ASSERT_EQ(h.size(), 2u);
  EXPECT_EQ(h[0].shape_hash, h[1].shape_hash);
}

TEST_F(KernelCache, TheSecondVariantGeneralizesAndLaterOnesReuseIt) {
  std::vector<float> first = affine(2.f, 1.f, 37, 4);
  std::vector<float> second = affine(3.f, 1.f, 37, 4);
  std::vector<float> third = affine(-7.5f, 1.f, 50, 4);
  auto h = kernel_history();
  ASSERT_EQ(h.size(), 3u);
  EXPECT_EQ(h[0].source, KernelSource::Compiled);
  EXPECT_EQ(h[0].parameters, 0u);
  EXPECT_EQ(h[1].source, KernelSource::Generalized);
  EXPECT_EQ(h[1].parameters, 1u);
  EXPECT_EQ(h[2].source, KernelSource::Memory);
  EXPECT_EQ(h[2].hash, h[1].hash);
  EXPECT_NE(h[1].reason.find("literal #"), std::string::npos) << h[1].reason;
  EXPECT_NE(h[1].reason.find("changed 2 \u2192 3"), std::string::npos) << h[1].reason;
  EXPECT_NE(h[1].reason.find("generalized 1 slot"), std::string::npos) << h[1].reason;
  EXPECT_NE(h[1].reason.find("test_kernel_cache.cpp:"), std::string::npos) << h[1].reason;
  for (size_t i = 0; i < 37; ++i) {
    EXPECT_EQ(second[i], std::sqrt(std::sqrt(std::sqrt(std::sqrt(float(i))))) * 3.f + 1.f);
    EXPECT_EQ(first[i], std::sqrt(std::sqrt(std::sqrt(std::sqrt(float(i))))) * 2.f + 1.f);
  }
  for (size_t i = 0; i < 50; ++i)
    EXPECT_EQ(third[i], std::sqrt(std::sqrt(std::sqrt(std::sqrt(float(i))))) * -7.5f + 1.f);
}

TEST_F(KernelCache, ANewChangedSlotWidensTheGenericKernelOnce) {
  affine(2.f, 1.f, 37, 5);
  affine(3.f, 1.f, 37, 5);   // generalizes slot a
  affine(4.f, 1.f, 37, 5);   // hit
  affine(4.f, 9.f, 37, 5);   // b changes: widen to a and b
  affine(5.f, -2.f, 37, 5);  // hit
  auto h = kernel_history();
  ASSERT_EQ(h.size(), 5u);
  EXPECT_EQ(h[1].source, KernelSource::Generalized);
  EXPECT_EQ(h[2].source, KernelSource::Memory);
  EXPECT_EQ(h[3].source, KernelSource::Generalized);
  EXPECT_EQ(h[3].parameters, 2u);
  EXPECT_EQ(h[4].source, KernelSource::Memory);
  EXPECT_EQ(h[4].hash, h[3].hash);
  EXPECT_EQ(compilations(h), 3u);
}

TEST_F(KernelCache, TheSecondWideningMakesEverySlotAParameter) {
  auto program = [](float a, float b, float c) {
    Float x = arange<Float>(21);
    return (x * a + b - c).read(20);
  };
  program(2.f, 1.f, 7.f);
  program(3.f, 1.f, 7.f);  // a varies: generic kernel over a
  program(3.f, 5.f, 7.f);  // b too: every slot (c never varied) becomes a parameter
  float last = program(4.f, 6.f, 8.f);
  auto h = kernel_history();
  ASSERT_EQ(h.size(), 4u);
  EXPECT_EQ(h[1].parameters, 1u);
  EXPECT_EQ(h[2].source, KernelSource::Generalized);
  EXPECT_EQ(h[2].parameters, 3u);
  EXPECT_NE(h[2].reason.find("changed 1 \u2192 5"), std::string::npos) << h[2].reason;
  EXPECT_NE(h[2].reason.find("generalized 2 slots"), std::string::npos) << h[2].reason;
  EXPECT_EQ(h[3].source, KernelSource::Memory);
  EXPECT_EQ(last, 20.f * 4.f + 6.f - 8.f);
}

TEST_F(KernelCache, TheThresholdSetsTheVariantThatGeneralizes) {
  set_generalization_threshold(3);
  affine(2.f, 1.f, 37, 6);
  affine(3.f, 1.f, 37, 6);
  affine(4.f, 1.f, 37, 6);
  affine(5.f, 1.f, 37, 6);
  auto h = kernel_history();
  ASSERT_EQ(h.size(), 4u);
  EXPECT_EQ(h[1].source, KernelSource::Compiled);
  EXPECT_NE(h[1].reason.find("become parameters at variant 3"), std::string::npos) << h[1].reason;
  EXPECT_EQ(h[2].source, KernelSource::Generalized);
  EXPECT_EQ(h[3].source, KernelSource::Memory);
  EXPECT_THROW(set_generalization_threshold(0), ValueError);
}

TEST_F(KernelCache, ThresholdOneMakesEveryLiteralAParameterAtOnce) {
  set_generalization_threshold(1);
  std::vector<float> y = affine(2.f, 1.f, 37, 7);
  affine(3.f, 4.f, 37, 7);
  auto h = kernel_history();
  ASSERT_EQ(h.size(), 2u);
  EXPECT_EQ(h[0].source, KernelSource::Generalized);
  EXPECT_GE(h[0].parameters, 2u);
  EXPECT_EQ(h[1].source, KernelSource::Memory);
  EXPECT_EQ(y[4], std::sqrt(std::sqrt(std::sqrt(std::sqrt(std::sqrt(std::sqrt(std::sqrt(4.f))))))) * 2.f + 1.f);
}

TEST_F(KernelCache, GeneralizationOffCompilesEveryVariantAndSaysSo) {
  set_flag(Flag::Generalize, false);
  affine(2.f, 1.f, 37, 8);
  affine(3.f, 1.f, 37, 8);
  affine(2.f, 1.f, 37, 8);  // seen before: a hit
  auto h = kernel_history();
  ASSERT_EQ(h.size(), 3u);
  EXPECT_EQ(h[1].source, KernelSource::Compiled);
  EXPECT_NE(h[1].reason.find("generalization is off"), std::string::npos) << h[1].reason;
  EXPECT_EQ(h[2].source, KernelSource::Memory);
}

TEST_F(KernelCache, OpaqueValuesNeverRecompile) {
  Float x = arange<Float>(20);
  std::vector<float> results;
  for (float a : {1.f, 2.f, 3.f}) {
    Float scale = opaque<Float>(a);
    EXPECT_FALSE(detail::node_is_literal(scale.index()));
    EXPECT_EQ(scale.item(), a);
    results.push_back((x * scale + scale * 2.f).read(19));  // opaque values never fold
  }
  auto h = kernel_history();
  ASSERT_EQ(h.size(), 3u);
  EXPECT_EQ(h[0].parameters, 1u);
  EXPECT_NE(h[0].reason.find("first time"), std::string::npos);
  EXPECT_EQ(h[1].source, KernelSource::Memory);
  EXPECT_EQ(h[2].source, KernelSource::Memory);
  EXPECT_EQ(results, (std::vector<float>{21.f, 42.f, 63.f}));
}

TEST_F(KernelCache, AGeneralizedVariantReusesTheKernelCompiledForAnOpaqueValue) {
  Float x = arange<Float>(9);
  auto program = [&](const Float& a, float b) { return (abs(x) * a + b).read(8); };
  program(opaque<Float>(2.f), 1.f);    // slot a is a parameter from the start
  float y = program(Float(3.f), 1.f);  // a literal a that changed: the opaque kernel serves it
  program(Float(4.f), 1.f);
  auto h = kernel_history();
  ASSERT_EQ(h.size(), 3u);
  EXPECT_EQ(h[0].parameters, 1u);
  EXPECT_EQ(h[0].source, KernelSource::Compiled);
  EXPECT_EQ(h[1].source, KernelSource::Memory);
  EXPECT_EQ(h[1].hash, h[0].hash);
  EXPECT_EQ(h[2].source, KernelSource::Memory);
  EXPECT_EQ(y, 8.f * 3.f + 1.f);
}

TEST_F(KernelCache, MakeOpaqueTurnsLiteralsIntoParametersAndEvaluatesPendingWork) {
  Float a = 2.f, pending = arange<Float>(4) + 1.f, data = Float{1.f, 2.f};
  detail::Index data_node = data.index();
  make_opaque(a, pending, data);
  EXPECT_FALSE(detail::node_is_literal(a.index()));
  EXPECT_EQ(a.item(), 2.f);
  EXPECT_EQ(pending.read(3), 4.f);
  EXPECT_EQ(data.index(), data_node);
  Array3f v(1.f, 2.f, 3.f);
  make_opaque(v);
  EXPECT_FALSE(detail::node_is_literal(v.z.index()));
  EXPECT_EQ(v.z.item(), 3.f);
}

TEST_F(KernelCache, MakeOpaqueOfAnEmptyArrayIsAClearError) {
  Float empty;
  try {
    make_opaque(empty);
    FAIL() << "make_opaque() accepted an empty array";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("make_opaque()"), std::string::npos) << e.what();
  }
}

TEST_F(KernelCache, ANewShapeNamesTheClosestCompiledKernelAndTheFirstDifference) {
  Float x = arange<Float>(16);
  set_label(x, "x");
  eval(sqrt(x) * 2.f + 100.f);
  eval(sqrt(x) * 2.f - 100.f);  // statement 4: Sub instead of Add
  auto h = kernel_history();
  ASSERT_EQ(h.size(), 2u);
  EXPECT_NE(h[1].reason.find("first time this kernel shape was seen"), std::string::npos) << h[1].reason;
  EXPECT_NE(h[1].reason.find("closest compiled kernel: " + h[0].hash), std::string::npos) << h[1].reason;
  EXPECT_NE(h[1].reason.find("Sub f32"), std::string::npos) << h[1].reason;
  EXPECT_NE(h[1].reason.find("vs Add f32"), std::string::npos) << h[1].reason;
}

TEST_F(KernelCache, HistoryListingsShowLabelsAndCreationSites) {
  Float x = arange<Float>(16);
  set_label(x, "pixel");
  Float y = x * 0.5f;
  set_label(y, "half");
  eval(y);
  std::string ir = kernel_history().back().ir();
  EXPECT_NE(ir.find("Mul"), std::string::npos) << ir;
  EXPECT_NE(ir.find("label `half`"), std::string::npos) << ir;
  EXPECT_NE(ir.find("created at"), std::string::npos) << ir;  // the 0.5f literal
  EXPECT_NE(ir.find("test_kernel_cache.cpp:"), std::string::npos) << ir;
  // `pixel` was evaluated lazily into this kernel: its Counter/Cast statements are listed.
  EXPECT_NE(ir.find("Counter"), std::string::npos) << ir;
}

TEST_F(KernelCache, StatsCountHitsCompilesAndGeneralizations) {
  CacheStats before = cache_stats();
  affine(2.f, 1.f, 37, 9);
  affine(3.f, 1.f, 37, 9);
  affine(4.f, 1.f, 37, 9);
  CacheStats after = cache_stats();
  EXPECT_EQ(after.compiles - before.compiles, 2u);
  EXPECT_EQ(after.generalizations - before.generalizations, 1u);
  EXPECT_EQ(after.memory_hits - before.memory_hits, 1u);
  EXPECT_FALSE(after.disk_enabled);  // turned off in SetUp
  flush_kernel_cache();
  EXPECT_EQ(cache_stats().kernels, 0u);
  affine(5.f, 1.f, 37, 9);  // everything is forgotten: a first variant again
  auto h = kernel_history();
  EXPECT_EQ(h.back().source, KernelSource::Compiled);
  EXPECT_EQ(h.back().parameters, 0u);
  EXPECT_NE(h.back().reason.find("first time"), std::string::npos) << h.back().reason;
}

TEST_F(KernelCache, GraphvizShowsThePendingGraph) {
  Float x = arange<Float>(8);
  set_label(x, "x");
  Float y = sqrt(x) + 2.f;
  std::string dot = graphviz(y);
  EXPECT_EQ(dot.rfind("digraph kiln {", 0), 0u) << dot;
  EXPECT_NE(dot.find("Sqrt f32[8]"), std::string::npos) << dot;
  EXPECT_NE(dot.find("\\nx\""), std::string::npos) << dot;  // the label
  EXPECT_NE(dot.find(" -> "), std::string::npos) << dot;
  EXPECT_EQ(dot.back(), '\n');
  Float dead;
  EXPECT_THROW(graphviz(dead), ValueError);
}
