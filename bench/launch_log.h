// Captures Kiln's info-level launch log (one line per kernel launch on std::cerr) for the
// duration of a scope, so the benchmark can read the compile times Kiln itself measured.
#pragma once

#include <kiln/runtime.h>

#include <cstdio>
#include <cstring>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace bench {

/// One "kiln: launch ..." line.
struct Launch {
  size_t ops = 0;
  bool compiled = false;  ///< false: the kernel came from the memory or disk cache
  double codegen_ms = 0, compile_ms = 0, run_ms = 0;
};

class LaunchLog {
 public:
  LaunchLog() : level_(kiln::log_level()), saved_(std::cerr.rdbuf(text_.rdbuf())) {
    kiln::set_log_level(kiln::LogLevel::Info);
  }
  ~LaunchLog() {
    std::cerr.rdbuf(saved_);
    kiln::set_log_level(level_);
  }
  LaunchLog(const LaunchLog&) = delete;
  LaunchLog& operator=(const LaunchLog&) = delete;

  /// The launches logged so far (lines that do not parse are skipped).
  std::vector<Launch> launches() const {
    std::vector<Launch> result;
    std::istringstream lines(text_.str());
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind("kiln: launch ", 0) != 0) continue;
      Launch l;
      l.ops = size_t(number_after(line, " ops="));
      l.compiled = line.find(" codegen=") != std::string::npos;  // only compilations log it
      l.codegen_ms = number_after(line, " codegen=");
      l.compile_ms = number_after(line, " compile=");
      l.run_ms = number_after(line, " run=");
      result.push_back(l);
    }
    return result;
  }
  /// Forgets what was captured so far.
  void clear() { text_.str(""); }

 private:
  static double number_after(const std::string& line, const char* key) {
    size_t at = line.find(key);
    return at == std::string::npos ? 0 : std::strtod(line.c_str() + at + std::strlen(key), nullptr);
  }

  kiln::LogLevel level_;
  std::ostringstream text_;
  std::streambuf* saved_;
};

}  // namespace bench
