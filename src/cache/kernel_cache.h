// The in-memory kernel cache: compiled kernels keyed by the structural hash of their
// canonical form. A hit skips code generation entirely. (The disk cache and literal
// generalization extend this key; see DESIGN.md "Kernel identity".)
#pragma once

#include "backend/backend.h"
#include "util/hash.h"

#include <memory>

namespace kiln::detail {

/// Where a launched kernel came from.
enum class KernelSource : uint8_t { Compiled, Memory };

struct CachedKernel {
  std::shared_ptr<const Kernel> kernel;
  KernelSource source;
  CompileTimes times;  ///< zero for hits
};

/// Returns the kernel for `form` (hash `key`), compiling it on a miss.
CachedKernel find_or_compile(Backend& backend, const KernelForm& form, const Hash128& key);

}  // namespace kiln::detail
