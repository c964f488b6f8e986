// Text and JSON output of kiln_bench's rows.
#include "report.h"

#include <cstdio>
#include <iomanip>
#include <sstream>

namespace bench {
namespace {

std::string format(const char* pattern, double value) {
  char text[64];
  std::snprintf(text, sizeof(text), pattern, value);
  return text;
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) {
      out += format("\\u%04x", double(static_cast<unsigned char>(c)));
      continue;
    }
    out += c;
  }
  return out + "\"";
}

std::string json_number(double value) {
  if (std::isnan(value) || std::isinf(value)) return "null";
  return format("%.9g", value);
}

const char* goal_kind(Goal goal) {
  switch (goal) {
    case Goal::None: return "";
    case Goal::RatioAtLeast: return "ratio_at_least";
    case Goal::KilnAtMost: return "kiln_s_at_most";
  }
  return "";
}

const char* unit_name(Unit unit) {
  switch (unit) {
    case Unit::Seconds: return "s";
    case Unit::Bytes: return "bytes";
    case Unit::Count: return "count";
  }
  return "";
}

}  // namespace

std::string format_value(double value, Unit unit) {
  if (std::isnan(value)) return "-";
  switch (unit) {
    case Unit::Seconds: return format_seconds(value);
    case Unit::Bytes: return std::fabs(value) >= 1e9 ? format("%.2f GB", value / 1e9) : format("%.1f MB", value / 1e6);
    case Unit::Count: return format("%.0f", value);
  }
  return "";
}

std::string format_seconds(double s) {
  if (std::isnan(s)) return "-";
  double a = std::fabs(s);
  auto three = [](double v, const char* unit) {
    const char* pattern = v >= 100 ? "%.0f %s" : v >= 10 ? "%.1f %s" : "%.2f %s";
    char text[64];
    std::snprintf(text, sizeof(text), pattern, v, unit);
    return std::string(text);
  };
  if (a >= 1) return three(s, "s");
  if (a >= 1e-3) return three(s * 1e3, "ms");
  if (a >= 1e-6) return three(s * 1e6, "us");
  return three(s * 1e9, "ns");
}

std::string Row::status() const {
  switch (goal) {
    case Goal::None: return "";
    case Goal::RatioAtLeast: return ratio() >= goal_value ? "PASS" : "MISS";
    case Goal::KilnAtMost: return kiln_s <= goal_value ? "PASS" : "MISS";
  }
  return "";
}

std::string Row::goal_text() const {
  switch (goal) {
    case Goal::None: return "";
    case Goal::RatioAtLeast: return format(">= %.2fx", goal_value);
    case Goal::KilnAtMost: return "<= " + format_value(goal_value, unit);
  }
  return "";
}

void print_table(std::ostream& out, const Facts& facts, const std::vector<Row>& rows) {
  for (const auto& [key, value] : facts) out << key << ": " << value << "\n";
  out << "ratio = baseline / Kiln (time, or the row's memory or count; higher is better for Kiln); "
         "times are medians\n\n";
  size_t name_width = 9;
  for (const Row& r : rows) name_width = std::max(name_width, r.name.size());
  auto line = [&](const std::string& name, const std::string& kiln, const std::string& base, const std::string& ratio,
                  const std::string& goal, const std::string& status, const std::string& note) {
    out << std::left << std::setw(int(name_width) + 2) << name << std::right << std::setw(10) << kiln << std::setw(11)
        << base << std::setw(9) << ratio << "  " << std::left << std::setw(11) << goal << std::setw(6) << status << note
        << "\n";
  };
  line("benchmark", "kiln", "baseline", "ratio", "goal", "", "notes");
  line(std::string(name_width, '-'), "--------", "--------", "-----", "----", "", "-----");
  for (const Row& r : rows)
    line(r.name, format_value(r.kiln_s, r.unit), r.has_baseline() ? format_value(r.baseline_s, r.unit) : "-",
         r.has_baseline() ? format("%.2fx", r.ratio()) : "-", r.goal_text(), r.status(), r.note);
  size_t pass = 0, miss = 0;
  for (const Row& r : rows) {
    pass += r.status() == "PASS";
    miss += r.status() == "MISS";
  }
  out << "\n" << pass << " PASS, " << miss << " MISS\n";
}

void print_json(std::ostream& out, const Facts& facts, const std::vector<Row>& rows) {
  out << "{\n  \"config\": {";
  for (size_t i = 0; i < facts.size(); ++i)
    out << (i ? ", " : "") << json_string(facts[i].first) << ": " << json_string(facts[i].second);
  out << "},\n  \"rows\": [\n";
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    out << "    {\"name\": " << json_string(r.name) << ", \"kiln_s\": " << json_number(r.kiln_s)
        << ", \"baseline_s\": " << json_number(r.baseline_s)
        << ", \"ratio\": " << json_number(r.has_baseline() ? r.ratio() : kNone)
        << ", \"goal\": " << json_string(r.goal_text()) << ", \"goal_kind\": " << json_string(goal_kind(r.goal))
        << ", \"goal_value\": " << json_number(r.goal == Goal::None ? kNone : r.goal_value)
        << ", \"unit\": " << json_string(unit_name(r.unit)) << ", \"status\": " << json_string(r.status())
        << ", \"note\": " << json_string(r.note) << "}" << (i + 1 < rows.size() ? "," : "") << "\n";
  }
  out << "  ]\n}\n";
}

}  // namespace bench
