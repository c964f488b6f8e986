// Process-wide settings (flags, log level, block size), read from the environment once.
#pragma once

#include <kiln/runtime.h>

#include <cstdio>
#include <string>

namespace kiln::detail {

/// Prints a log line to stderr when `level` is enabled.
void log(LogLevel level, const std::string& message);
bool log_enabled(LogLevel level);

}  // namespace kiln::detail
