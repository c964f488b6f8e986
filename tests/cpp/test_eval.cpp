// Evaluation: fusion, dead-code elimination, graph collapse, grouping by size,
// side-effect order, atomics under conflicts, copy on write, checked mode, caching,
// horizontal operations.
#include <kiln/kiln.h>

#include <gtest/gtest.h>

#include "eval/growth_watch.h"
#include "ir/verify.h"

#include <algorithm>
#include <numeric>
#include <random>

using namespace kiln;

namespace {
class Eval : public ::testing::Test {
 protected:
  void SetUp() override { kernel_history(true); }
  void TearDown() override { EXPECT_EQ(detail::verify_ir(), ""); }
};

Float iota(size_t n) { return arange<Float>(n); }
}  // namespace

TEST_F(Eval, TwentyOpExpressionIsOneKernel) {
  Float x = Float::from(std::vector<float>(1000, 0.5f));
  eval(x);
  kernel_history(true);
  Float y = x;
  for (int i = 0; i < 10; ++i) y = y * 1.5f + 0.25f;  // 20 ops
  eval(y);
  auto h = kernel_history();
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h[0].ops, 20u);
  EXPECT_EQ(h[0].inputs, 1u);
  EXPECT_EQ(h[0].outputs, 1u);
  float expected = 0.5f;
  for (int i = 0; i < 10; ++i) expected = expected * 1.5f + 0.25f;
  EXPECT_FLOAT_EQ(y.read(999), expected);
}

TEST_F(Eval, UnusedBranchContributesNoOps) {
  Float x = Float::from(std::vector<float>(64, 2.f));
  Float used = x * 3.f;
  Float unused = sqrt(x) + x * x - 7.f;  // traced, never evaluated
  eval(used);
  auto h = kernel_history();
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h[0].ops, 1u);
  EXPECT_EQ(used.read(5), 6.f);
  EXPECT_EQ(unused.read(0), std::sqrt(2.f) + 4.f - 7.f);
}

TEST_F(Eval, EvaluatedNodesCollapse) {
  size_t before = live_nodes();
  Float y;
  {
    Float x = iota(100);
    y = (x + 1.f) * (x - 1.f);
    eval(y);
  }
  // Only y remains: its operands were released when it became Data.
  EXPECT_EQ(live_nodes(), before + 1);
  EXPECT_EQ(y.read(3), 8.f);
}

// Releasing the last reference to a long unevaluated chain frees the whole chain, without
// recursing once per node: that overflowed the stack at about 40,000 nodes. A child
// process runs it, so the failure is a crash of the child, not of the test run.
TEST_F(Eval, DroppingAVeryLongChainFreesItWithoutRecursion) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  size_t before = live_nodes();
  EXPECT_EXIT(
      {
        {
          Float x = iota(4);
          for (int i = 0; i < 300000; ++i) x = x * 1.0001f + 1.f;
        }
        std::exit(live_nodes() == before ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

/// Runs `iterations` evaluations of a small unrelated kernel while `state` gains
/// `ops_per_iteration` operations per iteration (evaluated each time when `eval_state`),
/// and an unevaluated computation of `held_ops` operations stays alive throughout;
/// returns what Kiln printed to stderr.
std::string loop_log(int iterations, int ops_per_iteration, bool eval_state, size_t held_ops = 0) {
  detail::reset_growth_watch();
  LogLevel saved = log_level();
  set_log_level(LogLevel::Warn);
  Float state = iota(64), unrelated = iota(64), held = iota(64);
  for (size_t k = 0; k < held_ops; ++k) held = held + unrelated;
  ::testing::internal::CaptureStderr();
  for (int i = 0; i < iterations; ++i) {
    for (int k = 0; k < ops_per_iteration; ++k) state = state * 0.5f + unrelated;
    if (eval_state) eval(state);
    Float printed = unrelated * float(i);
    eval(printed);
  }
  std::string log = ::testing::internal::GetCapturedStderr();
  set_log_level(saved);
  return log;
}

size_t count_of(const std::string& text, const std::string& what) {
  size_t count = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++count;
  return count;
}

// A loop that updates an array and evaluates only something else: the array's pending
// history grows at every evaluation, and Kiln says so once.
TEST_F(Eval, PendingWorkGrowingAcrossEvaluationsWarnsOnce) {
  int per_iteration = int(detail::kGrowingPendingNodes / detail::kGrowingEvaluations);
  std::string log = loop_log(int(detail::kGrowingEvaluations) * 3, per_iteration, false);
  EXPECT_EQ(count_of(log, "never evaluated kept piling up"), 1u) << log;
  EXPECT_NE(log.find("eval(x)"), std::string::npos) << log;
}

// A reverse pass evaluates on the way (here: the copy of each overwriting scatter's
// adjoint) while its derivative code grows by design; that is not the loop pattern, and it
// must not warn (it did, in prb's evaluated backward pass through a scene with many
// materials, where each call's results are scattered back).
TEST_F(Eval, AnAdTraversalsOwnEvaluationsDoNotWarn) {
  detail::reset_growth_watch();
  LogLevel saved = log_level();
  set_log_level(LogLevel::Warn);
  Float x = iota(64);
  enable_grad(x);
  Float total = zeros<Float>(64);
  UInt32 reversed = UInt32(63u) - arange<UInt32>(64);
  int per_step = int(2 * detail::kGrowingPendingNodes / (3 * detail::kGrowingEvaluations));
  for (int k = 0; k < 3 * int(detail::kGrowingEvaluations); ++k) {
    Float y = x;
    for (int i = 0; i < per_step; ++i) y = y * 0.999f + x;
    Float scattered = x * 0.5f;
    scatter(scattered, y, reversed, arange<UInt32>(64) < 32u);
    total = total + scattered;
  }
  eval(total);
  ::testing::internal::CaptureStderr();
  backward(sum(total));
  eval(grad(x));
  std::string log = ::testing::internal::GetCapturedStderr();
  set_log_level(saved);
  EXPECT_EQ(count_of(log, "piling up"), 0u) << log;
}

// Pending work that is large but does not grow is not the pattern either.
TEST_F(Eval, LoopThatEvaluatesItsStateDoesNotWarn) {
  int per_iteration = int(detail::kGrowingPendingNodes / detail::kGrowingEvaluations);
  std::string log = loop_log(int(detail::kGrowingEvaluations) * 3, per_iteration, true, detail::kGrowingPendingNodes);
  EXPECT_EQ(count_of(log, "piling up"), 0u) << log;
}

// Growth that stays small (a few pending operations per iteration) is not worth a warning.
TEST_F(Eval, SmallPendingGrowthDoesNotWarn) {
  std::string log = loop_log(int(detail::kGrowingEvaluations) * 3, 2, false);
  EXPECT_EQ(count_of(log, "piling up"), 0u) << log;
}

TEST_F(Eval, OneKernelPerSize) {
  Float a = iota(10) * 2.f, b = iota(20) + 1.f, c = iota(10) - 1.f;
  eval(a, b, c);
  EXPECT_EQ(kernel_history().size(), 2u);
  EXPECT_EQ(a.read(9), 18.f);
  EXPECT_EQ(b.read(19), 20.f);
  EXPECT_EQ(c.read(0), -1.f);
}

TEST_F(Eval, SizeOneBroadcasts) {
  Float one = Float(3.f), many = iota(5);
  Float data_one = Float{10.f};  // an evaluated size-1 array broadcasts too
  EXPECT_EQ((one * many + data_one).to_vector(), (std::vector<float>{10, 13, 16, 19, 22}));
}

TEST_F(Eval, ManyBlocksAcrossThreads) {
  size_t n = 3 * block_size() + 17;  // several parallel blocks and a masked tail
  Float x = iota(n);
  Float y = x * 2.f;
  std::vector<float> v = y.to_vector();
  for (size_t i = 0; i < n; i += 997) ASSERT_EQ(v[i], 2.f * float(i));
  EXPECT_EQ(v[n - 1], 2.f * float(n - 1));
}

TEST_F(Eval, ScattersRunInProgramOrder) {
  Float target = zeros<Float>(8);
  scatter(target, Float(1.f), UInt32{3});
  scatter(target, Float(2.f), UInt32{3});
  scatter(target, Float(5.f), UInt32{4});
  EXPECT_EQ(target.to_vector(), (std::vector<float>{0, 0, 0, 2, 5, 0, 0, 0}));
  // A gather after a scatter sees it.
  scatter(target, Float(9.f), UInt32{0});
  Float g = gather(target, UInt32{0, 3});
  EXPECT_EQ(g.to_vector(), (std::vector<float>{9, 2}));
}

TEST_F(Eval, ScatterReduceUnderHeavyConflicts) {
  const size_t n = 1 << 20;
  UInt32 lane = arange<UInt32>(n);
  UInt32 bin = lane % 7u;
  Int64 counts = zeros<Int64>(7);
  scatter_add(counts, Int64(1), bin);
  Int32 low = full<Int32>(INT32_MAX, 7), high = full<Int32>(INT32_MIN, 7);
  scatter_reduce(ReduceOp::Min, low, cast<int32_t>(lane), bin);
  scatter_reduce(ReduceOp::Max, high, cast<int32_t>(lane), bin);
  Float sums = zeros<Float>(7);
  scatter_add(sums, Float(0.5f), bin);
  eval(counts, low, high, sums);
  for (uint32_t b = 0; b < 7; ++b) {
    int64_t expected = int64_t(n / 7 + (b < n % 7));
    EXPECT_EQ(counts.read(b), expected);
    EXPECT_EQ(low.read(b), int32_t(b));
    EXPECT_EQ(high.read(b), int32_t((n - 1) - ((n - 1 - b) % 7)));
    EXPECT_EQ(sums.read(b), 0.5f * float(expected));  // exact: small integers / 2
  }
}

TEST_F(Eval, ScatterIncGivesDistinctSlots) {
  const size_t n = 100000;
  UInt32 lane = arange<UInt32>(n);
  Bool keep = (lane % 3u) == 0u;
  UInt32 counter = zeros<UInt32>(1);
  UInt32 slot = scatter_inc(counter, UInt32(0), keep);
  UInt32 out = zeros<UInt32>(n);
  scatter(out, lane, slot, keep);  // append buffer in the same kernel
  eval(out);
  uint32_t count = counter.read(0);
  EXPECT_EQ(count, (n + 2) / 3);
  std::vector<uint32_t> appended = out.to_vector();
  appended.resize(count);
  std::sort(appended.begin(), appended.end());
  for (uint32_t i = 0; i < count; ++i) ASSERT_EQ(appended[i], 3 * i);
  // The old values remain readable after the kernel (they were stored).
  EXPECT_LT(slot.read(3), count);
}

TEST_F(Eval, AddingKnownZerosRunsNothing) {
  Float target = Float{1.f, 2.f, 3.f};
  eval(target);
  kernel_history(true);
  Float values = zeros<Float>(1000);
  scatter_add(target, values, arange<UInt32>(1000) % 3u);
  scatter_add(target, Float(-0.0f), UInt32{1});  // not zero bits: added
  eval(target);
  EXPECT_EQ(kernel_history(true).size(), 1u) << "only the -0.0 is scattered";
  EXPECT_EQ(target.to_vector(), (std::vector<float>{1, 2, 3}));
}

TEST_F(Eval, ScatterCopiesASharedTarget) {
  Float a = Float{1.f, 2.f, 3.f};
  Float b = a;         // shares the node
  Float c = a * 10.f;  // pending, reads a's old value
  scatter(a, Float(7.f), UInt32{1});
  EXPECT_EQ(a.to_vector(), (std::vector<float>{1, 7, 3}));
  EXPECT_EQ(b.to_vector(), (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(c.to_vector(), (std::vector<float>{10, 20, 30}));
}

/// Where host memory can be wrapped: the default device when its memory is the host's (the
/// CPU, the emulated CUDA device), else the CPU.
Device host_memory_device() { return is_gpu_memory(default_device()) ? Device::CPU : default_device(); }

TEST_F(Eval, WrapSharesCallerMemory) {
  DeviceScope scope(host_memory_device());
  std::vector<float> host = {1.f, 2.f, 3.f, 4.f};
  Float w = Float::wrap(host.data(), host.size(), nullptr, default_device());
  EXPECT_EQ(w.data(), host.data());
  host[2] = 30.f;
  EXPECT_EQ((w * 1.f).read(2), 30.f);
  scatter(w, Float(-1.f), UInt32{0});
  eval(w);
  EXPECT_EQ(host[0], -1.f);  // scatter into unshared wrapped memory writes in place
}

TEST_F(Eval, CheckedModeRaisesOnOutOfRangeIndex) {
  set_flag(Flag::Checks, true);
  Float source = Float{1.f, 2.f, 3.f};
  set_label(source, "source");
  Float g = gather(source, UInt32{0, 5, 2});
  try {
    eval(g);
    FAIL() << "expected IndexError";
  } catch (const IndexError& e) {
    std::string message = e.what();
    EXPECT_NE(message.find("Gather"), std::string::npos) << message;
    EXPECT_NE(message.find("index 5"), std::string::npos) << message;
    EXPECT_NE(message.find("3 elements"), std::string::npos) << message;
    EXPECT_NE(message.find("array `source`, labelled at"), std::string::npos) << message;
  }
  Float target = zeros<Float>(4);
  scatter(target, Float(1.f), UInt32{1, 4});
  EXPECT_THROW(eval(target), IndexError);
  UInt32 counter = zeros<UInt32>(2);
  UInt32 slot = scatter_inc(counter, UInt32{2});
  EXPECT_THROW(eval(slot), IndexError);
  // Masked-off lanes are not checked.
  Float ok = gather(source, UInt32{0, 99}, Bool{true, false});
  EXPECT_EQ(ok.to_vector(), (std::vector<float>{1, 0}));
  set_flag(Flag::Checks, false);
}

/// Evaluating `value` raises IndexError whose message holds each of `parts`.
void expect_index_error(const Float& value, std::initializer_list<const char*> parts) {
  try {
    eval(value);
    ADD_FAILURE() << "expected IndexError";
  } catch (const IndexError& e) {
    for (const char* part : parts) EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

/// Runs `body` on the LLVM backend and then on the interpreter.
template <typename Body> void on_both_backends(Body body) {
  for (bool interpreter : {false, true}) {
    SCOPED_TRACE(interpreter ? "interpreter" : "llvm");
    set_flag(Flag::Interpreter, interpreter);
    body();
  }
  set_flag(Flag::Interpreter, false);
}

TEST_F(Eval, FastModeOutOfRangeGatherReadsZero) {
  on_both_backends([] {
    Float source = Float{1.f, 2.f, 3.f};
    Float g = gather(source, UInt32{0, 5, 2, 4000000000u});
    eval(g);
    EXPECT_EQ(g.to_vector(), (std::vector<float>{1, 0, 3, 0}));
    Float empty = zeros<Float>(0);
    EXPECT_EQ(gather(empty, UInt32{0, 1}).to_vector(), (std::vector<float>{0, 0}));
  });
}

TEST_F(Eval, CheckedModeCountsTheLanesOutOfRange) {
  on_both_backends([] {
    set_flag(Flag::Checks, true);
    Float g = gather(Float{1.f, 2.f, 3.f}, UInt32{0, 5, 2, 4000000000u});
    expect_index_error(g, {"index 5", "3 elements", "2 lanes out of range"});
    set_flag(Flag::Checks, false);
  });
}

TEST_F(Eval, FastModeOutOfRangeScattersWriteNothing) {
  // The targets wrap the first 16 elements of 32: a write past them would show in the rest.
  DeviceScope scope(host_memory_device());
  on_both_backends([] {
    std::vector<float> floats(32, 7.f);
    std::vector<uint32_t> counts(32, 7u);
    Float f = Float::wrap(floats.data(), 16, nullptr, default_device());
    UInt32 c = UInt32::wrap(counts.data(), 16, nullptr, default_device());
    UInt32 index{3, 16, 17, 1u << 30, 3};
    set_log_level(LogLevel::Error);
    scatter(f, Float(1.f), index);
    scatter_reduce(ReduceOp::Add, c, UInt32(1), index);
    scatter_reduce(ReduceOp::Min, f, Float(-2.f), index);
    UInt32 old = scatter_inc(c, index);
    eval(f, c, old);
    set_log_level(LogLevel::Warn);
    EXPECT_EQ(floats[3], -2.f);
    EXPECT_EQ(counts[3], 7u + 2u + 2u);
    EXPECT_EQ(old.read(1), 0u);  // a dropped increment returns 0
    for (size_t i = 16; i < 32; ++i) {
      EXPECT_EQ(floats[i], 7.f) << i;
      EXPECT_EQ(counts[i], 7u) << i;
    }
  });
}

TEST_F(Eval, HistogramWithOneBadBinKeepsTheOthers) {
  size_t n = 1 << 20;
  UInt32 bins = zeros<UInt32>(16);
  UInt32 bin = arange<UInt32>(n) % 16u;
  bin = select(arange<UInt32>(n) == 777u, UInt32(16), bin);
  set_log_level(LogLevel::Error);
  scatter_add(bins, UInt32(1), bin);
  eval(bins);
  set_log_level(LogLevel::Warn);
  for (uint32_t b = 0; b < 16; ++b) EXPECT_EQ(bins.read(b), b == 777 % 16 ? n / 16 - 1 : n / 16) << b;
}

TEST_F(Eval, CheckedModeOnTheInterpreterToo) {
  set_flag(Flag::Checks, true);
  set_flag(Flag::Interpreter, true);
  Float g = gather(Float{1.f, 2.f}, UInt32{7});
  EXPECT_THROW(eval(g), IndexError);
  set_flag(Flag::Interpreter, false);
  set_flag(Flag::Checks, false);
}

TEST_F(Eval, SameShapeHitsTheCacheWhateverTheSizeAndLabel) {
  auto program = [](size_t n, const char* name) {
    Float x = iota(n);
    set_label(x, name);
    Float y = x * x + 1.f;
    eval(y);
    return y;
  };
  program(100, "first");
  size_t compiles = cache_stats().compiles;
  program(5000, "second");
  EXPECT_EQ(cache_stats().compiles, compiles);
  auto h = kernel_history();
  ASSERT_EQ(h.size(), 2u);
  EXPECT_EQ(h[0].hash, h[1].hash);
  EXPECT_EQ(h[1].source, KernelSource::Memory);
}

TEST_F(Eval, ScheduleDefersToTheNextEval) {
  Float a = iota(4) + 1.f, b = iota(4) * 3.f;
  schedule(a);
  eval(b);
  EXPECT_EQ(kernel_history().size(), 1u);  // a and b share one kernel
  EXPECT_EQ(a.read(3), 4.f);
}

TEST_F(Eval, EmptyArrays) {
  Float x = iota(0);
  Float y = x * 2.f;
  eval(y);
  EXPECT_EQ(y.size(), 0u);
  EXPECT_EQ(sum(y).item(), 0.f);
  EXPECT_EQ(compress(y > 0.f).size(), 0u);
}

TEST_F(Eval, HorizontalOperations) {
  std::mt19937 rng(7);
  std::vector<int32_t> values(100003);
  for (auto& v : values) v = int32_t(rng() % 2001) - 1000;
  Int32 x = Int32::from(values);
  EXPECT_EQ(sum(x).item(), std::accumulate(values.begin(), values.end(), 0));
  EXPECT_EQ(min(x).item(), *std::min_element(values.begin(), values.end()));
  EXPECT_EQ(max(x).item(), *std::max_element(values.begin(), values.end()));
  EXPECT_EQ(prod(Int64{2, -3, 7}).item(), -42);
  EXPECT_EQ(dot(Float{1.f, 2.f}, Float{3.f, 4.f}).item(), 11.f);
  EXPECT_TRUE(any(x > 999).item());
  EXPECT_FALSE(all(x > 0).item());
  EXPECT_TRUE(all(x >= -1000).item());

  std::vector<int32_t> inclusive(values.size()), exclusive(values.size());
  std::inclusive_scan(values.begin(), values.end(), inclusive.begin());
  std::exclusive_scan(values.begin(), values.end(), exclusive.begin(), 0);
  EXPECT_EQ(prefix_sum(x).to_vector(), inclusive);
  EXPECT_EQ(prefix_sum(x, true).to_vector(), exclusive);

  std::vector<uint32_t> positive;
  for (size_t i = 0; i < values.size(); ++i)
    if (values[i] > 0) positive.push_back(uint32_t(i));
  EXPECT_EQ(compress(x > 0).to_vector(), positive);

  Int32 blocks = block_sum(x, 1000);
  ASSERT_EQ(blocks.size(), 101u);
  EXPECT_EQ(blocks.read(100), std::accumulate(values.begin() + 100000, values.end(), 0));
  EXPECT_EQ(blocks.read(3), std::accumulate(values.begin() + 3000, values.begin() + 4000, 0));
}

TEST_F(Eval, FloatSumIsIndependentOfThreads) {
  Float x = sqrt(iota(1 << 20));
  float first = sum(x).item();
  for (int i = 0; i < 3; ++i) EXPECT_EQ(sum(x).item(), first);
}

TEST_F(Eval, SumEachReducesManyArraysInOnePass) {
  // Sizes around the reduction block (2^14), a pending one, an empty one, both precisions.
  std::vector<size_t> sizes = {0, 1, 7, 16384, 16385, 100000};
  std::vector<Float> floats;
  std::vector<detail::Index> indices;
  for (size_t n : sizes) {
    floats.push_back(cast<float>(arange<UInt32>(n) % 97u) * 0.25f);  // pending, exact in float
    indices.push_back(floats.back().index());
  }
  Float64 wide = Float64::from(std::vector<double>{0.1, 0.2, 0.3});
  indices.push_back(wide.index());
  std::vector<detail::Index> totals = detail::sum_each(indices.data(), indices.size());
  ASSERT_EQ(totals.size(), indices.size());
  for (size_t k = 0; k < sizes.size(); ++k) {
    Float total = Float::steal(totals[k]);
    double expected = 0;
    for (size_t i = 0; i < sizes[k]; ++i) expected += double(i % 97) * 0.25;
    EXPECT_EQ(total.size(), 1u);
    EXPECT_EQ(double(total.item()), expected) << sizes[k] << " lanes";
  }
  EXPECT_NEAR(Float64::steal(totals.back()).item(), 0.6, 1e-15);
  Int32 integers = Int32::from(std::vector<int32_t>{1, 2});
  detail::Index bad = integers.index();
  EXPECT_THROW(detail::sum_each(&bad, 1), TypeError);
}

TEST_F(Eval, InterpreterAndJitAgreeOnAFusedProgram) {
  auto program = [] {
    Float x = linspace<Float>(-3.f, 3.f, 1001);
    Float y = select(x > 0.f, sqrt(x), -x * x) + floor(x * 3.f);
    return y.to_vector();
  };
  bool before = flag(Flag::Interpreter);
  set_flag(Flag::Interpreter, true);
  auto reference = program();
  set_flag(Flag::Interpreter, false);
  auto jit = program();
  set_flag(Flag::Interpreter, before);
  EXPECT_EQ(jit, reference);
}

TEST_F(Eval, IrListingIsDeterministicAndLabelled) {
  Float x = Float{1.f, 2.f};
  set_label(x, "x");
  Float y = x + 1.f;
  set_label(y, "y");
  std::string listing = ir_listing();
  EXPECT_NE(listing.find("# x"), std::string::npos) << listing;
  EXPECT_NE(listing.find("Add"), std::string::npos) << listing;
  EXPECT_EQ(listing, ir_listing());
}

TEST_F(Eval, MemoryStatsAndBlockReuse) {
  flush_memory_cache();
  size_t base = memory_stats().current_bytes;
  reset_peak_memory();
  {
    Float big = empty<Float>(1 << 20);  // 4 MiB
    EXPECT_EQ(memory_stats().current_bytes, base + (4u << 20));
    EXPECT_GE(memory_stats().peak_bytes, base + (4u << 20));
  }
  EXPECT_EQ(memory_stats().current_bytes, base);
  EXPECT_EQ(memory_stats().cached_bytes, 4u << 20);  // freed, kept for reuse
  {
    Float again = arange<Float>(1 << 20) * 2.f;
    eval(again);  // the output reuses the cached block
    EXPECT_EQ(memory_stats().cached_bytes, 0u);
    EXPECT_EQ(again.read(5), 10.f);
  }
  flush_memory_cache();
  EXPECT_EQ(memory_stats().cached_bytes, 0u);
  EXPECT_GE(memory_stats().peak_bytes, base + (4u << 20));
  reset_peak_memory();
  EXPECT_EQ(memory_stats().peak_bytes, memory_stats().current_bytes);
}

// A smaller request reuses a freed block up to twice its size (a shrinking wavefront
// reuses the bounce before's blocks), and a request of less than half a block does not.
TEST_F(Eval, SmallerRequestsReuseBlocksUpToTwiceTheirSize) {
  flush_memory_cache();
  size_t base = memory_stats().current_bytes;
  { Float big = empty<Float>(2 << 20); }  // 8 MiB, freed into the cache
  ASSERT_EQ(memory_stats().cached_bytes, 8u << 20);
  {
    Float quarter = empty<Float>(1 << 19);  // 2 MiB: too small for the 8 MiB block
    EXPECT_EQ(memory_stats().cached_bytes, 8u << 20);
    Float smaller = empty<Float>(5 << 18);  // 5 MiB: served by the 8 MiB block
    EXPECT_EQ(memory_stats().cached_bytes, 0u);
    EXPECT_EQ(memory_stats().current_bytes, base + (10u << 20));  // counted at the block's size
  }
  EXPECT_EQ(memory_stats().current_bytes, base);
  EXPECT_EQ(memory_stats().cached_bytes, 10u << 20);
  flush_memory_cache();
}

// Launches writing more than the caches hold store full packets with non-temporal stores
// (and the tail with masked ones): every lane, every output type, and the tail must land.
TEST_F(Eval, LargeLaunchesStreamTheirOutputsExactly) {
  const size_t n = (size_t(1) << 22) + 5;  // 16 MiB per f32 output: above the streaming threshold
  UInt32 i = arange<UInt32>(n);
  Float f = cast<float>(i) * 0.5f;
  Float64 d = cast<double>(i) + 0.25;
  Bool odd = (i & 1u) == 1u;
  UInt32 u = i * 3u;
  eval(f, d, odd, u);
  EXPECT_EQ(kernel_history().back().outputs, 4u);
  for (size_t k : {size_t(0), size_t(1), size_t(15), size_t(16), n / 2, n - 6, n - 5, n - 1}) {
    EXPECT_EQ(f.read(k), float(k) * 0.5f) << k;
    EXPECT_EQ(d.read(k), double(k) + 0.25) << k;
    EXPECT_EQ(odd.read(k), k % 2 == 1) << k;
    EXPECT_EQ(u.read(k), uint32_t(k) * 3u) << k;
  }
  const float* fp = f.data();
  const uint32_t* up = u.data();
  size_t wrong = 0;
  for (size_t k = 0; k < n; ++k) wrong += fp[k] != float(k) * 0.5f || up[k] != uint32_t(k) * 3u;
  EXPECT_EQ(wrong, 0u);
}

// KILN_LOG=debug is the lowering log: each compiled kernel's form after scheduling (with
// its literal slots), after generalization (with its parameters), and the backend's code.
TEST_F(Eval, DebugLogShowsEachLoweringStage) {
  set_log_level(LogLevel::Debug);
  set_flag(Flag::DiskCache, false);  // compiled here, not loaded
  Float x = arange<Float>(100);
  testing::internal::CaptureStderr();
  Float first = fma(x, Float(3.25f), Float(17.5f)) * x;  // a shape no other test compiles
  eval(first);
  Float second = fma(x, Float(4.25f), Float(17.5f)) * x;  // the second variant generalizes slot 0
  eval(second);
  std::string err = testing::internal::GetCapturedStderr();
  set_log_level(LogLevel::Warn);
  set_flag(Flag::DiskCache, true);
  size_t scheduled = err.find("after scheduling:\nkernel inputs=0 outputs=1");
  size_t slot = err.find("Literal 0x40500000 slot0", scheduled);  // 3.25f, as a slot of the scheduled form
  size_t baked = err.find("after generalization (0 of 2 literal slots are parameters)", scheduled);
  size_t rendered = err.find("LLVM IR as lowered:\n", baked);
  size_t optimized = err.find("LLVM IR after optimization:\n", rendered);
  size_t launch = err.find("launch ", optimized);
  size_t generic = err.find("after generalization (1 of 2 literal slots are parameters)", launch);
  size_t param = err.find("Param #0", generic);
  for (size_t position : {scheduled, slot, baked, rendered, optimized, launch, generic, param})
    EXPECT_NE(position, std::string::npos) << err;
  EXPECT_LT(slot, baked);
}

TEST_F(Eval, KernelSourceLowersForEitherDeviceWithoutLaunching) {
  Float x = arange<Float>(100);
  Float y = sqrt(x * 2.0f + 1.0f);
  kernel_history(true);
  std::string ptx = kernel_source("cuda", y), cpu = kernel_source("cpu", y);
  EXPECT_TRUE(kernel_history().empty());
  EXPECT_EQ(ptx.rfind("// kernel 1 of 1: 100 lanes", 0), 0u) << ptx;
  EXPECT_NE(ptx.find(".visible .entry kiln_source_0("), std::string::npos) << ptx;
  EXPECT_NE(cpu.find("define void @kiln_source_0("), std::string::npos) << cpu;
  EXPECT_THROW(kernel_source("gpu", y), ValueError);
  EXPECT_FLOAT_EQ(y.read(99), std::sqrt(199.0f));
}
