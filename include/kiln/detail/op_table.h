// The one table of IR operations. Every switch over ops in Kiln names every op (no
// `default:`; the kiln target builds with -Werror=switch), so adding an op is one row here
// plus its scalar semantics (src/ir/scalar_ops.cpp), its lowering in each backend
// (src/backend/llvm/lower.cpp), its derivative rule (src/ad/rules.cpp) and its tests;
// the compiler names every switch that lacks it.
//
// X(name, arity, type rule, flags)
//   arity: number of operands (0-4)
//   type rule: how trace() checks the operand types and types the result (TypeRule in
//     src/ir/op_info.h): Numeric, Bitwise, Integer, Float, Equality, Ordering (comparisons),
//     Cast, Bitcast, Select; Own: typed by the code that creates it (leaves, memory, loops,
//     host calls)
//   flags: kPure (value-numbered, foldable), kSideEffect (runs in program order, never
//     merged), kBufferOperand (operand 0 is a buffer the op accesses, not a value it reads)
// Ops without kPure are never merged by value numbering.
#pragma once

#include <cstdint>

// clang-format off
#define KILN_OP_TABLE(X)                                                                                              \
  X(Literal, 0, Own, kPure)                           /* constant broadcast to the node's size; bits: `literal` */    \
  X(Param, 0, Own, kPure)                             /* a scalar passed at launch, never baked into code (opaque) */ \
  X(Data, 0, Own, 0)                                  /* an evaluated buffer */                                       \
  X(Counter, 0, Own, kPure)                           /* lane index 0..size-1 (UInt32) */                             \
  X(Neg, 1, Numeric, kPure)                                                                                           \
  X(Not, 1, Bitwise, kPure)                                                                                           \
  X(Abs, 1, Numeric, kPure)                                                                                           \
  X(Sqrt, 1, Float, kPure)                                                                                            \
  X(Rcp, 1, Float, kPure)                                                                                             \
  X(Rsqrt, 1, Float, kPure)                                                                                           \
  X(Floor, 1, Float, kPure)                                                                                           \
  X(Ceil, 1, Float, kPure)                                                                                            \
  X(Round, 1, Float, kPure)                           /* round half to even */                                        \
  X(Trunc, 1, Float, kPure)                                                                                           \
  X(Cast, 1, Cast, kPure)                             /* value conversion to the node's type */                       \
  X(Bitcast, 1, Bitcast, kPure)                       /* reinterpretation of the bits, same width */                  \
  X(Add, 2, Numeric, kPure)                                                                                           \
  X(Sub, 2, Numeric, kPure)                                                                                           \
  X(Mul, 2, Numeric, kPure)                                                                                           \
  X(Div, 2, Numeric, kPure)                                                                                           \
  X(Mod, 2, Numeric, kPure)                           /* integers: C's %; floats: C's fmod (sign of the dividend) */  \
  X(Min, 2, Numeric, kPure)                                                                                           \
  X(Max, 2, Numeric, kPure)                                                                                           \
  X(And, 2, Bitwise, kPure)                                                                                           \
  X(Or, 2, Bitwise, kPure)                                                                                            \
  X(Xor, 2, Bitwise, kPure)                                                                                           \
  X(Shl, 2, Integer, kPure)                                                                                           \
  X(Shr, 2, Integer, kPure)                           /* arithmetic for signed types, logical for unsigned */         \
  X(Eq, 2, Equality, kPure)                                                                                           \
  X(Ne, 2, Equality, kPure)                                                                                           \
  X(Lt, 2, Ordering, kPure)                                                                                           \
  X(Le, 2, Ordering, kPure)                                                                                           \
  X(Gt, 2, Ordering, kPure)                                                                                           \
  X(Ge, 2, Ordering, kPure)                                                                                           \
  X(Fma, 3, Numeric, kPure)                                                                                           \
  X(Select, 3, Select, kPure)                         /* (mask, if_true, if_false) */                                 \
  X(Gather, 3, Own, kBufferOperand)                   /* (source Data, index UInt32, mask); reads memory */           \
  X(Scatter, 4, Own, kSideEffect | kBufferOperand)    /* (target, value, index, mask); `literal` = ReduceOp */        \
  X(ScatterInc, 3, Own, kSideEffect | kBufferOperand) /* (target UInt32, index, mask) -> old value */                 \
  /* Host calls (include/kiln/host_call.h). A HostCall's value: the lanes it ran on */                                \
  X(HostArg, 2, Own, kPure)                           /* (previous HostArg or the call's fn, value) */                \
  X(HostCall, 4, Own, kPure)                          /* (fn, context, mask, last HostArg); `literal`: its id */      \
  X(HostResult, 1, Own, kPure)                        /* (HostCall) output `literal`, 0 where it did not run */       \
  /* Symbolic loops. In the trace: */                                                                                 \
  X(LoopPhi, 1, Own, 0)                               /* (init) a state variable inside the body */                   \
  X(LoopCond, 1, Own, 0)                              /* (cond) lanes active this iteration: running && cond */       \
  X(Loop, 0, Own, kSideEffect)                        /* the whole loop; `literal` = its region (src/ir/region.h) */  \
  X(LoopResult, 1, Own, 0)                            /* (loop) state variable `literal` after the loop */            \
  /* In kernel forms only (operands are statement positions): */                                                      \
  X(LoopBegin, 0, Own, 0)                             /* then phis, condition, LoopCond, body; `literal` 1: once */   \
  X(LoopUpdate, 2, Own, 0)                            /* (phi, new value): the phi's value in the next iteration */   \
  X(LoopEnd, 1, Own, 0)                               /* (LoopBegin): back to the condition */
// clang-format on

namespace kiln {

/// IR operation codes, generated from KILN_OP_TABLE.
enum class Op : uint8_t {
#define KILN_OP_ENUM(name, arity, type_rule, flags) name,
  KILN_OP_TABLE(KILN_OP_ENUM)
#undef KILN_OP_ENUM
};

/// How a scatter combines the stored value with the one already in memory (And and Or:
/// integers only).
enum class ReduceOp : uint8_t { None, Add, Min, Max, Mul, And, Or };
/// The enumerator's name, for messages.
constexpr const char* reduce_op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::None: return "None";
    case ReduceOp::Add: return "Add";
    case ReduceOp::Min: return "Min";
    case ReduceOp::Max: return "Max";
    case ReduceOp::Mul: return "Mul";
    case ReduceOp::And: return "And";
    case ReduceOp::Or: return "Or";
  }
  return "?";
}

}  // namespace kiln
