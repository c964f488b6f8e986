// Storing and checking a symbolic loop's trajectory (see trajectory.h).
#include "control/trajectory.h"

#include "control/differentiate_statement.h"

#include <kiln/errors.h>

#include "ir/node.h"
#include "ir/region.h"

#include <algorithm>

namespace kiln::detail {
namespace {

std::string overflow_message(const std::string& what, uint32_t longest, size_t max_iterations) {
  return "kiln: " + what + ": reverse mode needs the state of " + std::to_string(longest) +
         " iterations, but the loop stored at most max_iterations=" + std::to_string(max_iterations) +
         "; pass max_iterations=" + std::to_string(longest) + " or more";
}

/// Trajectory checks that cannot read the iteration counts on the host when they are made
/// (the loop's derivative is traced inside another symbolic statement): the kernel records
/// the longest count into a one-lane buffer, checked after each evaluation.
struct DeferredCheck {
  Handle longest;
  size_t max_iterations;
  std::string what;
};
std::vector<DeferredCheck>& deferred_checks() {
  static auto* checks = new std::vector<DeferredCheck>();  // never destroyed: arrays may outlive statics
  return *checks;
}

/// After each evaluation (with the state lock held): raises for a loop whose kernel ran
/// more iterations than its trajectory holds.
void check_deferred_trajectories() {
  std::vector<DeferredCheck>& checks = deferred_checks();
  for (size_t k = 0; k < checks.size();) {
    const Node& n = node(checks[k].longest.index());
    if (n.dirty_size) {  // its kernel has not run yet
      ++k;
      continue;
    }
    uint32_t longest = 0;
    n.buffer->to_host(&longest, sizeof longest);
    DeferredCheck check = std::move(checks[k]);
    checks.erase(checks.begin() + long(k));
    if (longest > check.max_iterations) throw ValueError(overflow_message(check.what, longest, check.max_iterations));
  }
}

}  // namespace

Handle Trajectory::position(const Handle& iteration) const {
  return traced(Op::Add, traced(Op::Mul, iteration, width), lane_ids);
}

void check_trajectory(const Handle& iterations, size_t max_iterations, const std::string& what) {
  if (!inside_statement()) {
    uint32_t longest = 0;
    Handle most = Handle::steal(reduce(Reduction::Max, iterations.index()));
    read(most.index(), 0, &longest);
    if (longest > max_iterations) throw ValueError(overflow_message(what, longest, max_iterations));
    return;
  }
  uint32_t zero = 0;
  Handle longest = Handle::steal(make_copy(VarType::UInt32, &zero, 1));
  Index target = longest.index();
  trace_scatter(ReduceOp::Max, target, iterations.index(), literal(VarType::UInt32, 0).index(),
                literal(VarType::Bool, 1).index());
  if (target != longest.index()) longest = Handle::steal(target);
  StateLock lock(state().mutex);
  static bool hooked = false;
  if (!hooked) {
    state().after_evaluation.push_back(check_deferred_trajectories);
    hooked = true;
  }
  deferred_checks().push_back({std::move(longest), max_iterations, what});
}

Values run_recording_trajectory(const Values& state, const ConditionFn& cond, const BodyFn& body, const LoopRun& run,
                                size_t max_iterations, const std::string& what, Trajectory& t) {
  t.max_iterations = max_iterations;
  t.lanes = common_size(state, what);
  if (t.max_iterations > (size_t(1) << 32) / std::max<size_t>(t.lanes, 1))
    throw SizeError("kiln: " + what + ": max_iterations=" + std::to_string(t.max_iterations) + " times " +
                    std::to_string(t.lanes) +
                    " lanes exceeds the 2^32 entries a trajectory can index; "
                    "lower max_iterations or split the lanes");
  for (const Handle& v : state)
    t.buffers.push_back(Handle::steal(make_empty(node_type(v.index()), t.max_iterations * t.lanes)));
  t.lane_ids = Handle::steal(make_counter(t.lanes));
  t.width = Handle::steal(make_param(VarType::UInt32, t.lanes, 1));
  ConditionFn counted_cond = [&cond](const Values& s) { return cond(Values(s.begin() + 1, s.end())); };
  BodyFn counted_body = [&t, &body](const Values& s) {
    Handle stored = traced(Op::Lt, s[0], literal(VarType::UInt32, uint64_t(t.max_iterations)));
    Handle position = t.position(s[0]);
    for (size_t k = 0; k < t.buffers.size(); ++k) {
      Index target = t.buffers[k].index();
      trace_scatter(ReduceOp::None, target, s[1 + k].index(), position.index(), stored.index());
      if (target != t.buffers[k].index()) t.buffers[k] = Handle::steal(target);
    }
    Values next{traced(Op::Add, s[0], literal(VarType::UInt32, 1))};
    for (Handle& v : body(Values(s.begin() + 1, s.end()))) next.push_back(std::move(v));
    return next;
  };
  Values all = run(concat({literal(VarType::UInt32, 0, t.lanes)}, detached(state)), counted_cond, counted_body);
  t.iterations = all[0];
  return Values(all.begin() + 1, all.end());
}

}  // namespace kiln::detail
