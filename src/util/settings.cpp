// Flags, log level and launch block size, initialized from KILN_* environment variables.
#include "util/settings.h"

#include "util/env.h"

#include <kiln/errors.h>

#include <atomic>
#include <iostream>
#include <mutex>

namespace kiln {
namespace {

LogLevel env_log_level() {
  return LogLevel(detail::env_choice("KILN_LOG",
                                     {{"error", int(LogLevel::Error)},
                                      {"warn|warning", int(LogLevel::Warn)},
                                      {"info", int(LogLevel::Info)},
                                      {"debug", int(LogLevel::Debug)}},
                                     int(LogLevel::Warn)));
}

bool env_interpreter() {
  return detail::env_choice("KILN_BACKEND", {{"llvm|cpu", 0}, {"interp|interpreter", 1}}, 0) == 1;
}

struct Settings {
  std::atomic<bool> checks{detail::env_flag("KILN_CHECKS", false)};
  std::atomic<bool> interpreter{env_interpreter()};
  std::atomic<bool> generalize{detail::env_flag("KILN_GENERALIZE", true)};
  std::atomic<bool> disk_cache{detail::env_flag("KILN_DISK_CACHE", true)};
  std::atomic<bool> symbolic{detail::env_flag("KILN_SYMBOLIC", true)};
  std::atomic<uint32_t> threshold{uint32_t(detail::env_unsigned("KILN_GENERALIZE_AFTER", 1, 1000000, 2))};
  std::atomic<LogLevel> level{env_log_level()};
  std::atomic<size_t> block_size{16384};
  std::atomic<uint32_t> kernel_split{5000};
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
    case Flag::Generalize: settings().generalize = value; return;
    case Flag::DiskCache: settings().disk_cache = value; return;
    case Flag::Symbolic: settings().symbolic = value; return;
  }
}

bool flag(Flag f) {
  switch (f) {
    case Flag::Checks: return settings().checks;
    case Flag::Interpreter: return settings().interpreter;
    case Flag::Generalize: return settings().generalize;
    case Flag::DiskCache: return settings().disk_cache;
    case Flag::Symbolic: return settings().symbolic;
  }
  return false;
}

namespace detail {
void store_block_size(size_t lanes) { settings().block_size = lanes; }
}  // namespace detail

void set_log_level(LogLevel level) { settings().level = level; }
LogLevel log_level() { return settings().level; }

size_t block_size() { return settings().block_size; }

void set_kernel_split(uint32_t statements) { settings().kernel_split = statements; }
uint32_t kernel_split() { return settings().kernel_split; }

void set_generalization_threshold(uint32_t variants) {
  if (variants == 0)
    throw ValueError(
        "kiln: set_generalization_threshold(): 0 variants; use 1 (every literal is a parameter), "
        "2 (the default: literals that change at the second variant) or more");
  settings().threshold = variants;
}
uint32_t generalization_threshold() { return settings().threshold; }

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
