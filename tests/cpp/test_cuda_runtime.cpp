// The CUDA runtime against the fake driver (fake_libcuda.cpp, whose device memory is host
// memory and whose kernels do not run): arrays on the CUDA device, copies both ways, the
// device rule for operations, the caching pool and its out-of-memory path, kernels lowered
// for NVPTX, compiled to PTX by LLVM, handed to the driver and launched, and a failed
// launch; matrix products through a fake cuBLAS (fake_libcublas.cpp), and the error
// where cuBLAS is missing. Run by ctest with KILN_LIBCUDA_PATH (and KILN_LIBCUBLAS_PATH)
// pointing at the fakes.
#include <kiln/kiln.h>

#include <gtest/gtest.h>

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <new>
#include <string>
#include <tuple>
#include <vector>

using namespace kiln;

namespace {

/// Kernels the fake driver has launched.
int fake_launches() {
  void* library = dlopen(std::getenv("KILN_LIBCUDA_PATH"), RTLD_NOW | RTLD_NOLOAD);  // Kiln's copy
  auto* count = library ? reinterpret_cast<int (*)()>(dlsym(library, "fake_cuda_launches")) : nullptr;
  return count ? count() : -1;
}

/// Products the fake cuBLAS has computed (-1 when it is not loaded).
int fake_cublas_products() {
  const char* path = std::getenv("KILN_LIBCUBLAS_PATH");
  void* library = path ? dlopen(path, RTLD_NOW | RTLD_NOLOAD) : nullptr;
  auto* count = library ? reinterpret_cast<int (*)()>(dlsym(library, "fake_cublas_products")) : nullptr;
  return count ? count() : -1;
}

/// op(A)·op(B) through Kiln's matmul (A is m×k, or k×m stored when transposed).
template <typename T>
Array<T> product(const Array<T>& a, const Array<T>& b, size_t m, size_t k, size_t n, bool ta, bool tb) {
  return Array<T>::steal(detail::matmul(a.operand(), b.operand(), m, k, n, ta, tb).value);
}

class CudaRuntime : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(std::getenv("KILN_LIBCUDA_PATH"), nullptr) << "run through ctest (KILN_LIBCUDA_PATH names the fake)";
    ASSERT_TRUE(device_available(Device::CUDA)) << cuda_status();
    set_flag(Flag::DiskCache, false);
  }
  void TearDown() override {
    setenv("FAKE_LIBCUDA", "ok", 1);
    unsetenv("FAKE_LIBCUDA_MEMORY");
    set_device(Device::CPU);
  }
};

TEST_F(CudaRuntime, ArraysCopyToTheGpuAndBack) {
  std::vector<float> values{1.5f, -2.f, 3.25f, 7.f};
  MemoryStats before = memory_stats(Device::CUDA);
  Float on_gpu = Float::from(values.data(), values.size(), Device::CUDA);
  EXPECT_EQ(on_gpu.device(), Device::CUDA);
  EXPECT_GT(memory_stats(Device::CUDA).current_bytes, before.current_bytes);
  EXPECT_EQ(on_gpu.to_vector(), values);  // cuMemcpyDtoH of what cuMemcpyHtoD wrote
  Float back = on_gpu.to(Device::CPU);
  EXPECT_EQ(back.device(), Device::CPU);
  EXPECT_EQ(back.to_vector(), values);
  EXPECT_EQ(on_gpu.read(2), 3.25f);
  EXPECT_EQ(Float::from(values.data(), 4).to(Device::CUDA).to_vector(), values);
  EXPECT_EQ(on_gpu.to(Device::CUDA).index(), on_gpu.index()) << "already there: no copy";
}

TEST_F(CudaRuntime, OperationsOnTwoDevicesAreRefusedNamingBoth) {
  Float gpu = Float::from(std::vector<float>{1, 2, 3}.data(), 3, Device::CUDA);
  Float cpu = Float::from(std::vector<float>{1, 2, 3}.data(), 3, Device::CPU);
  try {
    Float sum = gpu + cpu;
    FAIL() << "mixed devices were accepted";
  } catch (const ValueError& e) {
    std::string message = e.what();
    EXPECT_NE(message.find("cuda and cpu"), std::string::npos) << message;
    EXPECT_NE(message.find(".to("), std::string::npos) << message;
  }
  Float scaled = gpu * 2.f;  // a literal needs no memory: it joins any device
  EXPECT_EQ(scaled.device(), Device::CUDA);
}

TEST_F(CudaRuntime, KernelsAreCompiledToPtxAndLaunchedThroughTheDriver) {
  int launched = fake_launches();
  ASSERT_GE(launched, 0) << "the fake driver's launch counter is missing";
  kernel_history(true);
  set_device(Device::CUDA);
  Float x = linspace<Float>(0.f, 1.f, 1000);
  Float y = sqrt(x) * 2.f + 1.f;
  eval(y);
  EXPECT_EQ(fake_launches(), launched + 1);
  std::vector<KernelLaunch> history = kernel_history();
  ASSERT_EQ(history.size(), 1u);
  EXPECT_EQ(history[0].device, Device::CUDA);
  EXPECT_EQ(history[0].backend, "cuda");
  EXPECT_EQ(history[0].size, 1000u);
  // The same kernel again: found in memory, launched without compiling.
  Float z = sqrt(linspace<Float>(0.f, 1.f, 1000)) * 2.f + 1.f;
  eval(z);
  EXPECT_EQ(fake_launches(), launched + 2);
  EXPECT_EQ(kernel_history().back().source, KernelSource::Memory);
}

TEST_F(CudaRuntime, AFailedLaunchSaysWhatTheDriverSaid) {
  set_device(Device::CUDA);
  setenv("FAKE_LIBCUDA", "launch_error", 1);
  Float y = linspace<Float>(0.f, 1.f, 100) + 3.f;
  try {
    eval(y);
    FAIL() << "the failed launch was not reported";
  } catch (const InternalError& e) {
    std::string message = e.what();
    EXPECT_NE(message.find("cuLaunchKernel"), std::string::npos) << message;
    EXPECT_NE(message.find("CUDA_ERROR_LAUNCH_FAILED"), std::string::npos) << message;
  }
}

TEST_F(CudaRuntime, OutOfMemoryFlushesTheCacheThenRaisesNamingTheDevice) {
  set_device(Device::CUDA);
  flush_memory_cache(Device::CUDA);
  size_t base = memory_stats(Device::CUDA).current_bytes;
  setenv("FAKE_LIBCUDA_MEMORY", std::to_string(base + (3u << 20)).c_str(), 1);  // 3 MiB more fit
  { Float cached = empty<Float>(1 << 19); }                                     // 2 MiB, freed into the pool's cache
  EXPECT_EQ(memory_stats(Device::CUDA).cached_bytes, 2u << 20);
  // 1.5 MiB does not fit next to the cached 2 MiB block (and is not served by it: less than
  // half its size): the pool returns its cache to the device and tries again.
  Float fits = empty<Float>(3 << 17);
  EXPECT_EQ(memory_stats(Device::CUDA).cached_bytes, 0u);
  try {
    Float too_big = empty<Float>(1 << 20);  // 4 MiB
    FAIL() << "an allocation beyond the device's memory succeeded";
  } catch (const std::bad_alloc& e) {
    std::string message = e.what();
    EXPECT_NE(message.find("4194304 bytes"), std::string::npos) << message;
    EXPECT_NE(message.find("cuda memory"), std::string::npos) << message;
    EXPECT_NE(message.find("MiB free of"), std::string::npos) << message;
    EXPECT_NE(message.find("Fake GPU"), std::string::npos) << message;
  }
}

TEST_F(CudaRuntime, MatrixProductsOnTheGpuGoThroughCublasAndAgreeWithTheCpu) {
  for (auto [m, k, n] : {std::tuple<size_t, size_t, size_t>{3, 4, 5}, {1, 7, 2}, {6, 1, 1}, {4, 0, 3}})
    for (bool ta : {false, true})
      for (bool tb : {false, true}) {
        SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(k) + "x" + std::to_string(n) + (ta ? " Aᵀ" : "") +
                     (tb ? " Bᵀ" : ""));
        std::vector<float> a(m * k), b(k * n);
        for (size_t i = 0; i < a.size(); ++i) a[i] = float(i % 7) * 0.5f - 1.f;
        for (size_t i = 0; i < b.size(); ++i) b[i] = float(i % 5) * 0.25f + 0.5f;
        Float a_cpu = Float::from(a.data(), a.size()), b_cpu = Float::from(b.data(), b.size());
        Float expected = product(a_cpu, b_cpu, m, k, n, ta, tb);
        int before = std::max(0, fake_cublas_products());  // -1 until Kiln loads it
        Float on_gpu = product(a_cpu.to(Device::CUDA), b_cpu.to(Device::CUDA), m, k, n, ta, tb);
        EXPECT_EQ(on_gpu.device(), Device::CUDA);
        EXPECT_EQ(on_gpu.to_vector(), expected.to_vector());  // small integers and halves: exact
        EXPECT_EQ(fake_cublas_products(), before + 1);
        std::vector<double> wide_a(a.begin(), a.end()), wide_b(b.begin(), b.end());
        Float64 wide = product(Float64::from(wide_a.data(), wide_a.size(), Device::CUDA),
                               Float64::from(wide_b.data(), wide_b.size(), Device::CUDA), m, k, n, ta, tb);
        std::vector<float> narrow = expected.to_vector();
        EXPECT_EQ(wide.to_vector(), std::vector<double>(narrow.begin(), narrow.end()));
      }
  auto history = kernel_history();
  ASSERT_FALSE(history.empty());
  EXPECT_NE(history.back().reason.find("cuBLAS"), std::string::npos) << history.back().reason;
}

}  // namespace

namespace {

// ctest cuda_runtime_without_cublas runs this with KILN_LIBCUBLAS_PATH naming no library.
TEST(CudaWithoutCublas, AProductOnTheGpuSaysCublasIsMissing) {
  const char* path = std::getenv("KILN_LIBCUBLAS_PATH");
  if (!path || std::string(path).find("missing") == std::string::npos)
    GTEST_SKIP() << "run by ctest cuda_runtime_without_cublas";
  set_flag(Flag::DiskCache, false);
  std::vector<float> values{1, 2, 3, 4};
  Float a = Float::from(values.data(), 4, Device::CUDA);
  try {
    product(a, a, 2, 2, 2, false, false);
    FAIL() << "a product without cuBLAS did not raise";
  } catch (const ValueError& e) {
    std::string message = e.what();
    EXPECT_NE(message.find("needs cuBLAS"), std::string::npos) << message;
    EXPECT_NE(message.find("KILN_LIBCUBLAS_PATH"), std::string::npos) << message;
    EXPECT_NE(message.find(".to(\"cpu\")"), std::string::npos) << message;
  }
  Float on_cpu = product(a.to(Device::CPU), a.to(Device::CPU), 2, 2, 2, false, false);
  EXPECT_EQ(on_cpu.to_vector(), (std::vector<float>{7, 10, 15, 22}));
}

// ctest cuda_runtime_old_gpu runs this with FAKE_LIBCUDA=old_gpu (compute capability 7.0).
TEST(CudaUnavailable, AGpuOlderThanTuringIsRefusedWithTheReason) {
  const char* mode = std::getenv("FAKE_LIBCUDA");
  if (!mode || std::string(mode) != "old_gpu") GTEST_SKIP() << "run by ctest cuda_runtime_old_gpu";
  EXPECT_FALSE(device_available(Device::CUDA));
  try {
    set_device(Device::CUDA);
    FAIL() << "an sm_70 GPU was accepted";
  } catch (const ValueError& e) {
    std::string message = e.what();
    EXPECT_NE(message.find("compute capability 7.0"), std::string::npos) << message;
    EXPECT_NE(message.find("7.5 (Turing) or newer"), std::string::npos) << message;
  }
  EXPECT_EQ(default_device(), Device::CPU);
  EXPECT_EQ((Float::from(std::vector<float>{1, 2}.data(), 2) + 1.f).to_vector(), (std::vector<float>{2, 3}));
}

}  // namespace
