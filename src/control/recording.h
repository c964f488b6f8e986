// Recording a symbolic region (src/ir/region.h): what a symbolic while_loop and a symbolic
// branch or call share. The body is traced once, on placeholders of the state, with the
// lanes active in the iteration as the current mask.
#pragma once

#include "control/lanes.h"

#include <functional>

namespace kiln::detail {

/// Traces `body(state placeholders)` once into a loop over `lanes` lanes that runs while
/// `cond(placeholders)` holds. The body returns the new state and may add `outputs`:
/// values that leave the loop as well (zero for lanes that never ran an iteration).
/// Returns the state after the loop, then the outputs. With `once`, the body runs at most
/// one iteration (a guarded branch or call) and the outputs are only defined on the lanes
/// where `cond` held.
Values record_region(const char* statement, const std::string& name, size_t lanes, const Values& initial,
                     const ConditionFn& cond, const std::function<Values(const Values&, Values& outputs)>& body,
                     bool once = false);

}  // namespace kiln::detail
