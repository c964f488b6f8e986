// The one table of IR operations. Every switch over ops in Kiln is generated from or
// checked against this list, so adding an op is one line here plus its scalar semantics
// (src/ir/scalar_ops.h), its LLVM lowering (src/backend/llvm/llvm_render.cpp) and tests.
//
// X(name, arity, flags)
//   arity: number of operands (0-4)
//   flags: kPure (value-numbered, foldable), kSideEffect (runs in program order, never merged)
// Ops without kPure are never merged by value numbering.
#pragma once

#include <cstdint>

#define KILN_OP_TABLE(X)                                                                   \
  X(Literal, 0, kPure)     /* constant broadcast to the node's size; bits in `literal` */  \
  X(Param, 0, kPure)       /* a scalar passed at launch, never baked into code (opaque) */  \
  X(Data, 0, 0)            /* an evaluated buffer */                                        \
  X(Counter, 0, kPure)     /* lane index 0..size-1 (UInt32) */                              \
  X(Neg, 1, kPure)                                                                          \
  X(Not, 1, kPure)                                                                          \
  X(Abs, 1, kPure)                                                                          \
  X(Sqrt, 1, kPure)                                                                         \
  X(Rcp, 1, kPure)                                                                          \
  X(Rsqrt, 1, kPure)                                                                        \
  X(Floor, 1, kPure)                                                                        \
  X(Ceil, 1, kPure)                                                                         \
  X(Round, 1, kPure)       /* round half to even */                                         \
  X(Trunc, 1, kPure)                                                                        \
  X(Cast, 1, kPure)        /* value conversion to the node's type */                        \
  X(Bitcast, 1, kPure)     /* reinterpretation of the bits, same width */                   \
  X(Add, 2, kPure)                                                                          \
  X(Sub, 2, kPure)                                                                          \
  X(Mul, 2, kPure)                                                                          \
  X(Div, 2, kPure)                                                                          \
  X(Mod, 2, kPure)         /* integers: C's %; floats: C's fmod (sign of the dividend) */  \
  X(Min, 2, kPure)                                                                          \
  X(Max, 2, kPure)                                                                          \
  X(And, 2, kPure)                                                                          \
  X(Or, 2, kPure)                                                                           \
  X(Xor, 2, kPure)                                                                          \
  X(Shl, 2, kPure)                                                                          \
  X(Shr, 2, kPure)         /* arithmetic for signed types, logical for unsigned */          \
  X(Eq, 2, kPure)                                                                           \
  X(Ne, 2, kPure)                                                                           \
  X(Lt, 2, kPure)                                                                           \
  X(Le, 2, kPure)                                                                           \
  X(Gt, 2, kPure)                                                                           \
  X(Ge, 2, kPure)                                                                           \
  X(Fma, 3, kPure)                                                                          \
  X(Select, 3, kPure)      /* (mask, if_true, if_false) */                                  \
  X(Gather, 3, 0)          /* (source Data, index UInt32, mask); reads memory */            \
  X(Scatter, 4, kSideEffect)    /* (target, value, index, mask); `literal` = ReduceOp */    \
  X(ScatterInc, 3, kSideEffect) /* (target UInt32, index, mask) -> old value */              \
  /* Symbolic loops. In the trace: */                                                        \
  X(LoopPhi, 1, 0)         /* (init) a state variable inside the body */                    \
  X(LoopCond, 1, 0)        /* (cond) lanes active in this iteration: still running && cond */ \
  X(Loop, 0, kSideEffect)  /* the whole loop; `literal` = its region (src/ir/region.h) */   \
  X(LoopResult, 1, 0)      /* (loop) state variable `literal` after the loop */             \
  /* In kernel forms only (operands are statement positions): */                            \
  X(LoopBegin, 0, 0)       /* then LoopPhis, condition, LoopCond, body; `literal` 1: runs once */ \
  X(LoopUpdate, 2, 0)      /* (phi, new value): the phi's value in the next iteration */    \
  X(LoopEnd, 1, 0)         /* (LoopBegin): back to the condition */

namespace kiln {

/// IR operation codes, generated from KILN_OP_TABLE.
enum class Op : uint8_t {
#define KILN_OP_ENUM(name, arity, flags) name,
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
