// while_loop() in both modes. Symbolic: the body is traced once into a loop region
// (src/ir/region.h) that the scheduler emits as a real loop in the kernel. Evaluated: the
// host runs one kernel per iteration (the body and the next condition), and once at most
// half of the lanes are still active it compacts them with compress(), when the body reads
// per-lane data only through its state.
#include "control/differentiate.h"
#include "control/recording.h"
#include "eval/interrupt.h"

#include "ir/node.h"
#include "ir/op_info.h"

#include <algorithm>
#include <optional>

namespace kiln::detail {

namespace {

void check_condition(const Handle& cond, size_t lanes, const std::string& what) {
  checked_operand(cond.index(), VarType::Bool, what, "the condition");
  size_t size = node_size(cond.index());
  if (size != 1 && size != lanes)
    throw SizeError("kiln: " + what + ": the condition has " + std::to_string(size) + " lanes but the state has " +
                    std::to_string(lanes) + "; make them equal");
}

Values symbolic_loop(const Values& state, const ConditionFn& cond, const BodyFn& body, const std::string& what,
                     const std::string& name, size_t lanes) {
  ConditionFn checked = [&](const Values& phis) {
    Handle c = cond(phis);
    check_condition(c, lanes, what);
    return c;
  };
  return record_region("while_loop", name, lanes, state, checked, [&](const Values& phis, Values&) {
    Values next = body(phis);
    check_like(state, next, what + " body");
    check_lanes(next, lanes, what + " body");
    return next;
  });
}

/// Watches the first iteration of an evaluated body for per-lane arrays it reads from
/// outside its state (which compaction could not shrink with the state).
class CaptureScope : public CreationWatch {
 public:
  CaptureScope(const Values& state_values, size_t lanes) : lanes_(lanes) {
    StateLock lock(state().mutex);
    first_serial_ = state().next_serial;
    allow_all(state_values);
    previous_ = state().creation_watch;
    state().creation_watch = this;
  }
  /// Arrays the loop itself passes in (the state, the active lanes).
  void allow(const Handle& value) { allowed_.push_back(value.index()); }
  void allow_all(const Values& values) {
    for (const Handle& v : values) allow(v);
  }
  ~CaptureScope() override {
    StateLock lock(state().mutex);
    state().creation_watch = previous_;
    if (auto* outer = dynamic_cast<CaptureScope*>(previous_); outer && found_) outer->found_ = true;
  }
  bool found() const { return found_; }

  /// Notes an operand that is a per-lane array created before the loop and not allowed.
  void creating(const Node& prototype) override {
    for (int k = op_has_buffer_operand(prototype.op) ? 1 : 0; k < 4; ++k) {
      Index op = prototype.operands[k];
      if (!op) continue;
      const Node& o = node(op);
      if (o.serial >= first_serial_ || o.size != lanes_) continue;
      if (std::find(allowed_.begin(), allowed_.end(), op) == allowed_.end()) found_ = true;
    }
  }

 private:
  uint64_t first_serial_ = 0;
  size_t lanes_;
  std::vector<Index> allowed_;
  bool found_ = false;
  CreationWatch* previous_ = nullptr;
};

Values evaluated_loop(const Values& initial, const ConditionFn& cond, const BodyFn& body, const std::string& what,
                      const std::string& name, size_t lanes) {
  InterruptScope interrupt;  // Ctrl-C between iterations, not only inside their kernels
  Handle enclosing = enclosing_mask();
  Values state = initial, results;  // results: every lane's state while `state` is compacted
  Handle lane_ids;                  // original lane of each compacted lane
  bool may_compact = !enclosing && lanes > 1;
  // Fresh nodes for the state, so that reading the initial arrays from outside the state
  // (the same nodes) counts as a capture, and indexing them is not indexing the state.
  state = fresh_values(state);
  // The first iteration shows whether the condition and the body read per-lane arrays
  // from outside the state (then the lanes cannot be compacted).
  std::optional<CaptureScope> watch;
  if (may_compact) watch.emplace(state, lanes);
  auto condition = [&](const Values& s) {
    InputWatchScope inputs("while_loop", name, /*loop_state=*/true, s);
    return cond(s);
  };
  Handle c = condition(state);
  check_condition(c, lanes, what);
  Handle active = within_enclosing(c);
  if (node_size(active.index()) != lanes)
    active = traced(Op::And, active, literal(VarType::Bool, 1, lanes));  // per lane
  Values pending = state;
  pending.push_back(active);
  eval_values(pending);
  for (size_t iteration = 0;; ++iteration) {
    throw_if_interrupted();
    Handle any = Handle::steal(reduce(Reduction::Any, active.index()));
    bool more = false;
    read(any.index(), 0, &more);
    if (!more) break;
    size_t work = node_size(active.index());
    if (may_compact && iteration > 0) {
      Handle lanes_left = active_lanes(active);
      size_t left = node_size(lanes_left.index());
      if (2 * left <= work) {
        if (!lane_ids) {
          results = state;
          lane_ids = Handle::steal(make_counter(lanes));
        } else {
          scatter_values(results, state, lane_ids);  // lanes that finished keep their state
        }
        state = gather_values(state, lanes_left, work);
        lane_ids = traced(Op::Gather, lane_ids, lanes_left, literal(VarType::Bool, 1));
        active = literal(VarType::Bool, 1, left);
        Values compacted = state;
        compacted.push_back(lane_ids);
        eval_values(compacted);
      }
    }
    Values next;
    {
      MaskScope scope(active.index());
      InputWatchScope inputs("while_loop", name, /*loop_state=*/true, state);
      if (watch) watch->allow(active);
      next = body(state);
    }
    check_like(state, next, what + " body");
    check_lanes(next, node_size(active.index()), what + " body");
    for (size_t k = 0; k < state.size(); ++k) state[k] = select_values(active, next[k], state[k]);
    if (watch) watch->allow_all(state);
    Handle next_cond = condition(state);
    if (watch) {
      may_compact = !watch->found();
      watch.reset();
    }
    check_condition(next_cond, node_size(active.index()), what);
    active = traced(Op::And, next_cond, active);  // `active` already holds the enclosing mask
    pending = state;
    pending.push_back(active);
    eval_values(pending);  // one kernel: the iteration and the next condition
  }
  if (!lane_ids) return state;
  scatter_values(results, state, lane_ids);
  eval_values(results);
  return results;
}

}  // namespace

Values while_loop(const Values& state, const ConditionFn& cond, const BodyFn& body, std::optional<ControlMode> mode,
                  const std::string& name, const LoopDerivative& derivative) {
  std::string what = statement_title("while_loop", name);
  if (state.empty()) throw ValueError("kiln: " + what + ": the loop has no state; pass the arrays it updates");
  for (const Handle& v : state)
    if (!v) throw ValueError("kiln: " + what + ": a state array is empty (default-constructed)");
  size_t lanes = common_size(state, what + " state", kBufferHint);
  if (resolve_mode(mode, what) == ControlMode::Evaluated) {
    // A sum loop is differentiated by running it again, as in symbolic mode, so that the AD
    // graph does not keep its iterations; other evaluated loops keep them.
    if (!derivative.sum_loop || !derivatives_possible()) return evaluated_loop(state, cond, body, what, name, lanes);
    LoopRun run = [what, name, lanes](const Values& s, const ConditionFn& c, const BodyFn& b) {
      return evaluated_loop(s, c, b, what, name, lanes);
    };
    return differentiable_loop(state, cond, body, run, LoopDerivative{.sum_loop = true}, what, /*evaluated=*/true);
  }
  if (!derivatives_possible()) return symbolic_loop(state, cond, body, what, name, lanes);
  LoopRun run = [what, name, lanes](const Values& s, const ConditionFn& c, const BodyFn& b) {
    return symbolic_loop(s, c, b, what, name, lanes);
  };
  return differentiable_loop(state, cond, body, run, derivative, what);
}

}  // namespace kiln::detail
