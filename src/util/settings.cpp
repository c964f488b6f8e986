// Flags, log level and launch block size, initialized from KILN_* environment variables.
#include "util/settings.h"

#include <kiln/errors.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <mutex>

namespace kiln {
namespace {

bool env_true(const char* name) {
  const char* value = std::getenv(name);
  return value && (std::strcmp(value, "1") == 0 || std::strcmp(value, "true") == 0 ||
                   std::strcmp(value, "on") == 0);
}

LogLevel env_log_level() {
  const char* value = std::getenv("KILN_LOG");
  if (!value) return LogLevel::Warn;
  std::string v = value;
  if (v == "error") return LogLevel::Error;
  if (v == "info") return LogLevel::Info;
  if (v == "debug") return LogLevel::Debug;
  return LogLevel::Warn;
}

bool env_interpreter() {
  const char* value = std::getenv("KILN_BACKEND");
  return value && std::strcmp(value, "interp") == 0;
}

struct Settings {
  std::atomic<bool> checks{env_true("KILN_CHECKS")};
  std::atomic<bool> interpreter{env_interpreter()};
  std::atomic<LogLevel> level{env_log_level()};
  std::atomic<size_t> block_size{16384};
};
Settings& settings() {
  static Settings instance;
  return instance;
}

}  // namespace

void set_flag(Flag f, bool value) {
  switch (f) {
    case Flag::Checks: settings().checks = value; return;
    case Flag::Interpreter: settings().interpreter = value; return;
  }
}

bool flag(Flag f) {
  switch (f) {
    case Flag::Checks: return settings().checks;
    case Flag::Interpreter: return settings().interpreter;
  }
  return false;
}

void set_log_level(LogLevel level) { settings().level = level; }
LogLevel log_level() { return settings().level; }

void set_block_size(size_t lanes) {
  size_t width = size_t(packet_width());
  if (lanes == 0 || lanes % width != 0)
    throw SizeError("kiln: set_block_size(): " + std::to_string(lanes) +
                    " lanes is not a positive multiple of the packet width " + std::to_string(width));
  settings().block_size = lanes;
}
size_t block_size() { return settings().block_size; }

namespace detail {
bool log_enabled(LogLevel level) { return level <= settings().level; }
void log(LogLevel level, const std::string& message) {
  if (!log_enabled(level)) return;
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  std::cerr << "kiln: " << message << std::endl;
}
}  // namespace detail

}  // namespace kiln
