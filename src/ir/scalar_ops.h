// Scalar semantics of every op, on raw 64-bit lane values. This one definition serves
// literal folding and the reference interpreter; the LLVM lowering must agree with it
// bit for bit (the differential fuzzer checks that). Documented edge cases:
//   - integer x / 0 == 0 and x % 0 == x; INT_MIN / -1 == INT_MIN and INT_MIN % -1 == 0
//   - shifts by >= the bit width give 0 (left, logical right) or the sign fill
//     (arithmetic right); the count is read as unsigned
//   - float -> integer casts saturate, NaN gives 0; any -> Bool is `x != 0`
//   - Round is round-half-to-even; float Min/Max ignore a NaN operand (IEEE minNum) and
//     are fully deterministic: min(a, b) = (a < b || isnan(b)) ? a : b, so min(+0, -0) = -0
//     and min(-0, +0) = +0 (the second operand wins ties)
//   - the payload of a NaN produced by arithmetic is unspecified (LLVM may return the
//     canonical quiet NaN); whether a value is NaN is always exact
#pragma once

#include <kiln/detail/op_table.h>
#include <kiln/types.h>

#include <cstdint>

namespace kiln::detail {

/// Applies `op` with result type `type` to lane values (operand type `in` for Cast,
/// Bitcast and comparisons). Memory ops are not handled here.
uint64_t eval_scalar(Op op, VarType type, VarType in, uint64_t a, uint64_t b, uint64_t c);

/// True when eval_scalar() can compute `op` (an elementwise op: pure, typed by its operands).
bool is_scalar_evaluable(Op op);

/// Atomic-free sequential version of a scatter reduction on one element.
uint64_t reduce_scalar(ReduceOp op, VarType type, uint64_t old_value, uint64_t value);

/// Loads/stores one element of `type` at `ptr` as a lane value.
uint64_t load_lane(VarType type, const void* ptr);
void store_lane(VarType type, void* ptr, uint64_t value);

}  // namespace kiln::detail
