// The format fields of print_async(): "{}" and Python's format specifications "{:.3f}",
// "{:>8}", "{:+e}", "{:#x}", "{{" and "}}", parsed when print_async() is called (so a bad
// field fails there, naming it) and applied to each printed value.
#pragma once

#include <kiln/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::detail {

/// One replacement field: [[fill]align][sign][#][0][width][.precision][type].
struct FormatSpec {
  char fill = ' ';
  char align = 0;   ///< '<', '>', '^', '=' or 0 (right for numbers)
  char sign = '-';  ///< '+', '-' or ' '
  bool alternate = false;
  bool zero = false;
  int width = 0;
  int precision = -1;  ///< -1: none given
  char type = 0;       ///< e E f F g G % d x X o b, or 0 for the default form
  std::string text;    ///< the field as written, for messages
};

/// A format split at its fields: text[0], field 0, text[1], field 1, ..., text[n].
struct ParsedFormat {
  std::vector<std::string> text;
  std::vector<std::string> specs;  ///< what follows ':' in each field ("" for "{}")
};

/// Splits `format` into text and fields; throws ValueError for an unmatched brace or a
/// field other than {} and {:spec}.
ParsedFormat parse_format(const std::string& format);
/// Parses the specification of a field for a value of `type`; throws ValueError naming the
/// field and what is accepted.
FormatSpec parse_format_spec(const std::string& spec, VarType type);
/// The value at `p` (of `type`) formatted as `spec` says.
std::string format_value(const FormatSpec& spec, VarType type, const uint8_t* p);

}  // namespace kiln::detail
