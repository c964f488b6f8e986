// if_stmt() and dispatch(): per-lane choices between traced functions. Symbolic: every
// branch (instance) is traced once with the mask of its lanes, and the results are
// selected per lane. Evaluated: the lanes of each branch (instance) are compacted, its
// arguments gathered, the function run on just those lanes (one kernel) and its results
// scattered back.
#include "control/differentiate.h"
#include "control/recording.h"
#include "control/shared_bodies.h"

#include "ir/node.h"

#include <algorithm>
#include <optional>
#include <unordered_map>

namespace kiln::detail {
namespace {

/// One way through the statement: the lanes that take it and the function they run.
struct Choice {
  Handle lanes_mask;  ///< where the choice applies (symbolic mode)
  Handle lanes;       ///< or the indices of its lanes (evaluated mode)
  std::function<Values(const Values&)> run;
};

/// The first serial the next traced node gets.
uint64_t next_serial() {
  StateLock lock(state().mutex);
  return state().next_serial;
}

/// Traces `run` into a guarded region over the lanes of `lanes_mask`, with `args` and, as
/// further arguments, `extra` (values the body does not see but may have substituted).
/// Inside, `trace_body(run, placeholders of args, placeholders of extra, first serial)`
/// returns the outputs. `like`: results whose types the outputs must have.
template <typename TraceBody>
Values guarded_region(const Handle& lanes_mask, const std::function<Values(const Values&)>& run, const Values& args,
                      const Values& extra, size_t lanes, const std::string& what, const char* statement,
                      const std::string& name, const Values* like, TraceBody trace_body) {
  Values initial = args;
  initial.insert(initial.end(), extra.begin(), extra.end());
  uint64_t first_serial = next_serial();
  Values after = record_region(
      statement, name, lanes, initial, [&](const Values&) { return lanes_mask; },
      [&](const Values& phis, Values& outputs) {
        Values own_args(phis.begin(), phis.begin() + long(args.size()));
        Values merged(phis.begin() + long(args.size()), phis.end());
        outputs = trace_body(run, own_args, merged, first_serial);
        for (const Handle& v : outputs)
          if (!v) throw ValueError("kiln: " + what + " returned an empty array");
        if (like) check_like(*like, outputs, what);
        check_lanes(outputs, lanes, what);
        return phis;  // the arguments do not change
      },
      /*once=*/true);
  return Values(after.begin() + long(initial.size()), after.end());
}

/// One region for the choices `members` (bodies of one shape, the first traced as
/// `first`): the first one's body replayed with each leaf where they differ selected per
/// lane. Nothing when the replay traced another shape.
std::optional<Values> shared_region(const std::vector<Choice>& choices, const std::vector<size_t>& members,
                                    const BodyShape& first, const std::vector<const BodyShape*>& shapes,
                                    const Handle& lanes_mask, const Values& args, size_t lanes, const std::string& what,
                                    const char* statement, const std::string& name, const Values& like) {
  Values extra;
  std::vector<size_t> merged_positions;
  for (size_t j = 0; j < first.leaves.size(); ++j) {
    bool same = true;
    for (const BodyShape* shape : shapes) same &= shape->leaves[j] == first.leaves[j];
    if (same) continue;
    Handle value = Handle::borrow(first.leaves[j]);
    for (size_t i = 1; i < members.size(); ++i)
      value = select_values(choices[members[i]].lanes_mask, Handle::borrow(shapes[i]->leaves[j]), value);
    merged_positions.push_back(j);
    extra.push_back(value);
  }
  bool replayed = false;
  Values out =
      guarded_region(lanes_mask, choices[members[0]].run, args, extra, lanes, what, statement, name, &like,
                     [&](const auto& run, const Values& own_args, const Values& merged, uint64_t first_serial) {
                       std::unordered_map<Index, Index> substitutions;
                       std::vector<Index> merged_args(first.leaves.size(), 0);
                       for (size_t i = 0; i < merged_positions.size(); ++i) {
                         substitutions.emplace(first.leaves[merged_positions[i]], merged[i].index());
                         merged_args[merged_positions[i]] = merged[i].index();
                       }
                       Values outputs;
                       {
                         OperandSubstitution substitute(substitutions);
                         outputs = run(own_args);
                       }
                       // The replay must have traced the first body again, on the merged values.
                       BodyShape shape = body_shape(outputs, own_args, current_region(), first_serial, merged_args);
                       replayed = shape.shareable && shape.tokens == first.tokens;
                       for (size_t j = 0; replayed && j < first.leaves.size(); ++j)
                         replayed = shape.leaves[j] == (merged_args[j] ? merged_args[j] : first.leaves[j]);
                       return outputs;
                     });
  if (!replayed) return std::nullopt;
  return out;
}

/// Symbolic: each choice traced once into a guarded region (packets with no lane taking it
/// skip it), and the results selected lane by lane (lanes no choice takes get zeros, or the
/// false branch of an if). Choices whose bodies have the same shape (shared_bodies.h) then
/// share one region instead, so a packet runs it once whichever of them its lanes take.
Values symbolic_choices(std::vector<Choice>& choices, const Values& args, size_t lanes, const std::string& what,
                        const char* statement, const std::string& name) {
  std::vector<Values> outs(choices.size());
  std::vector<BodyShape> shapes(choices.size());
  for (size_t k = 0; k < choices.size(); ++k) {
    outs[k] = guarded_region(choices[k].lanes_mask, choices[k].run, args, {}, lanes, what, statement, name,
                             k ? &outs[0] : nullptr,
                             [&](const auto& run, const Values& own_args, const Values&, uint64_t first_serial) {
                               Values outputs = run(own_args);
                               shapes[k] = body_shape(outputs, own_args, current_region(), first_serial);
                               return outputs;
                             });
  }
  // Groups of choices with one body shape: each member's results become the group's,
  // selected once with the group's lanes (kept by its first member).
  std::vector<bool> grouped(choices.size(), false);
  std::vector<Handle> group_lanes(choices.size());
  for (size_t a = 0; a < choices.size(); ++a) {
    if (grouped[a] || !shapes[a].shareable) continue;
    std::vector<size_t> members{a};
    std::vector<const BodyShape*> member_shapes{&shapes[a]};
    for (size_t b = a + 1; b < choices.size(); ++b) {
      if (grouped[b] || !shapes[b].shareable || shapes[b].tokens != shapes[a].tokens) continue;
      members.push_back(b);
      member_shapes.push_back(&shapes[b]);
    }
    if (members.size() < 2) continue;
    Handle lanes_mask = choices[a].lanes_mask;
    for (size_t i = 1; i < members.size(); ++i) lanes_mask = traced(Op::Or, lanes_mask, choices[members[i]].lanes_mask);
    std::optional<Values> out = shared_region(choices, members, shapes[a], member_shapes, lanes_mask, args, lanes, what,
                                              statement, name, outs[0]);
    if (!out) continue;  // keep the separate regions (correct, only slower)
    for (size_t m : members) {
      grouped[m] = true;
      outs[m] = *out;
    }
    group_lanes[a] = lanes_mask;
  }
  Values result = zeros_like(outs[0], 1);
  for (size_t k = 0; k < choices.size(); ++k) {
    if (grouped[k] && !group_lanes[k]) continue;  // selected with the first member of its group
    const Handle& mask = group_lanes[k] ? group_lanes[k] : choices[k].lanes_mask;
    for (size_t i = 0; i < result.size(); ++i) result[i] = select_values(mask, outs[k][i], result[i]);
  }
  return result;
}

/// symbolic_choices(), differentiable when derivatives may be needed (differentiate.h):
/// then its derivatives record the choices again with their functions wrapped.
Values symbolic_statement(std::vector<Choice>& choices, const Values& args, size_t lanes, const std::string& what,
                          const char* statement, const std::string& name) {
  if (!derivatives_possible()) return symbolic_choices(choices, args, lanes, what, statement, name);
  ChoicesRun run = [choices, lanes, what, statement, name](const Values& in, const FunctionWrap& wrap) {
    std::vector<Choice> wrapped = choices;
    for (Choice& choice : wrapped) choice.run = wrap(choice.run);
    return symbolic_choices(wrapped, in, lanes, what, statement, name);
  };
  return differentiable_choices(args, run, what);
}

/// Evaluated: each choice on its compacted lanes, one kernel per choice.
Values evaluated_choices(std::vector<Choice>& choices, const Values& args, size_t lanes, const std::string& what,
                         const char* statement, const std::string& name) {
  Values result;
  for (Choice& choice : choices) {
    const Handle& indices = choice.lanes;
    size_t taken = node_size(indices.index());
    Values out;
    {
      // Every compacted lane is active (side effects of size-1 values run once per lane).
      MaskScope scope(literal(VarType::Bool, 1, taken).index());
      // Fresh nodes: a one-lane argument passes ungathered and would be the caller's own array.
      Values inputs = fresh_values(gather_values(args, indices, lanes));
      InputWatchScope watch(statement, name, /*loop_state=*/false, inputs);
      try {
        out = choice.run(inputs);
      } catch (const SizeError& e) {
        throw SizeError(std::string(e.what()) + " (inside " + what + ", evaluated: each branch runs on the " +
                        std::to_string(taken) +
                        " lanes that take it, so per-lane arrays must be "
                        "passed as arguments rather than captured)");
      }
    }
    if (result.empty()) {
      for (const Handle& v : out)
        if (!v) throw ValueError("kiln: " + what + " returned an empty array");
      result = zeros_like(out, lanes);
      eval_values(result);  // scatter targets are memory
    }
    check_like(result, out, what);
    MaskScope unmasked(0);  // the results of all compacted lanes go back
    scatter_values(result, out, indices);
    eval_values(result);
  }
  return result;
}

}  // namespace

Values if_stmt(Index cond_index, const BodyFn& true_fn, const BodyFn& false_fn, const Values& args,
               std::optional<ControlMode> mode, const std::string& name) {
  std::string what = statement_title("if_stmt", name);
  Handle cond = checked_operand(cond_index, VarType::Bool, what, "the condition");
  Values all = args;
  all.push_back(cond);
  if (Handle enclosing = enclosing_mask()) all.push_back(enclosing);  // the lanes of a loop or branch
  size_t lanes = common_size(all, what, kBufferHint);
  if (node_size(cond.index()) != lanes) cond = traced(Op::And, cond, literal(VarType::Bool, 1, lanes));  // per lane
  std::vector<Choice> choices(2);
  choices[0].lanes_mask = cond;
  choices[0].run = true_fn;
  choices[1].lanes_mask = traced(Op::Not, cond);
  choices[1].run = false_fn;
  if (resolve_mode(mode, what) == ControlMode::Symbolic) {
    return symbolic_statement(choices, args, lanes, what, "if_stmt", name);
  }
  eval_values(all);
  for (Choice& choice : choices) choice.lanes = active_lanes(within_enclosing(choice.lanes_mask));
  return evaluated_choices(choices, args, lanes, what, "if_stmt", name);
}

Values dispatch(Index ids_index, const std::vector<uint32_t>& instances, const InstanceFn& fn, const Values& args,
                std::optional<ControlMode> mode, const std::string& name) {
  std::string what = statement_title("dispatch", name);
  Handle ids = checked_operand(ids_index, VarType::UInt32, what, "the instance ids");
  if (instances.empty())
    throw ValueError("kiln: " + what +
                     ": no instances are registered, so the result types are unknown; "
                     "register at least one instance");
  Values all = args;
  all.push_back(ids);
  if (Handle enclosing = enclosing_mask()) all.push_back(enclosing);
  size_t lanes = common_size(all, what, kBufferHint);
  std::vector<Choice> choices(instances.size());
  for (size_t k = 0; k < instances.size(); ++k) {
    uint32_t id = instances[k];
    choices[k].run = [fn, id](const Values& values) { return fn(id, values); };  // kept by derivatives
  }
  if (resolve_mode(mode, what) == ControlMode::Symbolic) {
    for (size_t k = 0; k < instances.size(); ++k)
      choices[k].lanes_mask = traced(Op::Eq, ids, literal(VarType::UInt32, instances[k]));
    return symbolic_statement(choices, args, lanes, what, "dispatch", name);
  }
  // The lanes of each instance (lanes outside the enclosing mask and unknown ids take no choice).
  Handle enclosing = enclosing_mask();
  Handle effective = enclosing ? select_values(enclosing, ids, literal(VarType::UInt32, 0)) : ids;
  eval_values(all);
  std::vector<Index> taken = lanes_by_value(effective.index(), instances, lanes);
  for (size_t k = 0; k < instances.size(); ++k) choices[k].lanes = Handle::steal(taken[k]);
  return evaluated_choices(choices, args, lanes, what, "dispatch", name);
}

}  // namespace kiln::detail
