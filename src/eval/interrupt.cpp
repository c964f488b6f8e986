// SIGINT during evaluation (see interrupt.h).
#include "eval/interrupt.h"

#include <kiln/errors.h>

#include <csignal>

namespace kiln::detail {
namespace {

std::atomic<uint32_t> interrupted{0};
/// Open scopes; only the outermost installs and restores the handler (evaluation holds
/// the state lock, so scopes nest on one thread at a time).
int depth = 0;
bool installed = false;
struct sigaction previous;

void on_interrupt(int) { interrupted.store(1, std::memory_order_relaxed); }

/// Hands a caught SIGINT to the handler that was installed before Kiln's (Python's marks
/// it, so the interpreter raises KeyboardInterrupt); the default action is replaced by the
/// kiln::Interrupted exception that the caller gets.
void forward_to_previous() {
  if (previous.sa_flags & SA_SIGINFO) {
    siginfo_t info{};
    info.si_signo = SIGINT;
    previous.sa_sigaction(SIGINT, &info, nullptr);
  } else if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN) {
    previous.sa_handler(SIGINT);
  }
}

}  // namespace

std::atomic<uint32_t>& interrupt_flag() { return interrupted; }

InterruptScope::InterruptScope() {
  if (depth++ > 0) return;
  struct sigaction action{};
  action.sa_handler = on_interrupt;
  sigemptyset(&action.sa_mask);
  installed = sigaction(SIGINT, &action, &previous) == 0;
  if (installed && previous.sa_handler == SIG_IGN && !(previous.sa_flags & SA_SIGINFO)) {
    sigaction(SIGINT, &previous, nullptr);
    installed = false;
  }
}

InterruptScope::~InterruptScope() {
  if (--depth > 0 || !installed) return;
  sigaction(SIGINT, &previous, nullptr);
  installed = false;
  if (interrupted.exchange(0)) forward_to_previous();
}

void throw_if_interrupted() {
  if (interrupted.load(std::memory_order_relaxed))
    throw Interrupted(
        "kiln: interrupted (SIGINT) while running kernels; results of the interrupted "
        "evaluation were discarded (scatters it ran may be partly applied)");
}

}  // namespace kiln::detail
