// Literal generalization (DESIGN.md): the first variant of a kernel shape is compiled with
// its literals baked in; when the shape returns with other values in some literal slots
// (at the generalization threshold, by default the second distinct variant), those slots
// become parameters of one generic kernel that every later variant differing only there
// reuses. A variant that changes a slot not yet generalized widens the set once more, to
// every slot: at most three compilations per shape, whatever the program does.
#pragma once

#include "cache/kernel_key.h"

#include <string>
#include <vector>

namespace kiln::detail {

/// What is known about one kernel shape across the variants compiled for it.
struct ShapeRecord {
  std::vector<uint64_t> reference;  ///< slot values of the first variant seen
  std::vector<uint64_t> last;       ///< slot values of the latest variant compiled
  ParameterMask varied;             ///< slots seen with a value other than the reference
  ParameterMask parameters;         ///< slots the shape's generic kernel takes as parameters
  uint32_t variants = 0;            ///< distinct variants compiled
};

/// How to compile a variant that missed every cache.
struct CompilePlan {
  ParameterMask mask;                ///< slots to take as parameters
  bool generalized = false;          ///< the plan turns slots that varied into parameters
  size_t new_parameters = 0;         ///< slots that become parameters now
  std::vector<size_t> changed;       ///< slots to name in the reason (ones that changed)
  std::vector<uint64_t> old_values;  ///< their previous values (by slot)
  bool first_variant = false;        ///< nothing of this shape was compiled in this process
};

/// The plan for a variant of `shape` and the updated record (`record.parameters` may
/// come from the disk cache on first sight). `generalize` and `threshold` are the settings.
CompilePlan plan_compilation(ShapeRecord& record, const KernelShape& shape, bool generalize, uint32_t threshold);

}  // namespace kiln::detail
