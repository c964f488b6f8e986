// Derivatives of loops (see differentiate.h): forward mode runs the loop again with the
// tangents of its state carried beside it; reverse mode runs the body's adjoint backwards
// over the stored trajectory (trajectory.h), or, for a loop that only accumulates (a sum
// loop, symbolic or evaluated), forwards again, storing nothing.
#include "control/differentiate_statement.h"
#include "control/trajectory.h"

#include <kiln/errors.h>

#include "ir/node.h"

#include <utility>

namespace kiln::detail {
namespace {

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
    ControlModeScope primal_default = derivative_scope();
    size_t n = inputs_.size();
    ConditionFn cond = [this, n](const Values& s) { return cond_(Values(s.begin(), s.begin() + long(n))); };
    Values all = with_only_this_traversal(
        g, n, [&] { return run_(concat(inputs_, gradients_for(inputs_, g)), cond, tangent_function(body_, n)); });
    return by_position(outputs_, all, n);
  }

  std::vector<Index> backward_grads(const std::vector<Index>& g) override {
    ControlModeScope primal_default = derivative_scope();
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
    BodyFn step = [this, floats, adjoint](const Values& s) {
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

}  // namespace

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
