// The lowering of a kernel form to LLVM IR text, private to src/backend/: its members are
// defined in the lower*.cpp files, one responsibility each (lower.cpp says which); what a
// target decides is asked of its Target (target.h).
#pragma once

#include "backend/kernel_split.h"
#include "backend/lowering/target.h"
#include "form/kernel_form.h"

#include <cstdint>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace kiln::detail::lowering {

/// Scalar LLVM type of a value in registers (Bool is i1).
const char* scalar_type(VarType t);
/// Scalar LLVM type of a value in memory (Bool is one byte).
const char* memory_type(VarType t);
/// Suffix of overloaded intrinsic names ("f32", "i1", ...).
std::string mangle(const char* scalar);
/// Bits of a value in registers (1 for Bool).
unsigned bit_width(VarType t);

/// Lowers one kernel form: one vector SSA value of form.packet_width lanes per statement,
/// written into the entry block (values computed once per call) or the body (per packet).
class Lowering {
 public:
  Lowering(const KernelForm& form, const Target& target, uint32_t split_statements)
      : form_(form),
        target_(target),
        width_(form.packet_width),
        split_statements_(split_statements),
        names_(form.statements.size()) {}

  /// The module text: the kernel function `name`, its pieces, declarations and attributes.
  std::string lower(const std::string& name);

  // ---- what targets write with (target_*.cpp) ----
  /// Writes `%t<n> = text` into the body and returns %t<n>.
  std::string instr(const std::string& text);
  /// The body being written (its current block).
  std::ostringstream& body() { return body_; }
  /// The name of a block that statement `position` opens ("s12.head").
  std::string label(uint32_t position, const char* what);
  /// Opens block `name` in the body.
  void start_block(const std::string& name);

 private:
  // ---- text: types, constants, instructions (lower.cpp) ----
  /// `<width x scalar>`.
  std::string vec(const std::string& scalar) const;
  /// The vector type of a value of type `t` in registers.
  std::string vec(VarType t) const;
  /// Suffix of an overloaded intrinsic on vectors of `scalar` ("v4f32").
  std::string vmangle(const std::string& scalar) const;
  /// A vector constant with every lane `value` (LLVM constant syntax).
  std::string splat_const(const std::string& scalar, const std::string& value) const;
  /// The constant vector <0, 1, ..., width - 1> of i64.
  std::string lane_offsets() const;
  /// Writes instructions that broadcast scalar SSA value `value` into vector `%tag`.
  void splat(std::ostringstream& out, const std::string& tag, const std::string& scalar, const std::string& value);
  /// A fresh SSA name (%t<n>).
  std::string temp();
  /// Calls an intrinsic, declaring it on first use.
  std::string call(const std::string& result_type, const std::string& intrinsic,
                   const std::vector<std::pair<std::string, std::string>>& args);
  /// The SSA value of operand `k` of `s`.
  const std::string& arg(const KernelStatement& s, int k) const;

  // ---- the kernel's skeleton (lower_kernel.cpp) ----
  /// Loads buffer pointer `slot` in the entry block (%buf<slot>).
  void load_buffer(uint32_t slot);
  /// %lane (the packet's lane indices) and %active (those below %end), from %i.
  void lane_mask();
  /// Returns from a piece's function; a loop latch that saw Ctrl-C returns early.
  void end_function();
  /// Ends the latch of loop `loop_label` (%L<k>) with a read of the Ctrl-C flag: back to
  /// its head, or out of the kernel.
  void poll_interrupt(const std::string& loop_label);
  /// A literal, broadcast once in the entry block.
  std::string literal(uint32_t position, const KernelStatement& s);
  /// A parameter: 64 bits read once from the parameter block, narrowed, and broadcast.
  std::string parameter(uint32_t position, const KernelStatement& s);
  /// The packet's lanes of an input (or its one element, broadcast).
  std::string load_input(uint32_t position, const KernelStatement& s);
  /// Converts a loaded memory vector (i8 for Bool) to its register form.
  std::string from_memory(VarType t, const std::string& v, std::ostringstream& out, const std::string& tag);
  /// Register value -> memory form (Bool widened to i8).
  std::string to_memory(VarType t, const std::string& v);
  /// Stores the outputs of the packet, then branches to the latch.
  void store_outputs();
  /// Stores `outputs` (statement positions) as (memory value, pointer) `targets` on the
  /// active lanes, then branches to the latch.
  void store_masked(const std::vector<uint32_t>& outputs,
                    const std::vector<std::pair<std::string, std::string>>& targets);

  // ---- statements: the switch over ops, arithmetic (lower_arithmetic.cpp) ----
  /// Lowers statement `position` into names_[position].
  void emit(uint32_t position);
  /// C's fmod, exactly (a fast path and LLVM's frem for the lanes outside it).
  std::string float_remainder(uint32_t position, VarType t, const std::string& x, const std::string& y);
  /// IEEE minNum / maxNum with the tie between zeros defined, as in scalar_ops.h.
  std::string float_min_max(bool is_min, const std::string& type, const std::string& a, const std::string& b);
  /// True when the statement's value is the same on every lane of a launch.
  bool uniform(uint32_t position) const;
  /// UInt32 n / d (or n % d) by multiplication, for a divisor uniform over the launch.
  std::string invariant_divide(const std::string& n, const std::string& d, bool quotient);
  /// Integer Div or Mod, guarded against zero divisors and MIN / -1.
  std::string int_divide(const KernelStatement& s);
  /// Shl or Shr, saturating at the bit width.
  std::string shift(const KernelStatement& s);
  /// Eq, Ne, Lt, Le, Gt or Ge.
  std::string compare(const KernelStatement& s);
  /// A float converted to an integer type, saturating: NaN gives 0, values past either
  /// end the type's extreme (llvm.fptosi.sat's semantics, in vector instructions).
  std::string saturating_float_to_int(VarType from, VarType to, const std::string& a);
  /// Cast between value types (float -> int saturates).
  std::string cast(const KernelStatement& s);

  // ---- memory: gathers, scatters, bounds (lower_memory.cpp) ----
  /// Lane addresses into the buffer of statement `buffer` at the UInt32 indices `index`.
  /// `index64`: the same widened to i64.
  std::string addresses(const KernelStatement& buffer, VarType t, const std::string& index, const std::string& index64);
  /// The lanes of `mask` that are active and in bounds; checked mode reports the others.
  std::string checked_mask(uint32_t position, const KernelStatement& buffer, const std::string& mask,
                           const std::string& index, const std::string& index64);
  /// UInt32 indices widened to i64.
  std::string widen_index(const std::string& index);
  /// A masked gather (out-of-range lanes read 0).
  std::string gather(uint32_t position, const KernelStatement& s);
  /// Emits a loop over the set lanes of `mask` (or over their distinct indices, `by_index`);
  /// `per_lane(lane, index64, lanes_of_index)` writes its body.
  template <typename PerLane> std::string lane_loop(uint32_t position, const std::string& mask,
                                                    const std::string& index64, const std::string& result_type,
                                                    bool by_index, PerLane per_lane);
  /// The sum of `values` over the lanes set in the vector mask `lanes` (floats in any order).
  std::string packet_sum(VarType t, const std::string& values, const std::string& lanes);
  /// A scatter: a masked store, or an atomic update per lane when it reduces.
  void scatter(uint32_t position, const KernelStatement& s);
  /// An atomic update by a compare-exchange loop: `update(old value)` gives the new value.
  template <typename Update> void compare_exchange(uint32_t position, VarType t, const std::string& ptr, Update update);
  /// `old_value` combined with `v` by a float min/max or a product.
  std::string reduced(ReduceOp reduce, VarType t, const std::string& old_value, const std::string& v);
  /// Atomic increments, one per lane; the result holds each lane's old value.
  std::string scatter_inc(uint32_t position, const KernelStatement& s);

  // ---- host calls (lower_host_call.cpp) ----
  /// Calls the host function of the HostCall at `position` on the packet's lanes where its
  /// mask holds (not at all when none does), through staging memory in the entry block;
  /// returns those lanes.
  std::string host_call(uint32_t position, const KernelStatement& s);
  /// A HostResult: the staged output on the lanes its call ran on, 0 elsewhere.
  std::string host_result(uint32_t position, const KernelStatement& s);

  // ---- symbolic loops (lower_loops.cpp) ----
  /// A loop whose LoopEnd is not emitted yet.
  struct OpenLoop {
    uint32_t begin;        ///< the position of its LoopBegin
    bool once;             ///< runs at most once: no back edge (a guarded branch or call)
    std::string active;    ///< the LoopCond value: lanes active in this iteration
    std::string head_end;  ///< once: the block that branches around the body
    std::vector<std::pair<uint32_t, std::string>> updates;  ///< once: (phi, new value)
  };
  /// Opens loop `k`: its preheader and head.
  void loop_begin(uint32_t k, const KernelStatement& s);
  /// A loop variable's phi in the head (a run-once loop defines it at its exit).
  std::string loop_phi(uint32_t position, const KernelStatement& s);
  /// The lanes still running; leaves the loop when there are none.
  std::string loop_cond(const KernelStatement& s);
  /// A loop variable's value for the next iteration (inactive lanes keep theirs).
  void loop_update(const KernelStatement& s);
  /// Closes the innermost loop: its latch (back edge) or, run once, the exit's phis.
  void loop_end();

  // ---- pieces of a long kernel (lower_pieces.cpp, backend/kernel_split.h) ----
  /// Frames (values crossing pieces) above this size are not worth a split: the kernel
  /// compiles as one function instead (the frame lives on a worker thread's stack).
  static constexpr uint32_t kMaxFrameBytes = 256 * 1024;
  /// Lowers each piece as a function of its own (into pieces_) and calls them in order;
  /// then loads the outputs for store_outputs().
  void call_pieces(const std::string& name, const KernelSplit& split);
  /// `define internal void @symbol(i64 %i, i64 %end, ...)`: piece k's statements for the
  /// packet at %i, with the values it imports at the top and those it exports at the end.
  void lower_piece(const std::string& symbol, const KernelSplit& split, uint32_t k);
  /// Makes the values of `positions` (defined in earlier pieces) available here: leaves
  /// are recomputed, the others loaded from the frame.
  void import_values(const KernelSplit& split, const std::vector<uint32_t>& positions);
  /// The address of a value's slot in the frame.
  std::string frame_address(const KernelSplit& split, uint32_t position);
  /// The alignment of a frame slot.
  uint32_t frame_alignment() const;

  const KernelForm& form_;
  const Target& target_;
  const uint32_t width_;
  const uint32_t split_statements_;
  std::string pieces_;                  ///< the functions of a split kernel's pieces
  std::vector<std::string> names_;      ///< per statement: its SSA value
  std::vector<bool> value_used_;        ///< per statement: some statement or output reads it
  std::ostringstream entry_, body_;     ///< the function being lowered: entry block, other blocks
  std::set<std::string> declarations_;  ///< intrinsics called
  std::string block_;                   ///< the block being written
  std::vector<OpenLoop> loops_;         ///< loops whose LoopEnd is not emitted yet, innermost last
  bool polls_interrupt_ = false;        ///< a loop's latch reads CheckState::interrupt
  int next_temp_ = 0;
};

}  // namespace kiln::detail::lowering
