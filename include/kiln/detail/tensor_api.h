// The runtime-typed matrix product that tensor.h's matmul() and the Python binding forward
// to (src/tensor/matmul.cpp).
#pragma once

#include <kiln/detail/ad_api.h>

namespace kiln::detail {

/// C = op(A)·op(B) for row-major matrices, where op(A) is m×k (A is stored k×m when
/// `transpose_a`) and op(B) is k×n. An evaluation boundary: A and B are evaluated, OpenBLAS
/// (sgemm/dgemm) writes C into a new Kiln buffer, and the call appears in kernel_history()
/// as a "library" entry. With derivatives (both modes) when A or B carries them.
AdValue matmul(AdOperand a, AdOperand b, size_t m, size_t k, size_t n, bool transpose_a = false,
               bool transpose_b = false);

}  // namespace kiln::detail
