// Op counts, host-call argument lists and printing of the canonical kernel form.
#include "form/kernel_form.h"

#include "ir/host_function.h"
#include "ir/op_info.h"

#include <algorithm>
#include <cstring>
#include <sstream>

namespace kiln::detail {

size_t KernelForm::op_count() const {
  size_t count = 0;
  for (const KernelStatement& s : statements) count += op_arity(s.op) > 0;
  return count;
}

const StatementNote* find_note(const StatementNotes& notes, uint32_t position) {
  auto it = std::lower_bound(notes.begin(), notes.end(), position,
                             [](const StatementNote& n, uint32_t p) { return n.position < p; });
  return it != notes.end() && it->position == position ? &*it : nullptr;
}

std::vector<bool> values_read(const KernelForm& form) {
  std::vector<bool> read(form.statements.size(), false);
  for (const KernelStatement& user : form.statements)
    for (int k = op_has_buffer_operand(user.op) ? 1 : 0; k < op_arity(user.op); ++k) read[user.operands[k]] = true;
  for (uint32_t i = 0; i < form.statements.size(); ++i)
    if (form.statements[i].output_slot != kNoSlot) read[i] = true;
  return read;
}

std::vector<uint32_t> host_argument_cells(const KernelForm& form, uint32_t call) {
  std::vector<uint32_t> cells;
  for (uint32_t p = form.statements[call].operands[3]; form.statements[p].op == Op::HostArg;
       p = form.statements[p].operands[0])
    cells.push_back(p);
  std::reverse(cells.begin(), cells.end());
  return cells;
}

std::string describe_origin(const StatementNote* note) {
  if (!note) return {};
  std::string text;
  if (!note->label.empty()) text = (note->derived ? "computed from `" : "label `") + note->label + "`";
  if (note->created.line())
    text += (text.empty() ? "created at " : ", created at ") + std::string(note->created.file_name()) + ":" +
            std::to_string(note->created.line());
  else if (!note->labelled_at.empty())
    text += ", labelled at " + note->labelled_at;
  return text;
}

std::string print_kernel_form(const KernelForm& form, const StatementNotes& notes) {
  std::ostringstream out;
  out << "kernel inputs=" << form.input_count << " outputs=" << form.output_count << (form.checks ? " checked" : "")
      << "\n";
  std::string indent = "  ";  // two more spaces inside each loop
  size_t next_slot = 0;       // a scheduled form's literal slots, in statement order
  for (size_t i = 0; i < form.statements.size(); ++i) {
    const KernelStatement& s = form.statements[i];
    if (s.op == Op::LoopEnd) indent.resize(indent.size() - 2);
    out << indent << "%" << i << " = " << type_name(s.type) << " " << op_name(s.op);
    if (s.op == Op::LoopBegin) indent += "  ";
    for (int k = 0; k < op_arity(s.op); ++k) out << (k ? ", %" : " %") << s.operands[k];
    if (s.op == Op::Literal && next_slot < form.slots.positions.size() && form.slots.positions[next_slot] == i) {
      out << " 0x" << std::hex << form.slots.values[next_slot] << std::dec << " slot" << next_slot
          << (form.slots.opaque[next_slot] ? " opaque" : "");
      ++next_slot;
    } else if (s.op == Op::Literal) {
      out << " 0x" << std::hex << s.literal << std::dec;
    }
    if (s.op == Op::Param) out << " #" << s.literal;
    if (s.op == Op::Scatter && s.literal) out << " reduce=" << s.literal;
    if (std::string host = describe_host_node(s.op, s.literal); !host.empty()) out << " " << host;
    if (s.op == Op::Data) out << " in" << s.input_slot << (s.broadcast ? " broadcast" : "");
    if (s.op == Op::Cast || s.op == Op::Bitcast) out << " from " << type_name(s.operand_type);
    if (s.output_slot != kNoSlot) out << " -> out" << s.output_slot;
    if (std::string origin = describe_origin(find_note(notes, uint32_t(i))); !origin.empty()) out << "  # " << origin;
    out << "\n";
  }
  return out.str();
}

}  // namespace kiln::detail
