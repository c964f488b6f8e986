// The warning about pending work that grows across evaluations (see growth_watch.h).
#include "eval/growth_watch.h"

#include "ir/node.h"
#include "util/settings.h"

#include <string>

namespace kiln::detail {
namespace {

struct GrowthWatch {
  size_t last = 0;       ///< pending nodes after the previous evaluation
  unsigned growing = 0;  ///< evaluations in a row that ended with more than the one before
  bool warned = false;
  unsigned paused = 0;  ///< GrowthWatchPauses alive
};
GrowthWatch& growth_watch() {
  static GrowthWatch watch;  // guarded by the state lock, as evaluation is
  return watch;
}

}  // namespace

void watch_pending_growth(size_t pending_nodes) {
  GrowthWatch& w = growth_watch();
  if (w.paused) return;
  w.growing = pending_nodes > w.last ? w.growing + 1 : 0;
  w.last = pending_nodes;
  if (w.warned || w.growing < kGrowingEvaluations || pending_nodes < kGrowingPendingNodes) return;
  w.warned = true;
  log(LogLevel::Warn,
      "traced operations that are never evaluated kept piling up: " + std::to_string(pending_nodes) +
          " are pending after this evaluation, more after each of the last " + std::to_string(w.growing) +
          " evaluations. An array that a loop updates but never evaluates carries its whole history, and every "
          "kernel that reads it compiles all of it again, so each iteration gets slower. Evaluate the loop's "
          "state in the loop body (eval(x), or make_opaque(x)); build the computation in one go only if it is "
          "meant to be one large kernel. (This warning is shown once.)");
}

void reset_growth_watch() {
  unsigned paused = growth_watch().paused;
  growth_watch() = GrowthWatch{};
  growth_watch().paused = paused;
}

GrowthWatchPause::GrowthWatchPause() {
  StateLock lock(state().mutex);
  ++growth_watch().paused;
}

GrowthWatchPause::~GrowthWatchPause() {
  StateLock lock(state().mutex);
  --growth_watch().paused;
}

}  // namespace kiln::detail
