// The kernel cache: finds the kernel for a canonical form in memory, then on disk, and
// otherwise compiles it, deciding which literal slots become parameters (generalize.h)
// and why the compilation happened (compile_reason.h). A hit skips code generation.
//
// Start reading here for the cache. Lookup order: the specialized kernel (every literal
// baked in) and the shape's generic kernel, in memory, then on disk; on a miss the plan
// of generalize.h picks the parameter slots, the kernel is compiled, kept in memory and
// written to disk, and a shape that generalized records its parameter slots on disk too,
// so that another process finds the generic kernel without compiling anything.
#pragma once

#include <kiln/runtime.h>

#include "backend/backend.h"
#include "util/hash.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace kiln::detail {

/// What kernel_history() shows of a kernel: the form as compiled (parameters as Param
/// statements) and the notes of its statements when it was compiled or loaded.
struct LaunchListing {
  std::shared_ptr<const KernelForm> form;  ///< as compiled: shared by every launch of the kernel
  StatementNotes notes;
  bool labelled = false;  ///< some note carries a label
};

/// The diagnostics of the statements being launched, gathered on demand.
struct StatementNoteSource {
  std::function<StatementNotes()> gather;
  /// Labels may be involved (some live node has one). When not, a cache hit whose
  /// listing has no labels either reuses that listing instead of gathering notes.
  bool labels_live = true;
};

/// A kernel ready to launch, and where it came from.
struct CachedKernel {
  std::shared_ptr<const Kernel> kernel;
  std::shared_ptr<const LaunchListing> listing;
  KernelSource source = KernelSource::Compiled;
  CompileTimes times;  ///< zero for hits
  Hash128 key, shape;
  std::vector<uint64_t> parameters;  ///< the launch's parameter block
  std::string reason;                ///< why it was compiled; empty for hits
};

/// The kernel for `form`: from memory, from disk, or compiled, with the listing of this
/// launch (labels as traced now; creation sites of a hit without labels are those of the
/// launch that compiled or loaded it, so that hits need not gather notes).
CachedKernel find_or_compile(Backend& backend, const KernelForm& form, const StatementNoteSource& notes);

}  // namespace kiln::detail
