// Compilation reasons (see compile_reason.h).
#include "cache/compile_reason.h"

#include "ir/op_info.h"

#include <cstdio>
#include <cstring>

namespace kiln::detail {
namespace {

bool is_slot(Op op) { return op == Op::Literal || op == Op::Param; }

/// A value of type `type` given by its bits, as a user would write it.
std::string format_value(VarType type, uint64_t bits) {
  char text[64];
  switch (type) {
    case VarType::Bool: return bits ? "true" : "false";
    case VarType::Int32: std::snprintf(text, sizeof(text), "%d", int32_t(uint32_t(bits))); break;
    case VarType::UInt32: std::snprintf(text, sizeof(text), "%u", uint32_t(bits)); break;
    case VarType::Int64: std::snprintf(text, sizeof(text), "%lld", (long long)int64_t(bits)); break;
    case VarType::UInt64: std::snprintf(text, sizeof(text), "%llu", (unsigned long long)bits); break;
    case VarType::Float32: {
      float f;
      uint32_t b = uint32_t(bits);
      std::memcpy(&f, &b, sizeof(f));
      std::snprintf(text, sizeof(text), "%.9g", double(f));
      break;
    }
    case VarType::Float64: {
      double d;
      std::memcpy(&d, &bits, sizeof(d));
      std::snprintf(text, sizeof(text), "%.17g", d);
      break;
    }
  }
  return text;
}

/// "literal #3 (u32, label `x`, created at f.cpp:1)"
std::string describe_slot(const KernelForm& form, const KernelShape& shape, size_t slot, const StatementNotes& notes) {
  uint32_t position = shape.slots.positions[slot];
  std::string text = "literal #" + std::to_string(slot) + " (" + type_name(form.statements[position].type);
  std::string origin = describe_origin(find_note(notes, position));
  return text + (origin.empty() ? "" : ", " + origin) + ")";
}

/// Whether two statements generate the same code (literal slots compare as placeholders).
bool same_structure(const KernelStatement& a, const KernelStatement& b) {
  bool slot = is_slot(a.op);
  if (slot != is_slot(b.op)) return false;
  if (!slot && (a.op != b.op || a.literal != b.literal)) return false;
  if (a.type != b.type || a.operand_type != b.operand_type || a.broadcast != b.broadcast ||
      a.input_slot != b.input_slot || a.output_slot != b.output_slot)
    return false;
  for (int k = 0; k < op_arity(a.op); ++k)
    if (a.operands[k] != b.operands[k]) return false;
  return true;
}

size_t common_prefix(const KernelForm& a, const KernelForm& b) {
  size_t n = std::min(a.statements.size(), b.statements.size());
  size_t i = 0;
  while (i < n && same_structure(a.statements[i], b.statements[i])) ++i;
  return i;
}

/// "Mul f32 (%3, %7)"
std::string describe_statement(const KernelStatement& s) {
  std::string text = std::string(op_name(s.op)) + " " + type_name(s.type);
  int arity = op_arity(s.op);
  for (int k = 0; k < arity; ++k) text += (k ? ", %" : " (%") + std::to_string(s.operands[k]);
  if (arity) text += ")";
  if (s.op == Op::Data) text += " from input " + std::to_string(s.input_slot) + (s.broadcast ? " (broadcast)" : "");
  if (s.output_slot != kNoSlot) text += " stored to output " + std::to_string(s.output_slot);
  return text;
}

}  // namespace

std::string describe_literal_changes(const KernelForm& form, const KernelShape& shape,
                                     const std::vector<size_t>& changed, const std::vector<uint64_t>& old_values,
                                     const StatementNotes& notes) {
  if (changed.empty()) return {};
  // Name a slot the user labelled when there is one, else one computed from labelled ones.
  auto rank = [&](size_t slot) {
    const StatementNote* note = find_note(notes, shape.slots.positions[slot]);
    return !note || note->label.empty() ? 2 : note->derived ? 1 : 0;
  };
  size_t first = changed.front();
  for (size_t slot : changed)
    if (rank(slot) < rank(first)) first = slot;
  VarType type = form.statements[shape.slots.positions[first]].type;
  std::string text = describe_slot(form, shape, first, notes) + " changed " + format_value(type, old_values[first]) +
                     " \u2192 " + format_value(type, shape.slots.values[first]);
  if (changed.size() > 1)
    text += " and " + std::to_string(changed.size() - 1) + " more literal" + (changed.size() > 2 ? "s" : "");
  return text;
}

void CompiledShapes::add(const Hash128& key, std::shared_ptr<const KernelForm> form) {
  recent_.emplace_front(key, std::move(form));
  if (recent_.size() > kRemembered) recent_.pop_back();
}

std::string CompiledShapes::explain_new_shape(const KernelForm& form, const StatementNotes& notes) const {
  std::string reason = "first time this kernel shape was seen";
  const std::pair<Hash128, std::shared_ptr<const KernelForm>>* closest = nullptr;
  size_t best = 0;
  for (const auto& entry : recent_) {
    size_t prefix = common_prefix(form, *entry.second);
    if (!closest || prefix > best) {
      closest = &entry;
      best = prefix;
    }
  }
  if (!closest) return reason;
  const KernelForm& other = *closest->second;
  reason += "; closest compiled kernel: " + closest->first.hex() + " (" + std::to_string(other.op_count()) + " ops)";
  if (best == form.statements.size() && best == other.statements.size())
    return reason + ", which differs only in its header (inputs, outputs, checks or packet width)";
  reason += ", first difference at statement " + std::to_string(best) + ": ";
  reason += best < form.statements.size() ? describe_statement(form.statements[best]) : "(end of kernel)";
  reason += " vs ";
  reason += best < other.statements.size() ? describe_statement(other.statements[best]) : "(end of kernel)";
  if (best < form.statements.size())
    if (std::string origin = describe_origin(find_note(notes, uint32_t(best))); !origin.empty())
      reason += " (" + origin + ")";
  return reason;
}

}  // namespace kiln::detail
