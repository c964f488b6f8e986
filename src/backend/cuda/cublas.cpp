// Loading cuBLAS with dlopen (each way it can fail one sentence), and the GPU's matrix
// products through it on Kiln's stream: a row-major product is computed as the
// column-major product of the transposes.
#include "backend/cuda/cublas.h"

#include <kiln/errors.h>

#include "backend/cuda/cuda_device.h"
#include "util/env.h"

#include <dlfcn.h>

#include <algorithm>
#include <climits>
#include <vector>

namespace kiln::detail::cuda {

Cublas load_cublas(const std::string& path) {
  Cublas c;
  std::vector<std::string> candidates =
      path.empty() ? std::vector<std::string>{"libcublas.so.13", "libcublas.so.12"} : std::vector<std::string>{path};
  std::string errors;
  for (const std::string& name : candidates) {
    if ((c.library = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL))) {
      c.path = name;
      break;
    }
    const char* error = dlerror();
    errors += (errors.empty() ? "" : "; ") + std::string(error ? error : name);
  }
  if (!c.library) {
    c.unavailable = "cuBLAS could not be loaded (" + errors +
                    "); install it (the CUDA toolkit, or pip's nvidia-cublas) or set KILN_LIBCUBLAS_PATH to its "
                    "libcublas.so";
    return c;
  }
#define KILN_CUBLAS_RESOLVE(field, symbol, parameters)                              \
  c.api.field = reinterpret_cast<decltype(c.api.field)>(dlsym(c.library, #symbol)); \
  if (!c.api.field) {                                                               \
    c.unavailable = "the cuBLAS in " + c.path +                                     \
                    " lacks " #symbol                                               \
                    ", which Kiln calls: it is not cuBLAS 12 or "                   \
                    "later; update it or set KILN_LIBCUBLAS_PATH";                  \
    return c;                                                                       \
  }
  KILN_CUBLAS_FUNCTIONS(KILN_CUBLAS_RESOLVE)
#undef KILN_CUBLAS_RESOLVE
  return c;
}

namespace {

const Cublas& cublas() {
  static const Cublas* instance = new Cublas(load_cublas(env_text("KILN_LIBCUBLAS_PATH").value_or("")));
  return *instance;
}

void check(cublasStatus_t status, const char* call) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw InternalError(std::string("kiln: ") + call + " failed with cuBLAS status " + std::to_string(status));
}

/// cuBLAS's handle, on the stream of every Kiln copy and launch.
cublasHandle_t handle() {
  static cublasHandle_t instance = [] {
    cublasHandle_t h = nullptr;
    check(cublas().api.cublasCreate(&h), "cublasCreate");
    check(cublas().api.cublasSetStream(h, CudaDevice::get().stream()), "cublasSetStream");
    return h;
  }();
  return instance;
}

/// A dimension or leading dimension as cuBLAS takes it (at least 1).
int dimension(size_t value) {
  if (value > size_t(INT_MAX))
    throw SizeError("kiln: matmul() on cuda: a dimension of " + std::to_string(value) +
                    " is past cuBLAS's limit of 2^31 - 1");
  return int(std::max<size_t>(value, 1));
}

void gemm(VarType type, bool ta, bool tb, size_t m, size_t n, size_t k, const void* a, const void* b, void* c) {
  CudaDevice::get().make_current();
  // C (m×n, row-major) read column-major is Cᵀ = op(B)ᵀ·op(A)ᵀ, and each row-major
  // operand read column-major is already transposed: so B comes first, with its own flag.
  int rows = dimension(n), cols = dimension(m), inner = k ? dimension(k) : 0;
  int lda = dimension(ta ? m : k), ldb = dimension(tb ? k : n);
  cublasOperation_t op_b = tb ? CUBLAS_OP_T : CUBLAS_OP_N, op_a = ta ? CUBLAS_OP_T : CUBLAS_OP_N;
  if (type == VarType::Float32) {
    float one = 1, zero = 0;
    check(cublas().api.cublasSgemm(handle(), op_b, op_a, rows, cols, inner, &one, static_cast<const float*>(b), ldb,
                                   static_cast<const float*>(a), lda, &zero, static_cast<float*>(c), rows),
          "cublasSgemm");
  } else {
    double one = 1, zero = 0;
    check(cublas().api.cublasDgemm(handle(), op_b, op_a, rows, cols, inner, &one, static_cast<const double*>(b), ldb,
                                   static_cast<const double*>(a), lda, &zero, static_cast<double*>(c), rows),
          "cublasDgemm");
  }
}

}  // namespace
}  // namespace kiln::detail::cuda

namespace kiln::detail {

DeviceGemm cuda_gemm() {
  const cuda::Cublas& library = cuda::cublas();
  if (!library.unavailable.empty())
    throw ValueError("kiln: matmul() on cuda needs cuBLAS: " + library.unavailable +
                     "; or multiply on the CPU (operands .to(\"cpu\"))");
  return &cuda::gemm;
}

}  // namespace kiln::detail
