// A symbolic loop's trajectory for reverse mode (LoopDerivative::max_iterations): the
// primal loop stores each lane's state before every iteration, and the adjoint loop
// gathers it back, last iteration first. A lane that ran more iterations than were stored
// makes reverse mode raise, never truncate silently.
#pragma once

#include "control/differentiate.h"

namespace kiln::detail {

/// The primal loop's per-lane trajectory: the state before each iteration.
struct Trajectory {
  size_t max_iterations = 0, lanes = 0;
  Values buffers;     ///< one per state value, max_iterations * lanes entries
  Handle lane_ids;    ///< 0..lanes-1
  Handle width;       ///< `lanes`, opaque: a kernel serves every lane count
  Handle iterations;  ///< per lane, how many iterations ran (a result of the loop)

  /// Where iteration `iteration` of each lane is stored.
  Handle position(const Handle& iteration) const;
};

/// Runs the primal loop with an iteration counter in front of its state, storing each lane's
/// state before every iteration in trajectory `t` (at most `max_iterations`); returns the
/// loop's results without the counter. `body` is the (discovering) body.
Values run_recording_trajectory(const Values& state, const ConditionFn& cond, const BodyFn& body, const LoopRun& run,
                                size_t max_iterations, const std::string& what, Trajectory& t);

/// Raises now when the longest of `iterations` exceeds `max_iterations`, or, inside another
/// symbolic statement, once the kernel that computes them has run.
void check_trajectory(const Handle& iterations, size_t max_iterations, const std::string& what);

}  // namespace kiln::detail
