// Matrix products on the CPU through OpenBLAS, and their derivatives. A product is an
// evaluation boundary: its operands are evaluated, GEMM writes the result into a buffer
// from Kiln's allocator (so memory_stats() counts it; transposes are GEMM flags, so no
// other workspace is allocated by Kiln), and kernel_history() shows the call. The
// derivatives are products again, recorded as a CustomCallbacks hub:
//   C = op(A) op(B):   dC = op(dA) op(B) + op(A) op(dB)            (forward)
//                      d op(A) = G op(B)^T,  d op(B) = op(A)^T G    (reverse)
#include <kiln/detail/tensor_api.h>
#include <kiln/errors.h>

#include "eval/history.h"
#include "ir/node.h"

#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>

namespace kiln::detail {
namespace {

std::string dims(size_t rows, size_t cols) { return std::to_string(rows) + "×" + std::to_string(cols); }

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
  const void* pa = data(a);
  const void* pb = data(b);
  Index c = make_empty(type, m * n);
  void* pc = const_cast<void*>(data(c));  // a fresh buffer that only `c` references
  auto start = std::chrono::steady_clock::now();
  CBLAS_TRANSPOSE ta = transpose_a ? CblasTrans : CblasNoTrans, tb = transpose_b ? CblasTrans : CblasNoTrans;
  int lda = int(std::max<size_t>(1, transpose_a ? m : k)), ldb = int(std::max<size_t>(1, transpose_b ? k : n));
  if (m * n == 0) {
  } else if (k == 0) {
    std::memset(pc, 0, m * n * type_size(type));
  } else if (type == VarType::Float32) {
    cblas_sgemm(CblasRowMajor, ta, tb, int(m), int(n), int(k), 1.0f, static_cast<const float*>(pa), lda,
                static_cast<const float*>(pb), ldb, 0.0f, static_cast<float*>(pc), int(n));
  } else {
    cblas_dgemm(CblasRowMajor, ta, tb, int(m), int(n), int(k), 1.0, static_cast<const double*>(pa), lda,
                static_cast<const double*>(pb), ldb, 0.0, static_cast<double*>(pc), int(n));
  }
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::string what = std::string("matmul ") + dims(m, k) + (transpose_a ? "ᵀ" : "") + " · " + dims(k, n) +
                     (transpose_b ? "ᵀ" : "") + " (OpenBLAS " + (type == VarType::Float32 ? "sgemm" : "dgemm") +
                     "): operands evaluated, result materialized";
  StateLock lock(state().mutex);
  record_library_call(what, m * n, 2, ms);
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
  auto op = std::make_shared<MatmulDerivative>(a.value, b.value, m, k, n, transpose_a, transpose_b, a.ad != 0, b.ad != 0);
  std::vector<AdValue> connected = ad_custom(op, {a, b}, {c});
  dec_ref(c);
  return connected[0];
}

}  // namespace kiln::detail
