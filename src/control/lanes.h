// Helpers shared by the control-flow statements: untyped array operations on Handles,
// checks of what user callbacks return, and moving values to and from compacted lanes.
#pragma once

#include <kiln/detail/control_api.h>
#include <kiln/errors.h>

#include "ir/region.h"

#include <exception>
#include <string>

namespace kiln::detail {

/// `index` as a Handle, after checking that it is a non-empty array of `type`; `role`
/// names it in errors ("the condition").
Handle checked_operand(Index index, VarType type, const std::string& what, const char* role);

/// Result of trace() as a Handle.
Handle traced(Op op, const Handle& a, const Handle& b = {}, const Handle& c = {});
Handle literal(VarType type, uint64_t bits, size_t size = 1);
/// Where the mask holds, `t`; elsewhere `f`.
Handle select_values(const Handle& mask, const Handle& t, const Handle& f);
/// Lanes of the statement: the common size of `values` (1 broadcasts); throws SizeError
/// naming `what` when two sizes differ, followed by `hint` when there is one.
size_t common_size(const Values& values, const std::string& what, const std::string& hint = {});
/// The hint of a statement whose inputs have different sizes: one may be a buffer.
inline constexpr char kBufferHint[] =
    "; an array of another size that the functions gather from or scatter into is used from the enclosing scope, "
    "not passed in";
/// Evaluates all of them in one go (one kernel per size).
void eval_values(const Values& values);
/// The lanes where `mask` (evaluated) is set, as UInt32 indices.
Handle active_lanes(const Handle& mask);
/// Each per-lane value (of `width` lanes) at `lanes`; values that broadcast (size 1 while
/// `width` is larger) are passed as they are. A one-lane statement gathers like a wider one,
/// so its kernels have the same shape.
Values gather_values(const Values& values, const Handle& lanes, size_t width);
/// Each value as a node of its own (an all-true select), so that indexing it can be told
/// from indexing the array it came from (which the functions may capture).
Values fresh_values(const Values& values);
/// Checks that `got` has the count and types of `expected` (what a body must return).
void check_like(const Values& expected, const Values& got, const std::string& what);
/// Checks that what a body or function returned has `lanes` lanes (or 1): a statement
/// keeps its number of lanes.
void check_lanes(const Values& values, size_t lanes, const std::string& what);
/// Zero literals of `size` lanes with the types of `like`.
Values zeros_like(const Values& like, size_t size);
/// target[k][lanes] = values[k].
void scatter_values(Values& targets, const Values& values, const Handle& lanes);

/// Derivatives recorded (or not) for the lifetime of the scope, whatever the caller had:
/// the traced functions inside derivative statements and chunked maps.
struct RecordingScope {
  explicit RecordingScope(bool on) { ad_push_recording(on); }
  ~RecordingScope() { ad_pop_recording(); }
  RecordingScope(const RecordingScope&) = delete;
  RecordingScope& operator=(const RecordingScope&) = delete;
};
/// An isolate_grad() scope (with `collect`: see ad_push_isolation()); left by an
/// exception, it drops what reached its boundary instead of traversing further.
class IsolationScope {
 public:
  explicit IsolationScope(bool collect) : exceptions_(std::uncaught_exceptions()) { ad_push_isolation(collect); }
  ~IsolationScope() noexcept(false) { ad_pop_isolation(/*propagate=*/std::uncaught_exceptions() == exceptions_); }
  IsolationScope(const IsolationScope&) = delete;
  IsolationScope& operator=(const IsolationScope&) = delete;

 private:
  int exceptions_;
};

/// While alive, gathers from and scatters into `inputs` raise (check_buffer_operand()):
/// the per-lane inputs of an evaluated statement whose functions are being traced.
/// Without arguments: a barrier that hides the enclosing watches, for a statement's own
/// compaction gathers of per-lane values.
class InputWatchScope {
 public:
  InputWatchScope(const char* statement, const std::string& name, bool loop_state, const Values& inputs);
  InputWatchScope();
  ~InputWatchScope();
  InputWatchScope(const InputWatchScope&) = delete;
  InputWatchScope& operator=(const InputWatchScope&) = delete;

 private:
  InputWatch watch_;
};

/// Makes `mask` the current mask (src/ir/region.h) for the lifetime of the scope.
class MaskScope {
 public:
  explicit MaskScope(Index mask);
  ~MaskScope();
  MaskScope(const MaskScope&) = delete;
  MaskScope& operator=(const MaskScope&) = delete;
};
/// The current mask (empty when all lanes are active).
Handle enclosing_mask();
/// `mask && enclosing_mask()`.
Handle within_enclosing(const Handle& mask);

}  // namespace kiln::detail
