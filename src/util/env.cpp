// The environment-variable parser (see env.h).
#include "util/env.h"

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>

namespace kiln::detail {
namespace {

std::string lowercase(std::string text) {
  for (char& c : text) c = char(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

/// Printed directly, not through log(): the log level is itself read from the environment.
void reject(const char* name, const std::string& value, const std::string& accepted, const std::string& fallback) {
  std::fprintf(stderr, "kiln: %s=\"%s\" is not a valid value (accepted: %s); using %s\n", name, value.c_str(),
               accepted.c_str(), fallback.c_str());
}

/// Whether `value` is one of the '|'-separated `spellings`.
bool spelled(const std::string& value, const std::string& spellings) {
  for (size_t start = 0;;) {
    size_t end = spellings.find('|', start);
    if (spellings.substr(start, end - start) == value) return true;
    if (end == std::string::npos) return false;
    start = end + 1;
  }
}

/// "a|b, c|d": the accepted spellings for a message.
std::string listing(std::initializer_list<EnvChoice> choices) {
  std::string text;
  for (const EnvChoice& c : choices) text += (text.empty() ? "" : ", ") + std::string(c.spellings);
  return text;
}

}  // namespace

std::optional<std::string> env_text(const char* name) {
  const char* raw = std::getenv(name);
  if (!raw) return std::nullopt;
  std::string value = raw;
  size_t first = value.find_first_not_of(" \t\r\n"), last = value.find_last_not_of(" \t\r\n");
  if (first == std::string::npos) return std::nullopt;
  return value.substr(first, last - first + 1);
}

int env_choice(const char* name, std::initializer_list<EnvChoice> choices, int fallback) {
  std::optional<std::string> value = env_text(name);
  if (!value) return fallback;
  std::string key = lowercase(*value);
  for (const EnvChoice& c : choices)
    if (spelled(key, c.spellings)) return c.value;
  std::string default_name = "the default";
  for (const EnvChoice& c : choices)
    if (c.value == fallback) {
      std::string first = c.spellings;
      default_name = "the default (" + first.substr(0, first.find('|')) + ")";
      break;
    }
  reject(name, *value, listing(choices), default_name);
  return fallback;
}

bool env_flag(const char* name, bool fallback) {
  return env_choice(name, {{"1|true|on|yes|y|enable|enabled", 1}, {"0|false|off|no|n|disable|disabled", 0}},
                    fallback) != 0;
}

uint64_t env_unsigned(const char* name, uint64_t min, uint64_t max, uint64_t fallback) {
  std::optional<std::string> value = env_text(name);
  if (!value) return fallback;
  char* end = nullptr;
  errno = 0;
  unsigned long long n = std::strtoull(value->c_str(), &end, 10);
  if (std::isdigit(static_cast<unsigned char>((*value)[0])) && *end == '\0' && errno != ERANGE && n >= min && n <= max)
    return n;
  reject(name, *value, "an integer from " + std::to_string(min) + " to " + std::to_string(max),
         "the default " + std::to_string(fallback));
  return fallback;
}

size_t env_bytes(const char* name, size_t fallback) {
  std::optional<std::string> value = env_text(name);
  if (!value) return fallback;
  char* end = nullptr;
  errno = 0;
  unsigned long long n = std::strtoull(value->c_str(), &end, 10);
  int shift = 0;
  switch (std::toupper(static_cast<unsigned char>(*end))) {
    case 'K':
      shift = 10;
      ++end;
      break;
    case 'M':
      shift = 20;
      ++end;
      break;
    case 'G':
      shift = 30;
      ++end;
      break;
  }
  if (std::toupper(static_cast<unsigned char>(*end)) == 'B' && shift) ++end;  // "512MB"
  if (std::isdigit(static_cast<unsigned char>((*value)[0])) && errno != ERANGE && *end == '\0' &&
      n <= (SIZE_MAX >> shift))
    return size_t(n) << shift;
  reject(name, *value, "bytes with an optional K, M or G suffix, e.g. 512M",
         "the default " + std::to_string(fallback) + " bytes");
  return fallback;
}

}  // namespace kiln::detail
