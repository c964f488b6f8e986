// Derivatives of symbolic loops, branches and calls (see differentiate.h).
#include "control/differentiate.h"

#include <kiln/errors.h>

#include "ir/node.h"
#include "ir/region.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace kiln::detail {
namespace {

bool is_float_value(const Handle& v) { return is_float(node_type(v.index())); }

/// True while a symbolic statement is being recorded (no host reads of its values).
bool inside_statement() {
  StateLock lock(state().mutex);
  return current_region() != 0;
}

Handle zeros_of(VarType type, size_t size) { return literal(type, 0, size); }

Values detached(const Values& values) {
  Values out;
  for (const Handle& v : values) out.push_back(v.detached());
  return out;
}

/// `fn` traced with derivatives recorded, so that the differentiable arrays it reads from
/// outside (AD nodes older than the call) are added to `captures`; returns its results
/// without derivatives (they belong to the statement's node).
BodyFn discovering(const BodyFn& fn, Values& captures) {
  return [fn, &captures](const Values& in) {
    uint64_t first = ad_next_serial();
    Values out = fn(in);
    std::vector<AdIndex> roots;
    for (const Handle& v : out)
      if (v.ad()) roots.push_back(v.ad());
    for (AdIndex c : ad_frontier(roots.data(), roots.size(), first)) {
      bool known = std::any_of(captures.begin(), captures.end(), [&](const Handle& h) { return h.ad() == c; });
      if (!known) captures.push_back(Handle::borrow(AdOperand{0, c}));
    }
    return detached(out);
  };
}

/// Fresh AD leaves for the floating-point values among the first `n` of `in`.
Values leaves_of(const Values& in, size_t n) {
  Values leaves;
  for (size_t k = 0; k < n; ++k) {
    if (!is_float_value(in[k])) {
      leaves.push_back(in[k].detached());
      continue;
    }
    Handle value = in[k].detached();
    AdIndex ad = ad_enable(value.index());
    leaves.push_back(Handle::steal(AdValue{value.release(), ad}));
  }
  return leaves;
}

/// The forward-mode function: in = n values, then one tangent per floating-point value;
/// out = fn's results, then one tangent per floating-point result. Tangents of captured
/// arrays come from their AD nodes (set by the traversal that reached the statement).
BodyFn tangent_function(const BodyFn& fn, size_t n) {
  return [fn, n](const Values& in) {
    RecordingScope on(true);
    IsolationScope scope(/*collect=*/false);
    Values leaves = leaves_of(in, n);
    for (size_t k = 0, t = n; k < n; ++k)
      if (leaves[k].ad()) ad_set_grad(leaves[k].ad(), in[t++].index());
    Values out = fn(leaves);
    std::vector<AdIndex> targets;
    for (const Handle& v : out)
      if (v.ad()) targets.push_back(v.ad());
    if (!targets.empty()) ad_forward_to(targets.data(), targets.size());
    Values result = detached(out);
    for (const Handle& v : out) {
      if (!is_float_value(v)) continue;
      Index g = v.ad() ? ad_grad(v.ad()) : 0;
      result.push_back(g ? Handle::steal(g) : zeros_of(node_type(v.index()), 1));
    }
    return result;
  };
}

/// The reverse-mode function: in = n values, then one adjoint per floating-point result
/// of fn; out = (with_outputs: fn's results, then) one adjoint per floating-point value,
/// then one contribution per capture, lane by lane. Contributions that are buffers written
/// by scatters in the statement (gathers from a captured array) go to `buffers` instead,
/// one list per capture, and `lane_wise` records which captures got a contribution lane
/// by lane at all: a capture only gathered from has none, whatever its size, so its
/// gradient takes the same path (and kernels the same shape) when its size happens to
/// equal the statement's lane count.
/// In an evaluated loop (`whole_arrays`), every contribution is instead a gradient of the
/// whole captured array (a one-entry capture's summed over the lanes), added into one
/// running buffer that is evaluated each iteration, so memory does not grow with them.
struct CaptureCollection {
  CaptureCollection(size_t captures, bool whole_arrays)
      : buffers(captures), lane_wise(captures, false), whole_arrays(whole_arrays) {}
  std::vector<Values> buffers;
  std::vector<bool> lane_wise;
  bool whole_arrays;
};

/// `total` + `part`, or `part` when there is no total yet.
Handle plus(const Handle& total, const Handle& part) { return total ? traced(Op::Add, total, part) : part; }

/// Adds capture `c`'s contributions of one evaluated iteration to its running buffer.
void add_whole_array(CaptureCollection& collection, size_t c, const Handle& capture, Handle contribution) {
  for (Index b : ad_collected_buffers(capture.ad())) contribution = plus(contribution, Handle::steal(b));
  if (!contribution) return;
  if (ad_size(capture.ad()) == 1 && node_size(contribution.index()) != 1)
    contribution = Handle::steal(reduce(Reduction::Sum, contribution.index()));
  Values& running = collection.buffers[c];
  if (running.empty()) running.emplace_back();
  running[0] = plus(running[0], contribution);
  Index total = running[0].index();
  eval(&total, 1);
}
using CaptureBuffers = std::shared_ptr<CaptureCollection>;
BodyFn adjoint_function(const BodyFn& fn, size_t n, const Values& captures, bool with_outputs, CaptureBuffers buffers) {
  return [fn, n, captures, with_outputs, buffers](const Values& in) {
    RecordingScope on(true);
    IsolationScope scope(/*collect=*/true);
    Values leaves = leaves_of(in, n);
    Values out = fn(leaves);
    std::vector<AdIndex> targets;
    size_t seed = n;
    for (const Handle& v : out) {
      if (!is_float_value(v)) continue;
      Handle g = in.at(seed++);
      if (!v.ad()) continue;
      // An evaluated loop's body runs on every lane; the adjoints of lanes that finished are 0.
      if (Index mask = current_mask(); buffers->whole_arrays && mask)
        g = traced(Op::Select, Handle::borrow(mask), g, zeros_of(node_type(g.index()), 1));
      ad_accumulate_grad(v.ad(), g.index());
      targets.push_back(v.ad());
    }
    // retain_graph: this graph is freed with `out` and the leaves anyway, and freeing its
    // edges now would mark the captured arrays' real uses as consumed (forward() from them
    // would raise).
    if (!targets.empty()) ad_backward(targets.data(), targets.size(), /*retain_graph=*/true);
    Values result = with_outputs ? detached(out) : Values{};
    for (const Handle& leaf : leaves) {
      if (!leaf.ad()) continue;
      Index g = ad_grad(leaf.ad());
      result.push_back(g ? Handle::steal(g) : zeros_of(node_type(leaf.index()), 1));
    }
    for (size_t c = 0; c < captures.size(); ++c) {
      Index g = ad_collected(captures[c].ad());
      if (buffers->whole_arrays) {
        add_whole_array(*buffers, c, captures[c], g ? Handle::steal(g) : Handle());
        result.push_back(zeros_of(ad_type(captures[c].ad()), 1));
        continue;
      }
      if (g) buffers->lane_wise[c] = true;
      result.push_back(g ? Handle::steal(g) : zeros_of(ad_type(captures[c].ad()), 1));
      for (Index b : ad_collected_buffers(captures[c].ad())) buffers->buffers[c].push_back(Handle::steal(b));
    }
    return result;
  };
}

/// Tangents (or adjoints) for the floating-point values among `like`: the given gradient
/// where there is one, zeros elsewhere.
Values gradients_for(const Values& like, const std::vector<Index>& grads) {
  Values out;
  for (size_t k = 0; k < like.size(); ++k) {
    if (!is_float_value(like[k])) continue;
    Index g = grads.at(k);
    out.push_back(g ? Handle::borrow(g) : zeros_of(node_type(like[k].index()), node_size(like[k].index())));
  }
  return out;
}

/// Spreads `values` (one per floating-point entry of `like`) over all of like's positions.
std::vector<Index> by_position(const Values& like, const Values& values, size_t first) {
  std::vector<Index> out;
  size_t j = first;
  for (const Handle& v : like) out.push_back(is_float_value(v) ? Handle(values.at(j++)).release() : 0);
  return out;
}

size_t float_count(const Values& values) { return size_t(std::count_if(values.begin(), values.end(), is_float_value)); }

Values concat(Values a, const Values& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

/// While a forward traversal runs a statement's tangent functions, the captured arrays the
/// traversal passed no tangent (those off its paths) hold no gradient: what another
/// traversal left there (an adjoint from backward(), an earlier forward()'s seed) is not a
/// tangent of this one. Restored when the scope ends.
class CaptureTangents {
 public:
  CaptureTangents(const Values& captures, const std::vector<Index>& g, size_t first) {
    for (size_t c = 0; c < captures.size(); ++c) {
      if (g.at(first + c)) continue;
      Handle kept = Handle::steal(ad_grad(captures[c].ad()));
      size_t lanes = kept ? node_size(kept.index()) : 0;
      if (!kept || (lanes != 1 && lanes != ad_size(captures[c].ad()))) continue;  // (restorable ones only)
      ad_set_grad(captures[c].ad(), 0);
      kept_.emplace_back(captures[c], std::move(kept));
    }
  }
  ~CaptureTangents() noexcept(false) {
    for (auto& [capture, grad] : kept_) ad_set_grad(capture.ad(), grad.index());
  }
  CaptureTangents(const CaptureTangents&) = delete;
  CaptureTangents& operator=(const CaptureTangents&) = delete;

 private:
  std::vector<std::pair<Handle, Handle>> kept_;
};

/// What every statement's node shares: the primal inputs and outputs and the captures.
class StatementDerivative : public CustomCallbacks {
 public:
  StatementDerivative(std::string what, Values inputs, Values outputs, Values captures)
      : what_(std::move(what)),
        inputs_(detached(inputs)),
        outputs_(detached(outputs)),
        captures_(std::move(captures)) {}
  std::string name() const override { return what_; }

 protected:
  /// Empty buffer lists, one per capture, for adjoint_function().
  CaptureBuffers new_buffers(bool whole_arrays = false) const {
    return std::make_shared<CaptureCollection>(captures_.size(), whole_arrays);
  }
  /// Gradients per input position: the inputs', then the captures' from `contributions`
  /// (lane by lane) and `buffers`.
  std::vector<Index> input_grads(const Values& grads, size_t first_grad, const Values& contributions,
                                 size_t first_contribution, const CaptureBuffers& buffers) const {
    std::vector<Index> out = by_position(inputs_, grads, first_grad);
    for (size_t c = 0; c < captures_.size(); ++c) {
      Handle total = contributions.at(first_contribution + c);
      size_t lanes = node_size(total.index()), size = ad_size(captures_[c].ad());
      // Lane-wise zeros: for a capture of another size, or one that got no lane-wise contribution.
      if (buffers->whole_arrays || (size != 1 && lanes != 1 && (lanes != size || !buffers->lane_wise[c])))
        total = Handle();
      if (inside_statement()) {
        // Nested in another statement's adjoint: hand each buffer to the enclosing
        // collection as it is (a scatter buffer, kept apart there), since a sum of buffers
        // is not one; only the lane-wise part is this input's gradient.
        for (const Handle& b : buffers->buffers[c]) ad_accumulate_grad(captures_[c].ad(), b.index());
        out.push_back(total.release());
        continue;
      }
      for (const Handle& b : buffers->buffers[c]) total = plus(total, b);
      out.push_back(total.release());
    }
    return out;
  }
  std::string what_;
  Values inputs_, outputs_, captures_;
};

class ChoicesDerivative final : public StatementDerivative {
 public:
  ChoicesDerivative(std::string what, Values args, Values outputs, Values captures, ChoicesRun run)
      : StatementDerivative(std::move(what), std::move(args), std::move(outputs), std::move(captures)),
        run_(std::move(run)) {}

  std::vector<Index> forward_grads(const std::vector<Index>& g) override {
    size_t n = inputs_.size();
    CaptureTangents only_this_traversal(captures_, g, n);
    Values all =
        run_(concat(inputs_, gradients_for(inputs_, g)), [n](const BodyFn& fn) { return tangent_function(fn, n); });
    return by_position(outputs_, all, outputs_.size());
  }
  std::vector<Index> backward_grads(const std::vector<Index>& g) override {
    size_t n = inputs_.size();
    const Values& captures = captures_;
    CaptureBuffers buffers = new_buffers();
    Values all = run_(concat(inputs_, gradients_for(outputs_, g)), [n, &captures, buffers](const BodyFn& fn) {
      return adjoint_function(fn, n, captures, false, buffers);
    });
    return input_grads(all, 0, all, float_count(inputs_), buffers);
  }

 private:
  ChoicesRun run_;
};

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
    uint32_t longest = *static_cast<const uint32_t*>(n.buffer->data());
    DeferredCheck check = std::move(checks[k]);
    checks.erase(checks.begin() + long(k));
    if (longest > check.max_iterations) throw ValueError(overflow_message(check.what, longest, check.max_iterations));
  }
}

/// Raises now when the longest of `iterations` exceeds `max_iterations`, or, inside another
/// symbolic statement, once the kernel that computes them has run.
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

/// The primal loop's per-lane trajectory (max_iterations): the state before each iteration.
struct Trajectory {
  size_t max_iterations = 0, lanes = 0;
  Values buffers;     ///< one per state value, max_iterations * lanes entries
  Handle lane_ids;    ///< 0..lanes-1
  Handle width;       ///< `lanes`, opaque: a kernel serves every lane count
  Handle iterations;  ///< per lane, how many iterations ran (a result of the loop)

  Handle position(const Handle& iteration) const {
    return traced(Op::Add, traced(Op::Mul, iteration, width), lane_ids);
  }
};

class LoopDerivativeNode final : public StatementDerivative {
 public:
  LoopDerivativeNode(std::string what, Values state, Values outputs, Values captures, ConditionFn cond, BodyFn body,
                     LoopRun run, LoopDerivative options, Trajectory trajectory, bool evaluated)
      : StatementDerivative(std::move(what), std::move(state), std::move(outputs), std::move(captures)),
        cond_(std::move(cond)),
        body_(std::move(body)),
        run_(std::move(run)),
        options_(options),
        trajectory_(std::move(trajectory)),
        evaluated_(evaluated) {}

  std::vector<Index> forward_grads(const std::vector<Index>& g) override {
    size_t n = inputs_.size();
    ConditionFn cond = [this, n](const Values& s) { return cond_(Values(s.begin(), s.begin() + long(n))); };
    CaptureTangents only_this_traversal(captures_, g, n);
    Values all = run_(concat(inputs_, gradients_for(inputs_, g)), cond, tangent_function(body_, n));
    return by_position(outputs_, all, n);
  }

  std::vector<Index> backward_grads(const std::vector<Index>& g) override {
    if (options_.sum_loop) return sum_loop_adjoint(g);
    if (options_.max_iterations) return trajectory_adjoint(g);
    throw ValueError("kiln: " + what_ +
                     ": reverse mode of a symbolic loop needs its trajectory or a sum loop: pass "
                     "max_iterations=N (stores each lane's state for up to N iterations) or sum_loop=true (a loop that "
                     "only accumulates), or run the loop evaluated (ControlMode::Evaluated)");
  }

 private:
  /// Backwards over the stored trajectory: the body's adjoint, last iteration first.
  std::vector<Index> trajectory_adjoint(const std::vector<Index>& g) {
    const Trajectory& t = trajectory_;
    check_trajectory(t.iterations, t.max_iterations, what_);
    size_t n = inputs_.size(), floats = float_count(inputs_);
    Values state{t.iterations};
    for (const Handle& v : gradients_for(inputs_, g)) state.push_back(widened(v));
    for (const Handle& c : captures_) state.push_back(zeros_of(ad_type(c.ad()), t.lanes));
    ConditionFn remaining = [](const Values& s) { return traced(Op::Gt, s[0], literal(VarType::UInt32, 0)); };
    CaptureBuffers buffers = new_buffers();
    BodyFn adjoint = adjoint_function(body_, n, captures_, false, buffers);
    BodyFn step = [this, n, floats, adjoint](const Values& s) {
      const Trajectory& t = trajectory_;
      Handle iteration = traced(Op::Sub, s[0], literal(VarType::UInt32, 1));
      Handle position = t.position(iteration);
      Values in;
      for (const Handle& buffer : t.buffers)
        in.push_back(traced(Op::Gather, buffer, position, literal(VarType::Bool, 1)));
      for (size_t k = 0; k < floats; ++k) in.push_back(s[1 + k]);
      Values r = adjoint(in);
      Values next{iteration};
      for (size_t k = 0; k < floats; ++k) next.push_back(widened(r[k]));
      for (size_t c = 0; c < captures_.size(); ++c) next.push_back(traced(Op::Add, s[1 + floats + c], r[floats + c]));
      return next;
    };
    Values result = run_(state, remaining, step);
    return input_grads(result, 1, result, 1 + floats, buffers);
  }

  /// Forwards again, accumulating the captures' adjoints (sum loops store nothing).
  std::vector<Index> sum_loop_adjoint(const std::vector<Index>& g) {
    size_t n = inputs_.size(), floats = float_count(inputs_);
    Values seeds = gradients_for(outputs_, g);
    Values state = inputs_;
    for (const Handle& c : captures_) state.push_back(zeros_of(ad_type(c.ad()), lanes()));
    ConditionFn cond = [this, n](const Values& s) { return cond_(Values(s.begin(), s.begin() + long(n))); };
    CaptureBuffers buffers = new_buffers(evaluated_);
    BodyFn adjoint = adjoint_function(body_, n, captures_, true, buffers);
    BodyFn step = [this, n, floats, adjoint, seeds](const Values& s) {
      Values r = adjoint(concat(Values(s.begin(), s.begin() + long(n)), seeds));
      Values next(r.begin(), r.begin() + long(n));
      for (size_t c = 0; c < captures_.size(); ++c) next.push_back(traced(Op::Add, s[n + c], r[n + floats + c]));
      return next;
    };
    Values result = run_(state, cond, step);
    // The accumulators pass their adjoint straight through: d(acc_out)/d(acc_in) = 1.
    return input_grads(seeds, 0, result, n, buffers);
  }

  size_t lanes() const { return common_size(inputs_, what_); }
  /// A one-lane adjoint widened to the loop's lanes (loop state keeps its lane count).
  Handle widened(const Handle& v) const {
    size_t lanes = this->lanes();
    if (node_size(v.index()) == lanes) return v;
    return traced(Op::Add, v, zeros_of(node_type(v.index()), lanes));
  }

  ConditionFn cond_;
  BodyFn body_;
  LoopRun run_;
  LoopDerivative options_;
  Trajectory trajectory_;
  bool evaluated_;  ///< `run_` runs an evaluated loop
};

bool any_derivative(const Values& values) {
  return std::any_of(values.begin(), values.end(), [](const Handle& v) { return v.ad() != 0; });
}

/// The statement's outputs connected to its inputs and captures through `op`.
Values connect(std::shared_ptr<CustomCallbacks> op, const Values& inputs, const Values& captures,
               const Values& outputs) {
  std::vector<AdOperand> operands;
  for (const Handle& v : inputs) operands.push_back(v.operand());
  for (const Handle& c : captures) operands.push_back(c.operand());
  std::vector<Index> values;
  for (const Handle& v : outputs) values.push_back(v.index());
  Values result;
  for (const AdValue& v : ad_custom(std::move(op), operands, values)) result.push_back(Handle::steal(v));
  return result;
}

/// Runs the primal loop with an iteration counter in front of its state, storing each lane's
/// state before every iteration in trajectory `t` (at most `max_iterations`); returns the
/// loop's results without the counter.
Values run_recording_trajectory(const Values& state, const ConditionFn& cond, const BodyFn& discover,
                                const LoopRun& run, size_t max_iterations, const std::string& what, Trajectory& t) {
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
  BodyFn counted_body = [&t, &discover](const Values& s) {
    Handle stored = traced(Op::Lt, s[0], literal(VarType::UInt32, uint64_t(t.max_iterations)));
    Handle position = t.position(s[0]);
    for (size_t k = 0; k < t.buffers.size(); ++k) {
      Index target = t.buffers[k].index();
      trace_scatter(ReduceOp::None, target, s[1 + k].index(), position.index(), stored.index());
      if (target != t.buffers[k].index()) t.buffers[k] = Handle::steal(target);
    }
    Values next{traced(Op::Add, s[0], literal(VarType::UInt32, 1))};
    for (Handle& v : discover(Values(s.begin() + 1, s.end()))) next.push_back(std::move(v));
    return next;
  };
  Values all = run(concat({literal(VarType::UInt32, 0, t.lanes)}, detached(state)), counted_cond, counted_body);
  t.iterations = all[0];
  return Values(all.begin() + 1, all.end());
}

}  // namespace

bool derivatives_possible() { return ad_recording() && ad_node_count() > 0; }

void ad_check_traversal_allowed(const char* what) {
  StateLock lock(state().mutex);
  std::string statement;
  if (uint32_t id = current_region()) {
    statement = statement_title(region(id).statement, region(id).name);
  } else if (!state().input_watches.empty() && state().input_watches.back()) {
    const InputWatch& watch = *state().input_watches.back();
    statement = statement_title(watch.statement, watch.name);
  } else {
    return;
  }
  throw ValueError(std::string("kiln: ") + what + ": called inside " + statement +
                   ", which is tracing its functions; a traversal cannot start inside a loop, branch or call "
                   "(symbolic statements trace their functions once for every lane and iteration, evaluated ones "
                   "run them on the active lanes only). Start it after the statement, from its results");
}

Values differentiable_choices(const Values& args, const ChoicesRun& run, const std::string& what) {
  Values captures;
  Values outputs = run(detached(args), [&captures](const BodyFn& fn) { return discovering(fn, captures); });
  if (!any_derivative(args) && captures.empty()) return outputs;
  auto op = std::make_shared<ChoicesDerivative>(what, args, outputs, captures, run);
  return connect(op, args, captures, outputs);
}

Values differentiable_loop(const Values& state, const ConditionFn& cond, const BodyFn& body, const LoopRun& run,
                           const LoopDerivative& derivative, const std::string& what, bool evaluated) {
  Values captures;
  Trajectory trajectory;
  Values outputs;
  if (derivative.max_iterations && !derivative.sum_loop) {
    outputs = run_recording_trajectory(state, cond, discovering(body, captures), run, derivative.max_iterations, what,
                                       trajectory);
  } else {
    outputs = run(detached(state), cond, discovering(body, captures));
  }
  if (!any_derivative(state) && captures.empty()) return outputs;
  auto op = std::make_shared<LoopDerivativeNode>(what, state, outputs, captures, cond, body, run, derivative,
                                                 std::move(trajectory), evaluated);
  return connect(op, state, captures, outputs);
}

}  // namespace kiln::detail
