// Reductions with Dr.Jit's names beyond those of array.h: count() of a mask, mean(), and
// block_reduce() (Add, Mul, Min, Max, And, Or over consecutive groups of lanes).
#pragma once

#include <kiln/array.h>

#include <limits>
#include <string>

namespace kiln {

/// Number of true lanes (a size-1 UInt32).
inline UInt32 count(const Bool& mask) { return sum(cast<uint32_t>(mask)); }

/// Average of all elements (a size-1 array; NaN for an empty array, as NumPy).
template <typename T> Array<T> mean(const Array<T>& a) {
  static_assert(std::is_floating_point_v<T>, "mean() needs a Float or Float64 array; cast<float>() integers first");
  return sum(a) / T(a.size());
}

namespace detail {
/// The value that leaves every other unchanged under `op` (the start of each block).
template <typename T> T reduce_identity(ReduceOp op) {
  using L = std::numeric_limits<T>;
  switch (op) {
    case ReduceOp::None:
    case ReduceOp::Add:
    case ReduceOp::Or: return T(0);
    case ReduceOp::Mul: return T(1);
    case ReduceOp::Min: return L::has_infinity ? L::infinity() : L::max();
    case ReduceOp::Max: return L::has_infinity ? -L::infinity() : L::lowest();
    case ReduceOp::And:
      if constexpr (std::is_integral_v<T>)
        return T(~T(0));
      else
        return T(0);  // rejected by scatter_reduce: integers only
  }
  return T(0);
}
/// Combines neighbours pairwise within each block (log2(block) gathers): differentiable
/// through the rules of Mul, Min, Max, Gather and Select.
template <typename T> Array<T> block_reduce_tree(ReduceOp op, Array<T> a, size_t block) {
  size_t n = a.size();
  UInt32 lane = arange<UInt32>(n);
  UInt32 offset = lane % uint32_t(block);
  for (size_t step = 1; step < block; step *= 2) {
    Bool combines = (offset % uint32_t(2 * step) == 0u) & (offset + uint32_t(step) < uint32_t(block)) &
                    (lane + uint32_t(step) < uint32_t(n));
    Array<T> partner = gather(a, lane + uint32_t(step), combines);
    Array<T> combined = op == ReduceOp::Mul ? a * partner : op == ReduceOp::Min ? min(a, partner) : max(a, partner);
    a = select(combines, combined, a);
  }
  return gather(a, arange<UInt32>((n + block - 1) / block) * uint32_t(block));
}
}  // namespace detail

/// `op` over consecutive groups of `block` lanes (the last group may be short): one lane
/// per group. Add, Mul, Min and Max are differentiable (Min/Max: the gradient goes to one
/// extreme lane of a tie); And and Or take integer and Bool arrays (per block: all, any).
template <typename T> Array<T> block_reduce(ReduceOp op, const Array<T>& a, size_t block) {
  if (block == 0) throw ValueError("kiln: block_reduce(): the block size must be positive");
  if (op == ReduceOp::None)
    throw ValueError("kiln: block_reduce(): ReduceOp.None does not reduce; use Add, Mul, Min, Max, And or Or");
  if constexpr (std::is_same_v<T, bool>) {
    if (op != ReduceOp::And && op != ReduceOp::Or)
      throw TypeError(std::string("kiln: block_reduce(") + reduce_op_name(op) +
                      "): Bool arrays reduce with And (all) or Or (any); cast them to an integer type to count");
    return cast<bool>(block_reduce(op, cast<uint32_t>(a), block));
  } else {
    if (op == ReduceOp::Add) return block_sum(a, block);
    bool tree = op == ReduceOp::Mul || op == ReduceOp::Min || op == ReduceOp::Max;
    if (a.ad_index() && tree) return detail::block_reduce_tree(op, a, block);
    size_t n = a.size();
    Array<T> result = full<Array<T>>(detail::reduce_identity<T>(op), (n + block - 1) / block);
    scatter_reduce(op, result, a, arange<UInt32>(n) / uint32_t(block));
    return result;
  }
}

}  // namespace kiln
