// cuBLAS as Kiln uses it (matrix products on the GPU), declared by Kiln itself and loaded
// at run time with dlopen, like the driver: $KILN_LIBCUBLAS_PATH, else libcublas.so.13 or
// .12. tests/cpp/test_cuda_driver_abi.cpp checks the list against the toolkit's
// cublas_api.h where one is installed.
#pragma once

#include "backend/cuda/driver_api.h"

#include <string>

namespace kiln::detail::cuda {

using cublasStatus_t = int;
struct CublasContext;
using cublasHandle_t = CublasContext*;
using cublasOperation_t = int;
constexpr cublasStatus_t CUBLAS_STATUS_SUCCESS = 0;
constexpr cublasOperation_t CUBLAS_OP_N = 0;
constexpr cublasOperation_t CUBLAS_OP_T = 1;

/// X(field, exported symbol, parameter types): every cuBLAS function Kiln calls. Each
/// returns cublasStatus_t.
#define KILN_CUBLAS_FUNCTIONS(X)                                                                             \
  X(cublasCreate, cublasCreate_v2, (cublasHandle_t*))                                                        \
  X(cublasSetStream, cublasSetStream_v2, (cublasHandle_t, CUstream))                                         \
  X(cublasSgemm, cublasSgemm_v2,                                                                             \
    (cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const float*, const float*, int,   \
     const float*, int, const float*, float*, int))                                                          \
  X(cublasDgemm, cublasDgemm_v2,                                                                             \
    (cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const double*, const double*, int, \
     const double*, int, const double*, double*, int))

/// cuBLAS's functions, resolved from the library.
struct CublasApi {
#define KILN_CUBLAS_FIELD(field, symbol, parameters) cublasStatus_t(*field) parameters = nullptr;
  KILN_CUBLAS_FUNCTIONS(KILN_CUBLAS_FIELD)
#undef KILN_CUBLAS_FIELD
};

/// A loaded cuBLAS, or why there is none.
struct Cublas {
  CublasApi api;
  void* library = nullptr;  ///< the dlopen handle (kept open for the process)
  std::string path;         ///< what was loaded
  /// Empty when cuBLAS is available; otherwise one sentence saying why not.
  std::string unavailable;
};

/// Loads cuBLAS from `path` (libcublas.so.13, then .12, when empty) and resolves every
/// function of the list. Never throws.
Cublas load_cublas(const std::string& path);

}  // namespace kiln::detail::cuda
