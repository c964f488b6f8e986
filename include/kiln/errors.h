// Exceptions Kiln raises. Each message names the operation, the values involved and a fix.
#pragma once

#include <stdexcept>
#include <string>

namespace kiln {

/// Operands of incompatible types (e.g. adding Float and Int32 without a cast).
struct TypeError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};
/// Operands of incompatible sizes (only size-1 arrays broadcast).
struct SizeError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};
/// An invalid argument that is neither a type nor a size problem (an empty or freed
/// array, a zero step).
struct ValueError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};
/// An index outside an array (always for element reads; for gathers and scatters in
/// checked mode).
struct IndexError : std::out_of_range {
  using std::out_of_range::out_of_range;
};
/// Ctrl-C (SIGINT) arrived while kernels ran; they stopped and Kiln stays usable. Python
/// raises KeyboardInterrupt (through the handler that was installed before Kiln's).
struct Interrupted : std::runtime_error {
  using std::runtime_error::runtime_error;
};
/// A file that could not be read or written: missing, unreadable, or not in a supported
/// format (kiln.render's images and scenes).
struct FileError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
/// A failure of the compiler or the runtime that is not the caller's fault.
struct InternalError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace kiln
