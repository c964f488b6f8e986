// Static facts about ops, generated from the op table: names, arities, type rules, flags.
#pragma once

#include <kiln/detail/op_table.h>

#include <cstdint>

namespace kiln::detail {

/// The table's flags (see op_table.h).
inline constexpr uint32_t kPure = 1, kSideEffect = 2, kBufferOperand = 4;

/// How trace() checks an op's operand types and types its result (the table's type rule).
enum class TypeRule : uint8_t {
  Own,       ///< not checked by trace(): the code that creates the op types it (leaves, memory, loops)
  Numeric,   ///< operands of one integer or float type (not Bool); the result has it
  Bitwise,   ///< operands of one Bool or integer type; the result has it
  Integer,   ///< operands of one integer type; the result has it
  Float,     ///< operands of one float type; the result has it
  Equality,  ///< operands of one type, any; the result is Bool
  Ordering,  ///< operands of one type, not Bool; the result is Bool
  Cast,      ///< any operand; the result is the requested type
  Bitcast,   ///< the result is the requested type, as wide as the operand; neither is Bool
  Select,    ///< (Bool mask, two operands of one type); the result has their type
};

struct OpInfo {
  const char* name;
  int arity;
  TypeRule type_rule;
  uint32_t flags;
};

inline constexpr OpInfo kOpInfo[] = {
#define KILN_OP_INFO(name, arity, type_rule, flags) {#name, arity, TypeRule::type_rule, flags},
    KILN_OP_TABLE(KILN_OP_INFO)
#undef KILN_OP_INFO
};
inline constexpr int kOpCount = sizeof(kOpInfo) / sizeof(kOpInfo[0]);

constexpr const OpInfo& op_info(Op op) { return kOpInfo[static_cast<int>(op)]; }
constexpr const char* op_name(Op op) { return op_info(op).name; }
constexpr int op_arity(Op op) { return op_info(op).arity; }
constexpr TypeRule op_type_rule(Op op) { return op_info(op).type_rule; }
constexpr bool op_is_pure(Op op) { return op_info(op).flags & kPure; }
constexpr bool op_is_side_effect(Op op) { return op_info(op).flags & kSideEffect; }
/// True for ops whose first operand is a buffer they access (not a value they read).
constexpr bool op_has_buffer_operand(Op op) { return op_info(op).flags & kBufferOperand; }
/// True for ops that compare two values of one type into a Bool.
constexpr bool op_is_comparison(Op op) {
  return op_type_rule(op) == TypeRule::Equality || op_type_rule(op) == TypeRule::Ordering;
}

}  // namespace kiln::detail
