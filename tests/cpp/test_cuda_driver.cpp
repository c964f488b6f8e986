// The CUDA driver loader's failure paths against a fake libcuda (fake_libcuda.cpp): a
// missing library, a missing symbol, cuInit failing, no device, and the sentences of a
// failed allocation and launch. None throws or crashes; each says what is wrong.
#include <kiln/runtime.h>

#include <gtest/gtest.h>

#include "backend/cuda/driver_api.h"

#include <unistd.h>

#include <cstdlib>
#include <string>

using namespace kiln::detail::cuda;

namespace {

Driver load_fake(const char* mode, const char* library = KILN_FAKE_LIBCUDA) {
  setenv("FAKE_LIBCUDA", mode, 1);
  return load_driver(library);
}

void expect_contains(const std::string& text, const std::string& part) {
  EXPECT_NE(text.find(part), std::string::npos) << "'" << part << "' not in: " << text;
}

}  // namespace

TEST(CudaDriver, AWorkingDriverIsAvailable) {
  Driver d = load_fake("ok");
  EXPECT_EQ(d.unavailable, "");
  EXPECT_EQ(d.devices, 1);
  EXPECT_EQ(d.version, 13000);
}

TEST(CudaDriver, AMissingLibraryIsNamedWithTheWayToPointAtOne) {
  Driver d = load_driver("/nonexistent/libcuda.so.1");
  expect_contains(d.unavailable, "no NVIDIA driver: /nonexistent/libcuda.so.1 could not be loaded (");
  expect_contains(d.unavailable, "KILN_LIBCUDA_PATH");
}

TEST(CudaDriver, AMissingSymbolNamesTheSymbol) {
  Driver d = load_fake("ok", KILN_FAKE_LIBCUDA_OLD);
  expect_contains(d.unavailable, "lacks cuMemAlloc_v2, which Kiln calls");
}

TEST(CudaDriver, AFailedInitializationGivesTheDriversReason) {
  Driver d = load_fake("no_device");
  EXPECT_EQ(d.unavailable,
            "the NVIDIA driver did not initialize: cuInit: CUDA_ERROR_NO_DEVICE (no CUDA-capable device is detected)");
}

TEST(CudaDriver, NoDeviceIsSaid) {
  EXPECT_EQ(load_fake("zero_devices").unavailable, "the NVIDIA driver reports no CUDA device");
}

TEST(CudaDriver, FailedCallsAreDescribedByTheDriver) {
  Driver d = load_fake("out_of_memory");
  ASSERT_EQ(d.unavailable, "");
  CUdeviceptr pointer = 0;
  CUresult r = d.api.cuMemAlloc(&pointer, size_t(3) << 29);
  EXPECT_EQ(describe_failure(d.api, "cuMemAlloc(1.50 GiB)", r),
            "cuMemAlloc(1.50 GiB): CUDA_ERROR_OUT_OF_MEMORY (out of memory)");
  d = load_fake("launch_error");
  r = d.api.cuLaunchKernel(nullptr, 1, 1, 1, 128, 1, 1, 0, nullptr, nullptr, nullptr);
  EXPECT_EQ(describe_failure(d.api, "cuLaunchKernel", r),
            "cuLaunchKernel: CUDA_ERROR_LAUNCH_FAILED (unspecified launch failure)");
  EXPECT_EQ(describe_failure(d.api, "cuCtxSynchronize", 12345), "cuCtxSynchronize: CUresult 12345");
}

TEST(CudaDriver, TheToolkitsStubLibraryIsNotADriver) {
  const char* stub = "/usr/local/cuda/lib64/stubs/libcuda.so";
  if (access(stub, R_OK) != 0) GTEST_SKIP() << "no CUDA toolkit stub at " << stub;
  Driver d = load_driver(stub);
  EXPECT_EQ(d.unavailable, std::string(stub) + " is the CUDA toolkit's stub for linking, not an NVIDIA driver");
}

TEST(CudaDriver, TheProcessStatusComesFromKILN_LIBCUDA_PATH) {
  // This process's driver() was not loaded yet: point it at the fake.
  setenv("KILN_LIBCUDA_PATH", KILN_FAKE_LIBCUDA, 1);
  setenv("FAKE_LIBCUDA", "ok", 1);
  EXPECT_EQ(kiln::cuda_status(), "NVIDIA driver 13.0, 1 device");
}
