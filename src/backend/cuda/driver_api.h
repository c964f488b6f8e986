// The CUDA driver API as Kiln uses it, declared by Kiln itself (no cuda.h: neither the
// build nor a user needs the CUDA toolkit) and loaded at run time with dlopen. The one
// list below names every function with the symbol the driver exports (the `_v2` ones
// where the driver has them) and its parameters; tests/cpp/test_cuda_driver_abi.cpp checks
// it against the toolkit's cuda.h where one is installed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace kiln::detail::cuda {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = uint64_t;
struct Context;
struct Module;
struct Function;
struct Stream;
struct LinkState;
using CUcontext = Context*;
using CUmodule = Module*;
using CUfunction = Function*;
using CUstream = Stream*;
using CUlinkState = LinkState*;
/// size_t (*)(int block_size): dynamic shared memory per block (the occupancy API).
using CUoccupancyB2DSize = size_t (*)(int);

// Result codes Kiln tells apart (cuGetErrorName names any other).
constexpr CUresult CUDA_SUCCESS = 0;
constexpr CUresult CUDA_ERROR_OUT_OF_MEMORY = 2;
constexpr CUresult CUDA_ERROR_NOT_INITIALIZED = 3;
constexpr CUresult CUDA_ERROR_STUB_LIBRARY = 34;
constexpr CUresult CUDA_ERROR_NO_DEVICE = 100;
constexpr CUresult CUDA_ERROR_INVALID_PTX = 218;
constexpr CUresult CUDA_ERROR_UNSUPPORTED_PTX_VERSION = 222;
// Device attributes.
constexpr int CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1;
constexpr int CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76;
// Options of cuModuleLoadDataEx and cuLinkCreate.
constexpr int CU_JIT_INFO_LOG_BUFFER = 3;
constexpr int CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4;
constexpr int CU_JIT_ERROR_LOG_BUFFER = 5;
constexpr int CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6;
constexpr int CU_JIT_OPTIMIZATION_LEVEL = 7;
// Inputs of cuLinkAddData.
constexpr int CU_JIT_INPUT_PTX = 1;
// Flags of cuStreamCreate.
constexpr unsigned CU_STREAM_NON_BLOCKING = 1;

/// X(field, exported symbol, parameter types): every driver function Kiln calls. Each
/// returns CUresult.
#define KILN_CUDA_DRIVER_FUNCTIONS(X)                                                                        \
  X(cuInit, cuInit, (unsigned))                                                                              \
  X(cuDriverGetVersion, cuDriverGetVersion, (int*))                                                          \
  X(cuGetErrorName, cuGetErrorName, (CUresult, const char**))                                                \
  X(cuGetErrorString, cuGetErrorString, (CUresult, const char**))                                            \
  X(cuDeviceGetCount, cuDeviceGetCount, (int*))                                                              \
  X(cuDeviceGet, cuDeviceGet, (CUdevice*, int))                                                              \
  X(cuDeviceGetName, cuDeviceGetName, (char*, int, CUdevice))                                                \
  X(cuDeviceGetAttribute, cuDeviceGetAttribute, (int*, int, CUdevice))                                       \
  X(cuDeviceTotalMem, cuDeviceTotalMem_v2, (size_t*, CUdevice))                                              \
  X(cuDevicePrimaryCtxRetain, cuDevicePrimaryCtxRetain, (CUcontext*, CUdevice))                              \
  X(cuDevicePrimaryCtxRelease, cuDevicePrimaryCtxRelease_v2, (CUdevice))                                     \
  X(cuCtxSetCurrent, cuCtxSetCurrent, (CUcontext))                                                           \
  X(cuCtxSynchronize, cuCtxSynchronize, ())                                                                  \
  X(cuStreamCreate, cuStreamCreate, (CUstream*, unsigned))                                                   \
  X(cuStreamDestroy, cuStreamDestroy_v2, (CUstream))                                                         \
  X(cuStreamSynchronize, cuStreamSynchronize, (CUstream))                                                    \
  X(cuStreamQuery, cuStreamQuery, (CUstream))                                                                \
  X(cuMemGetInfo, cuMemGetInfo_v2, (size_t*, size_t*))                                                       \
  X(cuMemAlloc, cuMemAlloc_v2, (CUdeviceptr*, size_t))                                                       \
  X(cuMemFree, cuMemFree_v2, (CUdeviceptr))                                                                  \
  X(cuMemAllocHost, cuMemAllocHost_v2, (void**, size_t))                                                     \
  X(cuMemFreeHost, cuMemFreeHost, (void*))                                                                   \
  X(cuMemcpyHtoDAsync, cuMemcpyHtoDAsync_v2, (CUdeviceptr, const void*, size_t, CUstream))                   \
  X(cuMemcpyDtoHAsync, cuMemcpyDtoHAsync_v2, (void*, CUdeviceptr, size_t, CUstream))                         \
  X(cuMemcpyDtoDAsync, cuMemcpyDtoDAsync_v2, (CUdeviceptr, CUdeviceptr, size_t, CUstream))                   \
  X(cuMemsetD8Async, cuMemsetD8Async, (CUdeviceptr, unsigned char, size_t, CUstream))                        \
  X(cuModuleLoadDataEx, cuModuleLoadDataEx, (CUmodule*, const void*, unsigned, int*, void**))                \
  X(cuModuleUnload, cuModuleUnload, (CUmodule))                                                              \
  X(cuModuleGetFunction, cuModuleGetFunction, (CUfunction*, CUmodule, const char*))                          \
  X(cuLinkCreate, cuLinkCreate_v2, (unsigned, int*, void**, CUlinkState*))                                   \
  X(cuLinkAddData, cuLinkAddData_v2, (CUlinkState, int, void*, size_t, const char*, unsigned, int*, void**)) \
  X(cuLinkComplete, cuLinkComplete, (CUlinkState, void**, size_t*))                                          \
  X(cuLinkDestroy, cuLinkDestroy, (CUlinkState))                                                             \
  X(cuOccupancyMaxPotentialBlockSize, cuOccupancyMaxPotentialBlockSize,                                      \
    (int*, int*, CUfunction, CUoccupancyB2DSize, size_t, int))                                               \
  X(cuLaunchKernel, cuLaunchKernel,                                                                          \
    (CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream, void**, void**))

/// The driver's functions, resolved from libcuda.
struct DriverApi {
#define KILN_CUDA_FIELD(field, symbol, parameters) CUresult(*field) parameters = nullptr;
  KILN_CUDA_DRIVER_FUNCTIONS(KILN_CUDA_FIELD)
#undef KILN_CUDA_FIELD
};

/// A loaded driver and its first device, or why there is none.
struct Driver {
  DriverApi api;
  void* library = nullptr;  ///< the dlopen handle (kept open for the process)
  int version = 0;          ///< cuDriverGetVersion: 13000 for CUDA 13.0
  int devices = 0;
  /// Empty when CUDA is available; otherwise one sentence saying why not ("no NVIDIA
  /// driver: libcuda.so.1 could not be loaded (...)").
  std::string unavailable;
};

/// Loads the driver from `path` (dlopen's search for "libcuda.so.1" when empty), resolves
/// every function of the list, initializes it and counts devices. Never throws: a missing
/// library, a missing symbol, a failed cuInit or no device gives `unavailable` its sentence.
Driver load_driver(const std::string& path);

/// The process's driver: loaded once, from $KILN_LIBCUDA_PATH or libcuda.so.1.
const Driver& driver();

/// "cuMemAlloc_v2(1.50 GiB): CUDA_ERROR_OUT_OF_MEMORY (out of memory)": `call` with the
/// driver's name and description of `result`.
std::string describe_failure(const DriverApi& api, const std::string& call, CUresult result);

}  // namespace kiln::detail::cuda
