// Derivatives of symbolic statements: a symbolic loop, branch or call is traced once into
// a region, so its iterations leave no AD graph behind. Instead the statement becomes one
// CustomOp-like node of the AD graph whose derivatives are further symbolic statements,
// traced when a traversal reaches it:
//   forward mode   the statement again, with the tangents of its state or arguments
//                  carried beside them (any loop);
//   reverse mode   branches and calls: the adjoint of each branch, selected per lane;
//                  loops: the body's adjoint run backwards over the per-lane trajectory
//                  stored by the primal loop (max_iterations), or forwards again for loops
//                  that only accumulate (sum loops: nothing stored).
// Evaluated statements need none of this: their kernels run on arrays that carry AD nodes,
// so every iteration is recorded in the AD graph like straight-line code (except sum loops,
// which reverse mode runs again in either mode).
// A derivative statement is traced with the control-flow default its primal statement was
// traced under (control_api.h: resolve_mode), never with the one in effect when a traversal
// reaches it. Files: differentiate_statement.* (what all share; branches and calls),
// differentiate_loop.cpp (loops), trajectory.* (the stored iterations of reverse mode).
#pragma once

#include "control/lanes.h"

#include <functional>

namespace kiln::detail {

/// Replaces each function of a statement (a branch, an instance, a loop body) when the
/// statement is recorded again.
using FunctionWrap = std::function<BodyFn(const BodyFn&)>;
/// Records a symbolic branch or call over `inputs` with its functions wrapped.
using ChoicesRun = std::function<Values(const Values& inputs, const FunctionWrap& wrap)>;
/// Records a symbolic loop over `state`.
using LoopRun = std::function<Values(const Values& state, const ConditionFn& cond, const BodyFn& body)>;

/// True when a statement recorded now may need derivatives (recording is on and some AD
/// node exists that the statement could read).
bool derivatives_possible();

/// A symbolic if_stmt / dispatch with derivatives with respect to its arguments and to the
/// differentiable arrays its functions read from outside.
Values differentiable_choices(const Values& args, const ChoicesRun& run, const std::string& what);

/// A symbolic while_loop with derivatives (see LoopDerivative), or an evaluated sum loop
/// (`evaluated`: `run` runs an evaluated loop).
Values differentiable_loop(const Values& state, const ConditionFn& cond, const BodyFn& body, const LoopRun& run,
                           const LoopDerivative& derivative, const std::string& what, bool evaluated = false);

}  // namespace kiln::detail
