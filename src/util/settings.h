// Process-wide settings (flags, log level, block size), read from the environment once.
#pragma once

#include <kiln/runtime.h>

#include <cstdio>
#include <string>

namespace kiln::detail {

/// Prints a log line to stderr when `level` is enabled.
void log(LogLevel level, const std::string& message);
bool log_enabled(LogLevel level);
/// Sets block_size() (set_block_size(), in the backend, checks it against the packet width).
void store_block_size(size_t lanes);

}  // namespace kiln::detail
