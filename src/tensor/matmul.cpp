// Matrix products through OpenBLAS on the CPU and cuBLAS on a GPU (the device's GEMM,
// backend.h), and their derivatives. A product is an evaluation boundary: its operands
// are evaluated, GEMM writes the result into a buffer from Kiln's allocator on the
// operands' device (so memory_stats() counts it; transposes are GEMM flags, so no other
// workspace is allocated by Kiln), and kernel_history() shows the call. The
// derivatives are products again, recorded as a CustomCallbacks hub:
//   C = op(A) op(B):   dC = op(dA) op(B) + op(A) op(dB)            (forward)
//                      d op(A) = G op(B)^T,  d op(B) = op(A)^T G    (reverse)
#include <kiln/detail/tensor_api.h>
#include <kiln/errors.h>

#include "backend/backend.h"
#include "eval/history.h"
#include "ir/node.h"
#include "memory/allocator.h"
#include "util/stopwatch.h"

#include <cblas.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <cstring>
#include <string>

namespace kiln::detail {
namespace {

std::string dims(size_t rows, size_t cols) { return std::to_string(rows) + "×" + std::to_string(cols); }

/// One row-major GEMM on the calling thread: C = op(A)·op(B) + beta·C.
void gemm(bool ta, bool tb, size_t m, size_t n, size_t k, const float* a, size_t lda, const float* b, size_t ldb,
          float beta, float* c) {
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, int(m), int(n), int(k),
              1.0f, a, int(lda), b, int(ldb), beta, c, int(n));
}
void gemm(bool ta, bool tb, size_t m, size_t n, size_t k, const double* a, size_t lda, const double* b, size_t ldb,
          double beta, double* c) {
  cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, int(m), int(n), int(k),
              1.0, a, int(lda), b, int(ldb), beta, c, int(n));
}

/// Rows per task of a split product.
constexpr size_t kRowsPerTask = 4096;

/// C = op(A)·op(B) on Kiln's thread pool, each task one single-threaded GEMM: the products
/// of networks are tall and skinny (many rows, a few dozen columns), which OpenBLAS's own
/// threading parallelizes poorly. Without transpose_a, tasks take blocks of C's rows;
/// with it (weight gradients: a sum over the long axis), blocks of that axis, whose
/// partial products (in a Kiln buffer, counted by memory_stats()) are then added up.
template <typename T> void product(const T* a, const T* b, T* c, size_t m, size_t k, size_t n, bool ta, bool tb) {
  static const bool single = [] {
    openblas_set_num_threads(1);
    return true;
  }();
  (void)single;
  size_t lda = std::max<size_t>(1, ta ? m : k), ldb = std::max<size_t>(1, tb ? k : n);
  size_t along = ta ? k : m;
  size_t tasks =
      std::min<size_t>((along + kRowsPerTask - 1) / kRowsPerTask, size_t(tbb::this_task_arena::max_concurrency()));
  if (tasks <= 1) return gemm(ta, tb, m, n, k, a, lda, b, ldb, T(0), c);
  size_t per = (along + tasks - 1) / tasks;
  if (!ta) {
    tbb::parallel_for(size_t(0), tasks, [&](size_t t) {
      size_t first = t * per, rows = std::min(per, m - std::min(m, first));
      if (rows) gemm(false, tb, rows, n, k, a + first * lda, lda, b, ldb, T(0), c + first * n);
    });
    return;
  }
  std::shared_ptr<Buffer> partial = Buffer::allocate((tasks - 1) * m * n * sizeof(T), Device::CPU);
  T* parts = static_cast<T*>(partial->data());
  tbb::parallel_for(size_t(0), tasks, [&](size_t t) {
    size_t first = t * per, count = std::min(per, k - std::min(k, first));
    T* out = t == 0 ? c : parts + (t - 1) * m * n;
    if (!count) return std::fill(out, out + m * n, T(0));
    gemm(true, tb, m, n, count, a + first * lda, lda, b + (tb ? first : first * ldb), ldb, T(0), out);
  });
  for (size_t t = 1; t < tasks; ++t)
    for (size_t i = 0; i < m * n; ++i) c[i] += parts[(t - 1) * m * n + i];
}

/// C = op(A) · op(B) of the given type into `c`: zeros when k is 0, nothing when C is empty.
void fill_product(VarType type, const void* a, const void* b, void* c, size_t m, size_t k, size_t n, bool ta, bool tb) {
  if (m * n == 0) return;
  if (k == 0) {
    std::memset(c, 0, m * n * type_size(type));
  } else if (type == VarType::Float32) {
    product(static_cast<const float*>(a), static_cast<const float*>(b), static_cast<float*>(c), m, k, n, ta, tb);
  } else {
    product(static_cast<const double*>(a), static_cast<const double*>(b), static_cast<double*>(c), m, k, n, ta, tb);
  }
}

/// The product of plain (derivative-free) values, as a new reference.
Index multiply(Index a, Index b, size_t m, size_t k, size_t n, bool transpose_a, bool transpose_b) {
  VarType type = node_type(a);
  if (type != node_type(b))
    throw TypeError(std::string("kiln: matmul(): the operands are of types ") + type_name(type) + " and " +
                    type_name(node_type(b)) + "; both must be Float or both Float64 (cast one of them)");
  if (type != VarType::Float32 && type != VarType::Float64)
    throw TypeError(std::string("kiln: matmul(): the operands are of type ") + type_name(type) +
                    "; matrix products need Float or Float64");
  if (node_size(a) != m * k || node_size(b) != k * n)
    throw SizeError("kiln: matmul(): a " + dims(transpose_a ? k : m, transpose_a ? m : k) + " matrix needs " +
                    std::to_string(m * k) + " elements and a " + dims(transpose_b ? n : k, transpose_b ? k : n) +
                    " one " + std::to_string(k * n) + ", but the arrays hold " + std::to_string(node_size(a)) +
                    " and " + std::to_string(node_size(b)) + "; check the shapes");
  Device device = node_device(a);
  if (device != node_device(b))
    throw ValueError(std::string("kiln: matmul(): the operands are on two devices, ") + device_name(device) + " and " +
                     device_name(node_device(b)) + "; move one with .to()");
  DeviceGemm device_gemm = gemm_for(device);
  data(a);
  data(b);
  StateLock lock(state().mutex);
  Stopwatch stopwatch;
  Index c;
  if (device_gemm) {  // on the device; zeros when k is 0 (GEMM's beta = 0)
    std::shared_ptr<Buffer> out = Buffer::allocate(m * n * type_size(type), device);
    if (m * n)
      device_gemm(type, transpose_a, transpose_b, m, n, k, node(a).buffer->data(), node(b).buffer->data(), out->data());
    c = make_data(type, m * n, std::move(out));
  } else {  // on the host (the emulated device's memory through copies)
    HostView pa(*node(a).buffer), pb(*node(b).buffer);
    StagedBuffer pc(m * n * type_size(type), device);
    fill_product(type, pa.data(), pb.data(), pc.data(), m, k, n, transpose_a, transpose_b);
    c = make_data(type, m * n, pc.finish());
  }
  double ms = stopwatch.elapsed_ms();
  std::string library = device_gemm ? "cuBLAS" : "OpenBLAS";
  std::string what = std::string("matmul ") + dims(m, k) + (transpose_a ? "ᵀ" : "") + " · " + dims(k, n) +
                     (transpose_b ? "ᵀ" : "") + " (" + library + " " + (type == VarType::Float32 ? "sgemm" : "dgemm") +
                     "): operands evaluated, result materialized";
  record_library_call(what, m * n, 2, device, ms);
  return c;
}

class MatmulDerivative final : public CustomCallbacks {
 public:
  /// `need_a`/`need_b`: whether that operand carries derivatives (only those get adjoints).
  MatmulDerivative(Index a, Index b, size_t m, size_t k, size_t n, bool ta, bool tb, bool need_a, bool need_b)
      : a_(a), b_(b), m_(m), k_(k), n_(n), ta_(ta), tb_(tb), need_a_(need_a), need_b_(need_b) {
    inc_ref(a_);
    inc_ref(b_);
  }
  ~MatmulDerivative() override {
    dec_ref(a_);
    dec_ref(b_);
  }
  std::string name() const override { return "matmul"; }

  std::vector<Index> forward_grads(const std::vector<Index>& g) override {
    Index left = g[0] ? multiply(g[0], b_, m_, k_, n_, ta_, tb_) : 0;
    Index right = g[1] ? multiply(a_, g[1], m_, k_, n_, ta_, tb_) : 0;
    if (left && right) {
      Index sum = trace(Op::Add, left, right);
      dec_ref(left);
      dec_ref(right);
      return {sum};
    }
    return {left ? left : right};
  }

  std::vector<Index> backward_grads(const std::vector<Index>& g) override {
    Index grad = g[0];
    if (!grad) return {0, 0};
    // d op(A) = G op(B)^T (m×k) and d op(B) = op(A)^T G (k×n), stored as A and B are.
    Index da = !need_a_ ? 0
               : ta_    ? multiply(b_, grad, k_, n_, m_, tb_, true)
                        : multiply(grad, b_, m_, n_, k_, false, !tb_);
    Index db = !need_b_ ? 0
               : tb_    ? multiply(grad, a_, n_, m_, k_, true, ta_)
                        : multiply(a_, grad, k_, m_, n_, !ta_, false);
    return {da, db};
  }

 private:
  Index a_, b_;
  size_t m_, k_, n_;
  bool ta_, tb_, need_a_, need_b_;
};

}  // namespace

AdValue matmul(AdOperand a, AdOperand b, size_t m, size_t k, size_t n, bool transpose_a, bool transpose_b) {
  Index c = multiply(a.value, b.value, m, k, n, transpose_a, transpose_b);
  if ((!a.ad && !b.ad) || !ad_recording()) return {c, 0};
  auto op =
      std::make_shared<MatmulDerivative>(a.value, b.value, m, k, n, transpose_a, transpose_b, a.ad != 0, b.ad != 0);
  std::vector<AdValue> connected = ad_custom(op, {a, b}, {c});
  dec_ref(c);
  return connected[0];
}

}  // namespace kiln::detail
