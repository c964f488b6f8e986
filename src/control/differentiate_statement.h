// What the derivatives of all symbolic statements share (differentiate.h explains the
// scheme): a statement's functions traced again with tangents or adjoints beside their
// primal values, and StatementDerivative, the callbacks of the statement's AD node, which
// keep its inputs, outputs and captured arrays and the control-flow default it was traced
// under. Branches and calls are differentiated in differentiate_statement.cpp, loops in
// differentiate_loop.cpp (with trajectory.h for reverse mode over stored iterations).
#pragma once

#include "control/differentiate.h"

#include <memory>
#include <optional>

namespace kiln::detail {

/// True while a symbolic statement is being recorded (no host reads of its values).
bool inside_statement();
Handle zeros_of(VarType type, size_t size);
/// The values without their AD nodes.
Values detached(const Values& values);
/// `total` + `part`, or `part` when there is no total yet.
Handle plus(const Handle& total, const Handle& part);
bool is_float_value(const Handle& v);
size_t float_count(const Values& values);
Values concat(Values a, const Values& b);
bool any_derivative(const Values& values);

/// `fn` traced with derivatives recorded, so that the differentiable arrays it reads from
/// outside (AD nodes older than the call) are added to `captures`; returns its results
/// without derivatives (they belong to the statement's node).
BodyFn discovering(const BodyFn& fn, Values& captures);

/// The forward-mode function: in = n values, then one tangent per floating-point value;
/// out = fn's results, then one tangent per floating-point result. Tangents of captured
/// arrays come from their AD nodes (set by the traversal that reached the statement).
BodyFn tangent_function(const BodyFn& fn, size_t n);

/// Where adjoint_function() puts the captures' gradients that are not lane by lane.
/// Contributions that are buffers written by scatters in the statement (gathers from a
/// captured array) go to `buffers`, one list per capture, and `lane_wise` records which
/// captures got a contribution lane by lane at all: a capture only gathered from has none,
/// whatever its size, so its gradient takes the same path (and kernels the same shape)
/// when its size happens to equal the statement's lane count.
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
using CaptureBuffers = std::shared_ptr<CaptureCollection>;

/// The reverse-mode function: in = n values, then one adjoint per floating-point result
/// of fn; out = (with_outputs: fn's results, then) one adjoint per floating-point value,
/// then one contribution per capture, lane by lane (the rest goes to `buffers`).
BodyFn adjoint_function(const BodyFn& fn, size_t n, const Values& captures, bool with_outputs, CaptureBuffers buffers);

/// Tangents (or adjoints) for the floating-point values among `like`: the given gradient
/// where there is one, zeros elsewhere.
Values gradients_for(const Values& like, const std::vector<Index>& grads);
/// Spreads `values` (one per floating-point entry of `like`, from `first` on) over all of
/// like's positions (0 where like's value is not floating-point).
std::vector<Index> by_position(const Values& like, const Values& values, size_t first);

/// The statement's outputs connected to its inputs and captures through `op`.
Values connect(std::shared_ptr<CustomCallbacks> op, const Values& inputs, const Values& captures,
               const Values& outputs);

/// What every statement's node shares: the primal inputs and outputs, the captures, and
/// the mode a statement without mode= got where the primal statement was traced. Its
/// derivative statements are traced with that default (derivative_scope()), not with
/// whatever default is in effect when a traversal happens to reach them.
class StatementDerivative : public CustomCallbacks {
 public:
  StatementDerivative(std::string what, Values inputs, Values outputs, Values captures);
  std::string name() const override { return what_; }

 protected:
  /// The scope to trace derivative statements in (see the class comment).
  ControlModeScope derivative_scope() const { return ControlModeScope(primal_default_); }
  /// Empty buffer lists, one per capture, for adjoint_function().
  CaptureBuffers new_buffers(bool whole_arrays = false) const;
  /// Gradients per input position: the inputs', then the captures' from `contributions`
  /// (lane by lane) and `buffers`.
  std::vector<Index> input_grads(const Values& grads, size_t first_grad, const Values& contributions,
                                 size_t first_contribution, const CaptureBuffers& buffers) const;
  /// `trace()` (a forward derivative) run while the captured arrays the traversal passed
  /// no tangent (`g` from `first` on is 0 for them) hold no gradient: what another
  /// traversal left there (an adjoint from backward(), an earlier forward()'s seed) is not
  /// a tangent of this one. Their gradients come back afterwards.
  Values with_only_this_traversal(const std::vector<Index>& g, size_t first,
                                  const std::function<Values()>& trace) const;

  std::string what_;
  Values inputs_, outputs_, captures_;
  ControlMode primal_default_;
};

}  // namespace kiln::detail
