// Reading KILN_* environment variables: one parser for every setting. Values match without
// regard to case or surrounding spaces; a value that is not accepted is reported on stderr
// with the accepted ones, and the default is used.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>

namespace kiln::detail {

/// One accepted value of a variable: its spellings separated by '|' ("info|i"), and what it means.
struct EnvChoice {
  const char* spellings;
  int value;
};

/// The variable's value with surrounding spaces removed, or nothing when it is unset or empty.
std::optional<std::string> env_text(const char* name);
/// A yes/no variable: 1/true/on/yes/y/enable(d) or 0/false/off/no/n/disable(d).
bool env_flag(const char* name, bool fallback);
/// The value of the first of `choices` that spells the variable's value.
int env_choice(const char* name, std::initializer_list<EnvChoice> choices, int fallback);
/// A decimal integer in [min, max].
uint64_t env_unsigned(const char* name, uint64_t min, uint64_t max, uint64_t fallback);
/// A byte count with an optional K, M or G suffix (powers of 1024).
size_t env_bytes(const char* name, size_t fallback);

}  // namespace kiln::detail
