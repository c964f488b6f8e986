// Loading the CUDA driver with dlopen: every function of KILN_CUDA_DRIVER_FUNCTIONS
// resolved by its exported name, cuInit, the device count; each way it can fail turned
// into one sentence, never an exception or a crash.
#include "backend/cuda/driver_api.h"

#include "util/env.h"

#include <kiln/runtime.h>

#include <dlfcn.h>

namespace kiln::detail::cuda {
namespace {

std::string result_name(const DriverApi& api, CUresult result) {
  const char* name = nullptr;
  if (api.cuGetErrorName && api.cuGetErrorName(result, &name) == CUDA_SUCCESS && name) return name;
  return "CUresult " + std::to_string(result);
}

}  // namespace

std::string describe_failure(const DriverApi& api, const std::string& call, CUresult result) {
  std::string text = call + ": " + result_name(api, result);
  const char* description = nullptr;
  if (api.cuGetErrorString && api.cuGetErrorString(result, &description) == CUDA_SUCCESS && description)
    text += " (" + std::string(description) + ")";
  return text;
}

Driver load_driver(const std::string& path) {
  Driver d;
  const std::string library = path.empty() ? "libcuda.so.1" : path;
  d.library = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!d.library) {
    const char* error = dlerror();
    d.unavailable = "no NVIDIA driver: " + library + " could not be loaded (" + (error ? error : "unknown error") +
                    "); install the NVIDIA driver, or set KILN_LIBCUDA_PATH to its libcuda.so.1";
    return d;
  }
#define KILN_CUDA_RESOLVE(field, symbol, parameters)                                                        \
  d.api.field = reinterpret_cast<decltype(d.api.field)>(dlsym(d.library, #symbol));                         \
  if (!d.api.field) {                                                                                       \
    d.unavailable = "the NVIDIA driver in " + library +                                                     \
                    " lacks " #symbol                                                                       \
                    ", which Kiln calls: it is older than CUDA 12 or not a CUDA driver; update the driver"; \
    return d;                                                                                               \
  }
  KILN_CUDA_DRIVER_FUNCTIONS(KILN_CUDA_RESOLVE)
#undef KILN_CUDA_RESOLVE
  if (CUresult r = d.api.cuInit(0); r == CUDA_ERROR_STUB_LIBRARY) {
    d.unavailable = library + " is the CUDA toolkit's stub for linking, not an NVIDIA driver";
    return d;
  } else if (r != CUDA_SUCCESS) {
    d.unavailable = "the NVIDIA driver did not initialize: " + describe_failure(d.api, "cuInit", r);
    return d;
  }
  d.api.cuDriverGetVersion(&d.version);
  if (CUresult r = d.api.cuDeviceGetCount(&d.devices); r != CUDA_SUCCESS) {
    d.unavailable = "the NVIDIA driver cannot count its devices: " + describe_failure(d.api, "cuDeviceGetCount", r);
    return d;
  }
  if (d.devices == 0) d.unavailable = "the NVIDIA driver reports no CUDA device";
  return d;
}

const Driver& driver() {
  static const Driver* instance = new Driver(load_driver(env_text("KILN_LIBCUDA_PATH").value_or("")));
  return *instance;
}

}  // namespace kiln::detail::cuda

namespace kiln {

std::string cuda_status() {
  const detail::cuda::Driver& d = detail::cuda::driver();
  if (!d.unavailable.empty()) return d.unavailable;
  return "NVIDIA driver " + std::to_string(d.version / 1000) + "." + std::to_string(d.version % 1000 / 10) + ", " +
         std::to_string(d.devices) + (d.devices == 1 ? " device" : " devices");
}

}  // namespace kiln
