// A Kiln kernel of a chosen size and no randomness in its structure, for the benchmarks
// that time compilation and the kernel cache against kernel size.
#pragma once

#include <kiln/kiln.h>

#include <cstddef>
#include <cstdint>

namespace bench {

/// A chain of `ops` operations mixing mul, add, max and fma over two inputs; `salt` changes
/// the literals, so each salt is a distinct kernel.
inline kiln::Float op_chain(const kiln::Float& x, const kiln::Float& y, size_t ops, uint32_t salt) {
  kiln::Float v = x;
  for (size_t k = 0; k < ops; ++k) {
    float c = 1.0f + float((salt * 7919u + uint32_t(k)) % 4096u) * 1e-5f;
    switch (k % 4) {
      case 0: v = v * c; break;
      case 1: v = v + y; break;
      case 2: v = kiln::max(v, x); break;
      case 3: v = kiln::fma(v, kiln::Float(c), y); break;
    }
  }
  return v;
}

}  // namespace bench
