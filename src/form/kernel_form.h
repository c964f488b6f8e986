// The canonical kernel form: what the scheduler hands to a backend. It holds only what
// determines the generated code (ops, types, operand positions, which inputs broadcast,
// literal values), never node indices, labels or the array size, so it identifies a
// kernel (src/cache/kernel_key.h hashes it). Backends render it as a pure function.
#pragma once

#include <kiln/detail/op_table.h>
#include <kiln/types.h>

#include <cstdint>
#include <source_location>
#include <string>
#include <vector>

namespace kiln::detail {

/// Version of the kernel form and of the code backends generate from it. Bump it when
/// either changes meaning: it is part of every kernel's identity.
inline constexpr uint32_t kKernelFormatVersion = 6;

inline constexpr uint32_t kNoSlot = UINT32_MAX;

/// One statement. The fields leave no padding, so a statement array hashes as bytes
/// (statements are zero-initialized).
struct KernelStatement {
  Op op;
  VarType type;
  /// Type of the first value operand (the source type of Cast/Bitcast/comparisons).
  VarType operand_type;
  /// Data inputs only: the buffer has one element and is read once per kernel.
  bool broadcast;
  /// Data: the buffer slot read; Scatter/ScatterInc: unused (target is operand 0).
  uint32_t input_slot;
  /// Literal bits (Literal; 0 in a scheduled form, see KernelForm::slots), parameter
  /// number (Param, in a compiled form), ReduceOp (Scatter), the function's id (HostCall)
  /// or the output number (HostResult).
  uint64_t literal;
  /// Positions of the operand statements (earlier in the list); 0 when unused.
  uint32_t operands[4];
  /// Buffer slot the statement's value is stored to, or kNoSlot.
  uint32_t output_slot;
  uint32_t unused;
};
static_assert(sizeof(KernelStatement) == 40, "KernelStatement must have no padding");

/// The literal slots of a scheduled form. Each is a Literal statement whose `literal` is
/// 0, so the statements alone are the kernel's shape; the values live here.
struct LiteralSlots {
  std::vector<uint32_t> positions;  ///< statement of each slot, in order
  std::vector<uint64_t> values;     ///< value bits of each slot
  std::vector<uint8_t> opaque;      ///< 1: from opaque(), always a launch parameter
};

struct KernelForm {
  std::vector<KernelStatement> statements;
  LiteralSlots slots;         ///< scheduled forms only (compiled forms hold values in place)
  uint32_t input_count = 0;   ///< buffer slots [0, input_count) are inputs
  uint32_t output_count = 0;  ///< then output slots
  /// Checked mode: out-of-range gather/scatter lanes are reported (and raise after the
  /// launch). Either way they read 0 or write nothing.
  bool checks = false;
  uint32_t packet_width = 1;  ///< SIMD lanes the backend generates

  /// Number of operations that do work (everything but leaves), for logs and tests.
  size_t op_count() const;
};

/// The HostArg statements of the HostCall at position `call`, in argument order (operand 1
/// of each is the argument's value). They come before the call, the first one earliest.
std::vector<uint32_t> host_argument_cells(const KernelForm& form, uint32_t call);

/// Per statement: whether its value is read — an operand other than a gather's or
/// scatter's buffer, or an output. (An input only indexed into is never loaded.)
std::vector<bool> values_read(const KernelForm& form);

/// Diagnostics of one statement as traced: never part of a kernel's identity.
struct StatementNote {
  uint32_t position = 0;
  std::source_location created;  ///< the user code that created it (line 0: unknown)
  std::string label, labelled_at;
  bool derived = false;  ///< a folded literal: `label` lists the labels it was computed from
};
/// Notes of the statements that have any, in increasing position.
using StatementNotes = std::vector<StatementNote>;
const StatementNote* find_note(const StatementNotes& notes, uint32_t position);
/// "label `x`, created at file:line" (what is known of it; empty when nothing is).
std::string describe_origin(const StatementNote* note);

/// Deterministic text listing of a kernel form (for logs and golden tests), with the
/// label and creation site of each statement that has notes.
std::string print_kernel_form(const KernelForm& form, const StatementNotes& notes = {});

}  // namespace kiln::detail
