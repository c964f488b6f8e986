// Warns once when traced but unevaluated work keeps growing across evaluations: the sign
// of an array that a loop updates and never evaluates. It keeps its whole history, so
// every kernel that reads it compiles all of it again and each iteration is slower than
// the last (Dr.Jit users met this as mitsuba3 #369 and drjit #60).
#pragma once

#include <cstddef>

namespace kiln::detail {

/// Evaluations in a row, each ending with more pending nodes than the one before, after
/// which the warning is given...
inline constexpr unsigned kGrowingEvaluations = 16;
/// ...once at least this many nodes are pending (fewer compile in well under a second).
inline constexpr size_t kGrowingPendingNodes = 10000;

/// Called at the end of each evaluation with the number of pending nodes.
void watch_pending_growth(size_t pending_nodes);
/// Forgets what was seen and allows the warning again (for tests).
void reset_growth_watch();

/// While one lives, evaluations are not watched: an AD traversal emits its derivative code
/// as it goes, so what is pending grows by design until it ends, and the evaluations it
/// needs on the way (a scatter's target, a horizontal sum) are not a loop's iterations.
class GrowthWatchPause {
 public:
  GrowthWatchPause();
  ~GrowthWatchPause();
  GrowthWatchPause(const GrowthWatchPause&) = delete;
  GrowthWatchPause& operator=(const GrowthWatchPause&) = delete;
};

}  // namespace kiln::detail
