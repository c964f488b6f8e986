// kiln_bench's kernel-cache groups (cache_bench.cpp): story 1's loop with and without
// literal generalization (and Dr.Jit's, when it is installed), and what a launch costs
// when its kernel comes from memory, from disk or from a cold compile.
#pragma once

#include "report.h"

#include <kiln/runtime.h>

#include <vector>

namespace bench {

/// Sets a Kiln flag for the lifetime of the object, then restores its previous value.
class ScopedFlag {
 public:
  ScopedFlag(kiln::Flag flag, bool value) : flag_(flag), saved_(kiln::flag(flag)) { kiln::set_flag(flag, value); }
  ~ScopedFlag() { kiln::set_flag(flag_, saved_); }
  ScopedFlag(const ScopedFlag&) = delete;
  ScopedFlag& operator=(const ScopedFlag&) = delete;

 private:
  kiln::Flag flag_;
  bool saved_;
};

/// `story`: 30 iterations of examples/film_camera.h with random cameras (fixed seed),
/// generalization on against off, every compilation real (disk cache off, caches flushed).
void run_story(bool quick, std::vector<Row>& rows);

/// `cache`: eval() of a 100- and a 5,000-op kernel found in memory, loaded from disk, or
/// compiled cold; a temporary disk cache directory is used and removed.
void run_cache(bool quick, std::vector<Row>& rows);

}  // namespace bench
