// IR verifier: checks the invariants of the node table (operands live and created earlier,
// reference counts consistent, sizes broadcast-compatible, Data nodes hold buffers).
// Runs after every evaluation in debug builds and on demand in tests.
#pragma once

#include <string>

namespace kiln::detail {

/// Returns an empty string when the IR is consistent, else a description of the first
/// violation found.
std::string verify_ir();

}  // namespace kiln::detail
