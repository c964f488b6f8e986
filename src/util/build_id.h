// The identity of this build of Kiln: a hash of the loaded library file, so that kernels
// cached on disk by another build (even of the same version) are never used by this one.
#pragma once

#include <string>

namespace kiln::detail {

/// "0.1.0+<16 hex digits>": the version and the XXH3 hash of the library's file.
const std::string& build_id();

}  // namespace kiln::detail
