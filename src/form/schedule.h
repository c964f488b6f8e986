// Scheduling: from a group of same-size roots and side effects, collect exactly the nodes
// they need (everything else is dead code and never reaches a kernel) in a deterministic
// order, and build the canonical kernel form.
#pragma once

#include "form/kernel_form.h"
#include "ir/node.h"

#include <vector>

namespace kiln::detail {

/// One kernel's worth of work: nodes of one size.
struct KernelGroup {
  size_t size = 0;
  Device device = Device::CPU;
  std::vector<Index> effects;  ///< side effects in program order
  std::vector<Index> roots;    ///< nodes to evaluate
};

/// A kernel form plus the node bookkeeping needed to launch it and collapse the results.
struct ScheduledKernel {
  KernelForm form;
  std::vector<Index> inputs;      ///< Data node per input slot
  std::vector<Index> outputs;     ///< node per output slot (become Data)
  std::vector<Index> statements;  ///< node per statement (diagnostics)
};

/// Splits roots and pending side effects into groups by size. Groups with side effects
/// come first, in program order of their first effect; then root-only groups.
/// Groups work by size and device, side effects first.
std::vector<KernelGroup> group_by_size(const std::vector<Index>& roots, const std::vector<Index>& effects);

/// Builds the canonical form of one group's kernel.
ScheduledKernel schedule_kernel(const KernelGroup& group, bool checks, uint32_t packet_width);

}  // namespace kiln::detail
