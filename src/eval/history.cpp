// Kernel history records, their IR listings and launch log lines.
#include "eval/history.h"

#include "ir/node.h"
#include "ir/op_info.h"
#include "util/settings.h"

#include <cstdio>

namespace kiln::detail {
namespace {

constexpr size_t kHistoryLimit = 4096;
std::vector<KernelLaunch>& history() {
  static std::vector<KernelLaunch>* instance = new std::vector<KernelLaunch>();
  return *instance;
}

void log_launch(const KernelLaunch& launch) {
  char line[320];
  int n =
      std::snprintf(line, sizeof(line), "launch %s on %s (%s) n=%zu ops=%zu in=%zu out=%zu se=%zu params=%zu %s",
                    launch.hash.c_str(), device_name(launch.device), launch.backend.c_str(), launch.size, launch.ops,
                    launch.inputs, launch.outputs, launch.side_effects, launch.parameters, source_name(launch.source));
  bool compiled = launch.source == KernelSource::Compiled || launch.source == KernelSource::Generalized;
  if (compiled)
    std::snprintf(line + n, sizeof(line) - n, " codegen=%.3f ms compile=%.3f ms run=%.3f ms", launch.codegen_ms,
                  launch.compile_ms, launch.run_ms);
  else
    std::snprintf(line + n, sizeof(line) - n, " lookup=%.3f ms run=%.3f ms", launch.lookup_ms, launch.run_ms);
  log(LogLevel::Info, compiled ? std::string(line) + ": " + launch.reason : std::string(line));
}

void append(KernelLaunch launch) {
  std::vector<KernelLaunch>& h = history();
  if (h.size() >= kHistoryLimit) h.erase(h.begin(), h.begin() + kHistoryLimit / 2);
  h.push_back(std::move(launch));
}

}  // namespace

void record_launch(const KernelForm& form, const CachedKernel& cached, size_t size, Device device, const char* backend,
                   double lookup_ms, double run_ms) {
  KernelLaunch launch;
  launch.hash = cached.key.hex();
  launch.shape_hash = cached.shape.hex();
  launch.size = size;
  launch.device = device;
  launch.backend = backend;
  launch.ops = form.op_count();
  launch.inputs = form.input_count;
  launch.outputs = form.output_count;
  for (const KernelStatement& s : form.statements) launch.side_effects += op_is_side_effect(s.op);
  launch.parameters = cached.parameters.size();
  launch.source = cached.source;
  launch.reason = cached.reason;
  launch.codegen_ms = cached.times.codegen_ms;
  launch.compile_ms = cached.times.compile_ms;
  launch.run_ms = run_ms;
  launch.lookup_ms = lookup_ms;
  launch.listing = cached.listing;
  if (log_enabled(LogLevel::Info)) log_launch(launch);
  append(std::move(launch));
}

void record_library_call(const std::string& what, size_t size, size_t inputs, Device device, double run_ms) {
  KernelLaunch launch;
  launch.size = size;
  launch.device = device;
  launch.backend = "library";
  launch.ops = 1;
  launch.inputs = inputs;
  launch.outputs = 1;
  launch.source = KernelSource::Library;
  launch.reason = what;
  launch.run_ms = run_ms;
  if (log_enabled(LogLevel::Info)) {
    char line[64];
    std::snprintf(line, sizeof(line), " n=%zu run=%.3f ms", size, run_ms);
    log(LogLevel::Info, "library " + what + line);
  }
  append(std::move(launch));
}

}  // namespace kiln::detail

namespace kiln {

std::string KernelLaunch::ir() const {
  if (!listing) return {};
  return detail::print_kernel_form(*listing->form, listing->notes);
}

std::vector<KernelLaunch> kernel_history(bool clear) {
  detail::StateLock lock(detail::state().mutex);
  std::vector<KernelLaunch> result = detail::history();
  if (clear) detail::history().clear();
  return result;
}

}  // namespace kiln
