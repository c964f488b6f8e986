// Static facts about ops, generated from the op table: names, arities, flags.
#pragma once

#include <kiln/detail/op_table.h>

#include <cstdint>

namespace kiln::detail {

inline constexpr uint32_t kPure = 1, kSideEffect = 2;

struct OpInfo {
  const char* name;
  int arity;
  uint32_t flags;
};

inline constexpr OpInfo kOpInfo[] = {
#define KILN_OP_INFO(name, arity, flags) {#name, arity, flags},
    KILN_OP_TABLE(KILN_OP_INFO)
#undef KILN_OP_INFO
};
inline constexpr int kOpCount = sizeof(kOpInfo) / sizeof(kOpInfo[0]);

constexpr const OpInfo& op_info(Op op) { return kOpInfo[static_cast<int>(op)]; }
constexpr const char* op_name(Op op) { return op_info(op).name; }
constexpr int op_arity(Op op) { return op_info(op).arity; }
constexpr bool op_is_pure(Op op) { return op_info(op).flags & kPure; }
constexpr bool op_is_side_effect(Op op) { return op_info(op).flags & kSideEffect; }
/// True for ops whose first operand is a buffer they access (not a value they read).
constexpr bool op_has_buffer_operand(Op op) {
  return op == Op::Gather || op == Op::Scatter || op == Op::ScatterInc;
}
constexpr bool op_is_comparison(Op op) { return op >= Op::Eq && op <= Op::Ge; }

}  // namespace kiln::detail
