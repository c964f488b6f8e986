// Splitting a long kernel into pieces that compile separately. LLVM's instruction
// scheduler and register allocator take time superlinear in the size of a basic block
// (and in the uses of a value across it): a 20,000-op kernel took 9x as long to compile
// as a 5,000-op one. A backend renders each piece as a function of its own and calls them in
// order for every packet, so compile time grows linearly; the values one piece computes
// and a later one reads travel through a per-packet stack frame. Results are unchanged:
// every statement is computed by the same instructions, only the function it sits in
// differs.
#pragma once

#include "form/kernel_form.h"

#include <cstdint>
#include <vector>

namespace kiln::detail {

/// Which piece each statement belongs to and what crosses between pieces. Piece
/// `pieces()` (one past the last) stands for the kernel's own function, which stores the
/// outputs after calling the pieces.
struct KernelSplit {
  std::vector<uint32_t> starts;  ///< first statement of each piece, increasing, starts[0] == 0
  /// Per piece and for the kernel's function last: the statements defined in earlier
  /// pieces whose values it reads, in increasing position. Leaves (literals, parameters,
  /// inputs, the lane counter) are recomputed; others are loaded from the frame.
  std::vector<std::vector<uint32_t>> imports;
  /// Per piece: the statements it defines that a later piece reads (stored to the frame).
  std::vector<std::vector<uint32_t>> exports;
  /// Per piece: the buffer slots its statements and imports read.
  std::vector<std::vector<uint32_t>> input_slots;
  /// Per statement: its frame slot when it is exported, else kNoSlot. Slots are reused
  /// once the last piece reading a value has run.
  std::vector<uint32_t> frame_slot;
  uint32_t frame_slots = 0;  ///< slots the frame needs (each one vector of 64-bit lanes)

  size_t pieces() const { return starts.size(); }
};

/// Whether a statement is recomputed in each piece that reads it instead of passing through
/// the frame (it reads nothing but the launch's buffers, parameters and lane index).
bool is_leaf(Op op);

/// Splits a form of more than `max_statements` statements into pieces of about that many,
/// cut only between top-level statements (a symbolic loop stays in one piece, and so do a
/// host call's argument cells, the call and its results; the arguments' values may come
/// from earlier pieces). Returns a
/// single piece when the form is short enough, `max_statements` is 0, or the frame would
/// need more than `max_frame_slots` slots.
KernelSplit plan_kernel_split(const KernelForm& form, uint32_t max_statements, uint32_t max_frame_slots);

}  // namespace kiln::detail
