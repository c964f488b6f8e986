// Which mode a loop, branch or call runs in. A statement's mode is decided once, when it is
// traced, and never read again from anything global: its own `mode=` when given; inside a
// symbolic statement, symbolic (a region recorded into one kernel cannot launch kernels
// from the host, so nested statements inherit it); otherwise the innermost default in
// effect on this thread (ControlModeScope: an integrator's `mode`, or the default a
// derivative statement recorded when its primal was traced), and last the global flag.
#include <kiln/detail/control_api.h>
#include <kiln/errors.h>

#include "ir/node.h"
#include "ir/region.h"
#include "util/settings.h"

#include <vector>

namespace kiln::detail {
namespace {

/// The defaults of the ControlModeScopes alive on this thread, innermost last.
std::vector<ControlMode>& defaults() {
  thread_local std::vector<ControlMode> stack;
  return stack;
}

/// The symbolic statement being recorded, or 0.
uint32_t enclosing_region() {
  StateLock lock(state().mutex);
  return current_region();
}

}  // namespace

ControlMode default_mode() {
  if (enclosing_region()) return ControlMode::Symbolic;
  if (!defaults().empty()) return defaults().back();
  return flag(Flag::Symbolic) ? ControlMode::Symbolic : ControlMode::Evaluated;
}

ControlMode resolve_mode(std::optional<ControlMode> requested, const std::string& what) {
  if (requested == ControlMode::Evaluated) {
    if (uint32_t id = enclosing_region()) {
      std::string outer;
      {
        StateLock lock(state().mutex);
        outer = statement_title(region(id).statement, region(id).name);
      }
      throw ValueError("kiln: " + what + ": mode=evaluated inside " + outer +
                       ", which is symbolic: an evaluated statement launches kernels from the host, and a symbolic "
                       "one is recorded into a single kernel. Leave mode unset (a statement inside a symbolic one "
                       "is symbolic) or run the outer statement evaluated");
    }
    return ControlMode::Evaluated;
  }
  return requested ? *requested : default_mode();
}

}  // namespace kiln::detail

namespace kiln {

ControlModeScope::ControlModeScope(std::optional<ControlMode> mode) : active_(mode.has_value()) {
  if (active_) detail::defaults().push_back(*mode);
}

ControlModeScope::~ControlModeScope() {
  if (active_) detail::defaults().pop_back();
}

}  // namespace kiln
