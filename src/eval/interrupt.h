// Ctrl-C while kernels run: SIGINT is caught for the duration of a launch that can run long
// (or of an evaluated loop), kernels stop at their next loop iteration or block, and the caller gets
// kiln::Interrupted with Kiln still usable; the signal then goes on to the handler that
// was installed before (Python's, which raises KeyboardInterrupt).
#pragma once

#include <atomic>
#include <cstdint>

namespace kiln::detail {

/// Nonzero once SIGINT arrived inside an InterruptScope; generated code polls it.
std::atomic<uint32_t>& interrupt_flag();

/// Catches SIGINT while alive (nested scopes share the outermost one). A process that
/// ignores SIGINT keeps ignoring it.
class InterruptScope {
 public:
  InterruptScope();
  ~InterruptScope();
  InterruptScope(const InterruptScope&) = delete;
  InterruptScope& operator=(const InterruptScope&) = delete;
};

/// Throws kiln::Interrupted when SIGINT arrived inside the current scope.
void throw_if_interrupted();

}  // namespace kiln::detail
