// A stand-in for libcublas.so for the GPU's matrix products against the fake driver
// (test_cuda_runtime.cpp): reference column-major GEMM on the fake's "device memory",
// which is host memory, with BLAS's rules (beta = 0: C is not read). It checks that a
// handle was created and given a stream before any product, and counts the products.
#include "backend/cuda/cublas.h"

#include <cstddef>

using namespace kiln::detail::cuda;

namespace {

struct Handle {
  CUstream stream = nullptr;
  bool stream_set = false;
};
int products = 0;
constexpr cublasStatus_t kNotInitialized = 1;
constexpr cublasStatus_t kInvalidValue = 7;

/// C = alpha op(A) op(B) + beta C, all column-major.
template <typename T> cublasStatus_t gemm(cublasHandle_t handle, cublasOperation_t op_a, cublasOperation_t op_b, int m,
                                          int n, int k, const T* alpha, const T* a, int lda, const T* b, int ldb,
                                          const T* beta, T* c, int ldc) {
  if (!handle || !reinterpret_cast<Handle*>(handle)->stream_set) return kNotInitialized;
  bool ta = op_a == CUBLAS_OP_T, tb = op_b == CUBLAS_OP_T;
  if (m < 0 || n < 0 || k < 0 || ldc < (m > 1 ? m : 1) || lda < ((ta ? k : m) > 1 ? (ta ? k : m) : 1) ||
      ldb < ((tb ? n : k) > 1 ? (tb ? n : k) : 1))
    return kInvalidValue;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      T acc = 0;
      for (int p = 0; p < k; ++p)
        acc += (ta ? a[p + size_t(i) * lda] : a[i + size_t(p) * lda]) *
               (tb ? b[j + size_t(p) * ldb] : b[p + size_t(j) * ldb]);
      T& out = c[i + size_t(j) * ldc];
      out = *alpha * acc + (*beta == T(0) ? T(0) : *beta * out);
    }
  ++products;
  return CUBLAS_STATUS_SUCCESS;
}

}  // namespace

extern "C" {

cublasStatus_t cublasCreate_v2(cublasHandle_t* handle) {
  *handle = reinterpret_cast<cublasHandle_t>(new Handle());
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasSetStream_v2(cublasHandle_t handle, CUstream stream) {
  auto* h = reinterpret_cast<Handle*>(handle);
  h->stream = stream;
  h->stream_set = true;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasSgemm_v2(cublasHandle_t handle, cublasOperation_t op_a, cublasOperation_t op_b, int m, int n,
                              int k, const float* alpha, const float* a, int lda, const float* b, int ldb,
                              const float* beta, float* c, int ldc) {
  return gemm(handle, op_a, op_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
cublasStatus_t cublasDgemm_v2(cublasHandle_t handle, cublasOperation_t op_a, cublasOperation_t op_b, int m, int n,
                              int k, const double* alpha, const double* a, int lda, const double* b, int ldb,
                              const double* beta, double* c, int ldc) {
  return gemm(handle, op_a, op_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
/// Products computed so far (the tests' check that cuBLAS, not the host, multiplied).
int fake_cublas_products() { return products; }

}  // extern "C"
