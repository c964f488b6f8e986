// Symbolic regions: the bodies of symbolic loops, recorded into the IR as they are traced.
//
// Every node has a scope: the innermost open (or recorded) loop body whose state it
// depends on, 0 for the top level. A node that depends on no loop state is loop-invariant
// and is computed before the loop, whatever body it was written in. Side effects traced
// inside a body belong to the region (they run once per iteration, masked to the active
// lanes) instead of the pending list; the loop becomes one Loop node whose results are
// LoopResult nodes. Values of a body cannot be evaluated while it is recorded, nor used
// after it (they only exist inside the kernel). The mask stack holds the lanes that side
// effects and gathers apply to inside loops, conditionals and calls. Symbolic branches and
// calls are regions too: a loop that runs at most once, so a packet with no lane taking
// the branch skips it.
#pragma once

#include <kiln/detail/trace_api.h>

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace kiln::detail {

class CreationWatch;

struct Region {
  uint32_t parent = 0;  ///< enclosing region, 0 for the top level
  uint32_t depth = 1;
  std::string statement;  ///< "while_loop", "if_stmt", "dispatch": diagnostics only
  std::string name;       ///< diagnostics only, never hashed
  size_t size = 1;        ///< lanes of the loop
  bool open = true;       ///< still being recorded
  /// Runs at most one iteration (a guarded branch or call): kernels skip it in packets
  /// with no active lane, and its results are only defined on the lanes that ran it.
  bool once = false;
  std::vector<Index> phis;     ///< LoopPhi per state variable (internal refs)
  std::vector<Index> updates;  ///< new value per state variable, 0 when not carried (internal refs)
  Index cond = 0;              ///< the LoopCond node (internal ref)
  std::vector<Index> effects;  ///< side effects of the body in program order (internal refs)
  std::vector<Index> targets;  ///< Data nodes the body (or a nested one) scatters into
  std::vector<Index> results;  ///< LoopResult nodes (not owned: check they are still results)
  uint32_t runs = 0;           ///< kernels that ran the loop (src/form/schedule.cpp)
};

/// The region `id` (recorded or open); throws InternalError when it was released.
Region& region(uint32_t id);
/// The region `id`, or nullptr once the loop that owned it is gone.
const Region* find_region(uint32_t id);
/// The innermost open region, 0 at the top level.
uint32_t current_region();

/// Starts recording a loop body of `size` lanes for `statement` (a symbolic while_loop, or
/// the run-once loop that guards a branch or call).
uint32_t open_region(const std::string& statement, const std::string& name, size_t size, bool once = false);
/// The placeholder of a state variable with initial value `init` (one external ref).
Index make_loop_phi(uint32_t id, Index init);
/// The lanes active in an iteration: still running and `cond` (one external ref). The
/// statement has checked that `cond` is a Bool array of 1 or the loop's lanes.
Index make_loop_cond(uint32_t id, Index cond);
/// Closes the region with the new value of every state variable and returns the value of
/// each after the loop (external refs): a LoopResult, or the initial value when the body
/// does not change it.
std::vector<Index> close_region(uint32_t id, const std::vector<Index>& updates);
/// Abandons an open region after an error while tracing its body.
void abandon_region(uint32_t id);
/// Releases what a freed Loop node's region holds.
void release_region(uint32_t id);

/// The scope of a node with these operands (the innermost one); throws when an operand
/// belongs to a region that is no longer open (`what` names the operation).
uint32_t scope_of_operands(const Index* operands, int count, const char* what);
/// True when scope `inner` is `outer` or nested inside it.
bool scope_within(uint32_t inner, uint32_t outer);
/// True when region `id` or one enclosing it is still being recorded.
bool scope_open(uint32_t id);
/// Throws when the node cannot be evaluated now (it lives inside a symbolic loop body).
void check_evaluable(Index index, const char* what);

/// The inputs of an evaluated loop, branch or call while its functions are traced: per-lane
/// values that gathers and scatters must not index (check_buffer_operand()).
struct InputWatch {
  std::string statement;  ///< "while_loop", "if_stmt", "dispatch"
  std::string name;
  bool loop_state = true;  ///< the inputs are loop state (else a branch's or call's arguments)
  std::vector<Index> inputs;
};

/// "while_loop('name')" (or "while_loop()"): how errors name a statement.
std::string statement_title(const std::string& statement, const std::string& name);
/// Throws when `buffer`, the source of a gather or the target of a scatter (`use`:
/// "gathers from", "scatters into"), is per-lane input of a loop, branch or call: the
/// placeholder of a symbolic one's state or argument, or an input of an evaluated one
/// whose functions are being traced (State::input_watches, innermost first, up to a null
/// barrier: a statement's own compaction gathers). Both modes raise the same
/// error, naming the statement and the position.
void check_buffer_operand(Index buffer, const char* use);

/// Traces at the top level while it lives, whatever statement is being recorded or traced
/// around it: no open region, no mask, no creation watch or operand substitution, and a
/// barrier in the input watches. Kiln's own kernels (the horizontal operations on a
/// device) are traced and evaluated under it, so they work from inside a loop body.
class TopLevelScope {
 public:
  TopLevelScope();
  ~TopLevelScope();
  TopLevelScope(const TopLevelScope&) = delete;
  TopLevelScope& operator=(const TopLevelScope&) = delete;

 private:
  std::vector<uint32_t> open_regions_;
  CreationWatch* creation_watch_;
  const std::unordered_map<Index, Index>* substitutions_;
};

/// The lanes side effects and gathers apply to now (0: all lanes).
Index current_mask();
/// Makes `mask` (which must already include the enclosing mask, or 0 for "all lanes")
/// the current mask until the matching pop_mask().
void push_mask(Index mask);
void pop_mask();
/// `mask && current_mask()` with a new reference (`mask` itself when there is none).
Index apply_current_mask(Index mask);

}  // namespace kiln::detail
