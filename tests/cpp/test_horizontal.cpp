// Horizontal operations (sum, prod, min, max, any, all, prefix_sum, compress, block_sum)
// over sizes around the block and pass boundaries of both implementations, against the
// standard library. On the CPU they are host loops; on the emulated CUDA device (ctest
// cuda_emulated) they are kernels on the device, and each result is also compared with
// the CPU's host loops in the same process.
#include <kiln/kiln.h>

#include <gtest/gtest.h>

#include "ir/verify.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>

using namespace kiln;

namespace {
class Horizontal : public ::testing::Test {
 protected:
  void TearDown() override { EXPECT_EQ(detail::verify_ir(), ""); }
};

/// Sizes at the edges of one lane per pass (32), of recursion in scans, of the host's
/// 2^14 blocks, and past the most lanes a pass uses (2^18 lanes of 32).
const std::vector<size_t> kSizes = {0, 1, 2, 31, 32, 33, 63, 64, 65, 1023, 1024, 1025, 16385, 100003};
constexpr size_t kLarge = (size_t(1) << 23) + 4099;

std::vector<int32_t> random_ints(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<int32_t> values(n);
  for (auto& v : values) v = int32_t(rng() % 2001) - 1000;
  return values;
}

bool on_gpu_device() { return default_device() == Device::CUDA; }

/// The same operation on the CPU's host loops, for a device array (the oracle).
template <typename A, typename Op> auto on_cpu(const A& x, Op&& op) { return op(x.to(Device::CPU)); }

void expect_integer_operations(const std::vector<int32_t>& values) {
  SCOPED_TRACE("n = " + std::to_string(values.size()));
  size_t n = values.size();
  Int32 x = Int32::from(values);
  int64_t total = std::accumulate(values.begin(), values.end(), int64_t(0));
  EXPECT_EQ(sum(x).item(), int32_t(total));
  EXPECT_EQ(min(x).item(), n ? *std::min_element(values.begin(), values.end()) : INT32_MAX);
  EXPECT_EQ(max(x).item(), n ? *std::max_element(values.begin(), values.end()) : INT32_MIN);
  uint32_t product = 1;
  for (int32_t v : values) product *= uint32_t(v | 1);  // wraps: any order gives the same
  EXPECT_EQ(prod(cast<uint32_t>(x | 1)).item(), product);
  EXPECT_EQ(any(x > 999).item(), std::any_of(values.begin(), values.end(), [](int32_t v) { return v > 999; }));
  EXPECT_EQ(all(x > -1000).item(), std::all_of(values.begin(), values.end(), [](int32_t v) { return v > -1000; }));

  std::vector<int32_t> inclusive(n), exclusive(n);
  std::inclusive_scan(values.begin(), values.end(), inclusive.begin());
  std::exclusive_scan(values.begin(), values.end(), exclusive.begin(), 0);
  EXPECT_EQ(prefix_sum(x).to_vector(), inclusive);
  EXPECT_EQ(prefix_sum(x, true).to_vector(), exclusive);

  std::vector<uint32_t> positive;
  for (size_t i = 0; i < n; ++i)
    if (values[i] > 0) positive.push_back(uint32_t(i));
  EXPECT_EQ(compress(x > 0).to_vector(), positive);

  for (size_t block : {size_t(1), size_t(7), size_t(1000), n + 5}) {
    std::vector<int32_t> blocks;
    for (size_t i = 0; i < n; i += block)
      blocks.push_back(std::accumulate(values.begin() + i, values.begin() + std::min(n, i + block), 0));
    EXPECT_EQ(block_sum(x, block).to_vector(), blocks) << "block " << block;
  }
  if (on_gpu_device()) {  // the device kernels against the CPU's host loops
    EXPECT_EQ(prefix_sum(x).to_vector(), on_cpu(x, [](const Int32& c) { return prefix_sum(c); }).to_vector());
    EXPECT_EQ(compress(x < 0).to_vector(), on_cpu(x, [](const Int32& c) { return compress(c < 0); }).to_vector());
  }
}
}  // namespace

TEST_F(Horizontal, IntegerOperationsAtEverySize) {
  for (size_t n : kSizes) expect_integer_operations(random_ints(n, uint32_t(n)));
}

TEST_F(Horizontal, IntegerOperationsPastTheLanesOfOnePass) { expect_integer_operations(random_ints(kLarge, 11)); }

TEST_F(Horizontal, MasksWithOneSetLane) {
  for (size_t n : {size_t(1), size_t(33), size_t(1025), size_t(100003)}) {
    for (size_t set : {size_t(0), n / 2, n - 1}) {
      Bool mask = arange<UInt32>(n) == uint32_t(set);
      EXPECT_TRUE(any(mask).item());
      EXPECT_EQ(all(mask).item(), n == 1);
      EXPECT_EQ(compress(mask).to_vector(), std::vector<uint32_t>{uint32_t(set)});
      EXPECT_EQ(compress(!mask).size(), n - 1);
    }
  }
}

TEST_F(Horizontal, FloatsExactWhereEveryOrderIsExact) {
  // Integers below 2^24 in float: every partial sum is exact, so every order agrees.
  for (size_t n : kSizes) {
    SCOPED_TRACE("n = " + std::to_string(n));
    std::vector<int32_t> ints = random_ints(n, 3);
    std::vector<float> values(ints.begin(), ints.end());
    Float x = Float::from(values);
    float expected = float(std::accumulate(ints.begin(), ints.end(), int64_t(0)));
    EXPECT_EQ(sum(x).item(), expected);
    std::vector<float> scan(n);
    std::inclusive_scan(values.begin(), values.end(), scan.begin());
    EXPECT_EQ(prefix_sum(x).to_vector(), scan);
    std::vector<double> wide(ints.begin(), ints.end()), wide_scan(n);
    std::exclusive_scan(wide.begin(), wide.end(), wide_scan.begin(), 0.0);
    EXPECT_EQ(prefix_sum(Float64::from(wide), true).to_vector(), wide_scan);
  }
}

TEST_F(Horizontal, MinAndMaxIgnoreNaNAndEmptyGivesTheIdentity) {
  float nan = std::numeric_limits<float>::quiet_NaN();
  for (size_t n : {size_t(2), size_t(33), size_t(1025), size_t(100003)}) {
    std::vector<float> values(n, nan);
    values[n / 3] = -2.5f;
    values[n - 1] = 7.f;
    Float x = Float::from(values);
    EXPECT_EQ(min(x).item(), -2.5f);
    EXPECT_EQ(max(x).item(), 7.f);
  }
  Float empty = Float::from(std::vector<float>{});
  EXPECT_EQ(min(empty).item(), std::numeric_limits<float>::infinity());
  EXPECT_EQ(max(empty).item(), -std::numeric_limits<float>::infinity());
  EXPECT_EQ(sum(empty).item(), 0.f);
  EXPECT_EQ(prod(empty).item(), 1.f);
  EXPECT_FALSE(any(empty > 0.f).item());
  EXPECT_TRUE(all(empty > 0.f).item());
  EXPECT_EQ(prefix_sum(empty).size(), 0u);
  EXPECT_EQ(block_sum(empty, 4).size(), 0u);
}

TEST_F(Horizontal, FloatSumsAreCloseAndDeterministic) {
  for (size_t n : {size_t(1000), size_t(100003), kLarge}) {
    Float x = sqrt(arange<Float>(n)) * 0.001f;
    double exact = 0, magnitude = 0;
    for (size_t i = 0; i < n; ++i) {
      double v = double(float(std::sqrt(float(i)) * 0.001f));
      exact += v;
      magnitude += std::fabs(v);
    }
    float first = sum(x).item();
    EXPECT_NEAR(first, exact, magnitude * 1e-6 * std::log2(double(n))) << n;
    for (int k = 0; k < 2; ++k) EXPECT_EQ(sum(x).item(), first);
    if (on_gpu_device())
      EXPECT_NEAR(first, on_cpu(x, [](const Float& c) { return sum(c); }).item(),
                  magnitude * 1e-6 * std::log2(double(n)));
  }
}

TEST_F(Horizontal, InsideALoopBodyOverAnArrayFromOutside) {
  // A loop body may reduce an evaluated array from outside the loop: the reduction's own
  // kernels are traced at the top level.
  Int32 outer = Int32::from(random_ints(5000, 5));
  int32_t expected = sum(outer).item();
  for (ControlMode mode : {ControlMode::Symbolic, ControlMode::Evaluated}) {
    UInt32 i = arange<UInt32>(4) * 0u;
    Int32 acc = Int32::from(std::vector<int32_t>(4, 0));
    auto [i_out, acc_out] = while_loop(
        std::tuple(i, acc), [](const UInt32& i, const Int32&) { return i < 2u; },
        [&](const UInt32& i, const Int32& acc) { return std::tuple(i + 1u, acc + sum(outer)); }, mode);
    EXPECT_EQ(acc_out.to_vector(), std::vector<int32_t>(4, 2 * expected)) << int(mode);
  }
}

TEST_F(Horizontal, OnAGpuDeviceTheyAreKernelsThere) {
  if (!on_gpu_device())
    GTEST_SKIP() << "the default device is the CPU (run by ctest cuda_emulated on the emulated GPU)";
  Int32 x = Int32::from(random_ints(100003, 9));
  eval(x);
  kernel_history(true);
  Int32 scan = prefix_sum(x);
  UInt32 kept = compress(x > 0);
  Int32 total = sum(x);
  auto history = kernel_history();
  ASSERT_GE(history.size(), 3u);
  for (const KernelLaunch& launch : history) EXPECT_EQ(launch.device, Device::CUDA);
  EXPECT_EQ(scan.device(), Device::CUDA);
  EXPECT_EQ(kept.device(), Device::CUDA);
  EXPECT_EQ(total.device(), Device::CUDA);
  // Their kernels take sizes at launch: another size compiles nothing new.
  size_t compiles = cache_stats().compiles;
  Int32 y = Int32::from(random_ints(77777, 10));
  eval(y);
  (void)prefix_sum(y).to_vector(), (void)compress(y > 0).to_vector(), (void)sum(y).item();
  EXPECT_EQ(cache_stats().compiles, compiles);
}
