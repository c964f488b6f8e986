// Python-style format fields for print_async() (see format_spec.h): the parser and the
// formatting of one value. Floats with a type or precision go through snprintf; integers
// in bases 2, 8, 10 and 16 through std::to_chars; the default form is the shortest
// representation that reads back exactly (as Python's repr).
#include "control/format_spec.h"

#include <kiln/errors.h>

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string_view>

namespace kiln::detail {
namespace {

constexpr std::string_view kFloatTypes = "eEfFgG%";
constexpr std::string_view kIntTypes = "dxXob";

[[noreturn]] void bad_spec(const std::string& spec, VarType type, const std::string& why) {
  throw ValueError("kiln: print_async(): the field \"{:" + spec + "}\" cannot format a " + type_name(type) +
                   " value: " + why +
                   ". Fields are {} or {:[[fill]align][sign][#][0][width][.precision][type]}, "
                   "type one of e E f F g G % for floats, d x X o b (and the float types) for integers, none "
                   "for Bool");
}

template <typename T> T load(const uint8_t* p) {
  T value;
  std::memcpy(&value, p, sizeof(T));
  return value;
}

/// The shortest round-trip text of a value (True/False for Bool).
std::string shortest(VarType type, const uint8_t* p) {
  char text[64];
  auto write = [&](auto value) { return std::string(text, std::to_chars(text, text + sizeof(text), value).ptr); };
  switch (type) {
    case VarType::Bool: return *p ? "True" : "False";
    case VarType::Int32: return write(load<int32_t>(p));
    case VarType::UInt32: return write(load<uint32_t>(p));
    case VarType::Int64: return write(load<int64_t>(p));
    case VarType::UInt64: return write(load<uint64_t>(p));
    case VarType::Float32: return write(load<float>(p));
    case VarType::Float64: return write(load<double>(p));
  }
  return "?";
}

double as_double(VarType type, const uint8_t* p) {
  switch (type) {
    case VarType::Bool: return *p ? 1.0 : 0.0;
    case VarType::Int32: return double(load<int32_t>(p));
    case VarType::UInt32: return double(load<uint32_t>(p));
    case VarType::Int64: return double(load<int64_t>(p));
    case VarType::UInt64: return double(load<uint64_t>(p));
    case VarType::Float32: return double(load<float>(p));
    case VarType::Float64: return load<double>(p);
  }
  return 0;
}

/// Magnitude digits and sign of an integer lane in `base`.
std::pair<std::string, bool> integer_digits(VarType type, const uint8_t* p, int base) {
  char text[72];
  auto write = [&](auto magnitude) {
    return std::string(text, std::to_chars(text, text + sizeof(text), magnitude, base).ptr);
  };
  switch (type) {
    case VarType::Int32: {
      int64_t v = load<int32_t>(p);
      return {write(uint64_t(v < 0 ? -v : v)), v < 0};
    }
    case VarType::Int64: {
      int64_t v = load<int64_t>(p);
      uint64_t magnitude = v < 0 ? uint64_t(0) - uint64_t(v) : uint64_t(v);
      return {write(magnitude), v < 0};
    }
    case VarType::UInt32: return {write(uint64_t(load<uint32_t>(p))), false};
    case VarType::UInt64: return {write(load<uint64_t>(p)), false};
    case VarType::Bool: return {write(uint64_t(*p)), false};
    case VarType::Float32:
    case VarType::Float64: break;
  }
  return {"?", false};
}

/// Pads `body` (whose sign, if any, is `sign_prefix`) to the width of the field.
std::string pad(const FormatSpec& spec, const std::string& sign_prefix, const std::string& body) {
  size_t length = sign_prefix.size() + body.size();
  if (spec.width <= 0 || length >= size_t(spec.width)) return sign_prefix + body;
  size_t missing = size_t(spec.width) - length;
  char align = spec.align ? spec.align : '>';
  char fill = spec.fill;
  if (spec.zero && !spec.align) {
    align = '=';
    fill = '0';
  }
  switch (align) {
    case '<': return sign_prefix + body + std::string(missing, fill);
    case '^': return std::string(missing / 2, fill) + sign_prefix + body + std::string(missing - missing / 2, fill);
    case '=': return sign_prefix + std::string(missing, fill) + body;
    default: return std::string(missing, fill) + sign_prefix + body;
  }
}

std::string sign_of(const FormatSpec& spec, bool negative) {
  if (negative) return "-";
  return spec.sign == '+' ? "+" : spec.sign == ' ' ? " " : "";
}

std::string format_float(const FormatSpec& spec, double value) {
  bool negative = std::signbit(value) && !std::isnan(value);
  double magnitude = std::fabs(value);
  std::string body;
  if (!spec.type && spec.precision < 0) {
    char text[64];
    body.assign(text, std::to_chars(text, text + sizeof(text), magnitude).ptr);
  } else {
    char type = spec.type ? spec.type : 'g';
    bool percent = type == '%';
    if (percent) {
      type = 'f';
      magnitude *= 100;
    }
    int precision = spec.precision >= 0 ? spec.precision : 6;
    std::string conversion = std::string("%") + (spec.alternate ? "#" : "") + ".*" + type;
    char text[512];
    std::snprintf(text, sizeof(text), conversion.c_str(), precision, magnitude);
    body = text;
    if (percent) body += '%';
  }
  return pad(spec, sign_of(spec, negative), body);
}

}  // namespace

ParsedFormat parse_format(const std::string& format) {
  ParsedFormat parsed;
  parsed.text.emplace_back();
  for (size_t i = 0; i < format.size(); ++i) {
    char c = format[i];
    bool doubled = i + 1 < format.size() && format[i + 1] == c;
    if ((c == '{' || c == '}') && doubled) {
      parsed.text.back() += c;
      ++i;
    } else if (c == '{') {
      size_t close = format.find('}', i);
      if (close == std::string::npos)
        throw ValueError("kiln: print_async(): the format \"" + format +
                         "\" has a '{' without a '}'; write {{ for a brace");
      std::string field = format.substr(i + 1, close - i - 1);
      if (!field.empty() && field[0] != ':')
        throw ValueError("kiln: print_async(): the field \"{" + field + "}\" in \"" + format +
                         "\" is not supported; fields are {} or {:spec}, filled in order");
      parsed.specs.push_back(field.empty() ? field : field.substr(1));
      parsed.text.emplace_back();
      i = close;
    } else if (c == '}') {
      throw ValueError("kiln: print_async(): the format \"" + format +
                       "\" has a '}' without a '{'; write }} for a brace");
    } else {
      parsed.text.back() += c;
    }
  }
  return parsed;
}

FormatSpec parse_format_spec(const std::string& spec, VarType type) {
  FormatSpec result;
  result.text = spec;
  auto is_align = [](char c) { return c == '<' || c == '>' || c == '^' || c == '='; };
  size_t i = 0, n = spec.size();
  if (n >= 2 && is_align(spec[1])) {
    result.fill = spec[0];
    result.align = spec[1];
    i = 2;
  } else if (n >= 1 && is_align(spec[0])) {
    result.align = spec[0];
    i = 1;
  }
  if (i < n && (spec[i] == '+' || spec[i] == '-' || spec[i] == ' ')) result.sign = spec[i++];
  if (i < n && spec[i] == '#') result.alternate = (++i, true);
  if (i < n && spec[i] == '0') result.zero = (++i, true);
  for (; i < n && spec[i] >= '0' && spec[i] <= '9'; ++i) {
    result.width = result.width * 10 + (spec[i] - '0');
    if (result.width > 256) bad_spec(spec, type, "widths above 256 are not supported");
  }
  if (i < n && spec[i] == '.') {
    if (++i == n || spec[i] < '0' || spec[i] > '9') bad_spec(spec, type, "'.' needs a precision after it");
    result.precision = 0;
    for (; i < n && spec[i] >= '0' && spec[i] <= '9'; ++i) {
      result.precision = result.precision * 10 + (spec[i] - '0');
      if (result.precision > 100) bad_spec(spec, type, "precisions above 100 are not supported");
    }
  }
  if (i < n) result.type = spec[i++];
  if (i < n) bad_spec(spec, type, "unexpected '" + spec.substr(i) + "' after the type");
  bool float_type = result.type && kFloatTypes.find(result.type) != std::string_view::npos;
  bool int_type = result.type && kIntTypes.find(result.type) != std::string_view::npos;
  if (result.type && !float_type && !int_type) bad_spec(spec, type, std::string("unknown type '") + result.type + "'");
  if (type == VarType::Bool && (result.type || result.precision >= 0 || result.sign != '-' || result.zero))
    bad_spec(spec, type, "Bool values take only fill, alignment and width");
  if (is_float(type) && int_type) bad_spec(spec, type, std::string("'") + result.type + "' is an integer type");
  if (!is_float(type) && type != VarType::Bool && result.precision >= 0 && !float_type)
    bad_spec(spec, type, "integers take a precision only with a float type (f, e, g, %)");
  return result;
}

std::string format_value(const FormatSpec& spec, VarType type, const uint8_t* p) {
  bool float_type = spec.type && kFloatTypes.find(spec.type) != std::string_view::npos;
  if (is_float(type) || float_type) {
    if (is_float(type) && !spec.type && spec.precision < 0 && spec.width == 0 && spec.sign == '-')
      return shortest(type, p);
    return format_float(spec, as_double(type, p));
  }
  if (type == VarType::Bool) return pad(spec, "", shortest(type, p));
  int base = spec.type == 'x' || spec.type == 'X' ? 16 : spec.type == 'o' ? 8 : spec.type == 'b' ? 2 : 10;
  auto [digits, negative] = integer_digits(type, p, base);
  if (spec.type == 'X')
    for (char& c : digits) c = char(std::toupper(static_cast<unsigned char>(c)));
  std::string prefix = sign_of(spec, negative);
  if (spec.alternate && base != 10) prefix += base == 16 ? (spec.type == 'X' ? "0X" : "0x") : base == 8 ? "0o" : "0b";
  return pad(spec, prefix, digits);
}

}  // namespace kiln::detail
