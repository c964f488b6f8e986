// The CUDA runtime against the fake driver (fake_libcuda.cpp, whose device memory is host
// memory and whose kernels do not run): arrays on the CUDA device, copies both ways, the
// device rule for operations, the caching pool and its out-of-memory path, kernels lowered
// for NVPTX, compiled to PTX by LLVM, handed to the driver and launched, and a failed
// launch. Run by ctest with KILN_LIBCUDA_PATH pointing at the fake.
#include <kiln/kiln.h>

#include <gtest/gtest.h>

#include <dlfcn.h>
#include <cstdlib>
#include <new>
#include <string>
#include <vector>

using namespace kiln;

namespace {

/// Kernels the fake driver has launched.
int fake_launches() {
  void* library = dlopen(std::getenv("KILN_LIBCUDA_PATH"), RTLD_NOW | RTLD_NOLOAD);  // Kiln's copy
  auto* count = library ? reinterpret_cast<int (*)()>(dlsym(library, "fake_cuda_launches")) : nullptr;
  return count ? count() : -1;
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

}  // namespace

namespace {

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
