// Hashing and printing of the canonical kernel form.
#include "eval/kernel_form.h"

#include "ir/op_info.h"

#include <cstring>
#include <sstream>

namespace kiln::detail {

Hash128 KernelForm::hash(uint32_t backend_id) const {
  // Serialize field by field so that padding never takes part.
  std::vector<uint8_t> bytes;
  bytes.reserve(statements.size() * 32 + 32);
  auto put = [&](const void* p, size_t n) {
    const uint8_t* b = static_cast<const uint8_t*>(p);
    bytes.insert(bytes.end(), b, b + n);
  };
  uint32_t header[] = {kKernelFormatVersion, backend_id, packet_width, input_count, output_count,
                       uint32_t(checks)};
  put(header, sizeof(header));
  for (const KernelStatement& s : statements) {
    uint8_t small[] = {uint8_t(s.op), uint8_t(s.type), uint8_t(s.operand_type), uint8_t(s.broadcast)};
    put(small, sizeof(small));
    put(s.operands, sizeof(s.operands));
    put(&s.literal, sizeof(s.literal));
    put(&s.input_slot, sizeof(s.input_slot));
    put(&s.output_slot, sizeof(s.output_slot));
  }
  return hash128_bytes(bytes.data(), bytes.size());
}

size_t KernelForm::op_count() const {
  size_t count = 0;
  for (const KernelStatement& s : statements)
    count += op_arity(s.op) > 0;
  return count;
}

std::string print_kernel_form(const KernelForm& form) {
  std::ostringstream out;
  out << "kernel inputs=" << form.input_count << " outputs=" << form.output_count
      << (form.checks ? " checked" : "") << "\n";
  for (size_t i = 0; i < form.statements.size(); ++i) {
    const KernelStatement& s = form.statements[i];
    out << "  %" << i << " = " << type_name(s.type) << " " << op_name(s.op);
    for (int k = 0; k < op_arity(s.op); ++k) out << (k ? ", %" : " %") << s.operands[k];
    if (s.op == Op::Literal) out << " 0x" << std::hex << s.literal << std::dec;
    if (s.op == Op::Scatter && s.literal) out << " reduce=" << s.literal;
    if (s.op == Op::Data) out << " in" << s.input_slot << (s.broadcast ? " broadcast" : "");
    if (s.op == Op::Cast || s.op == Op::Bitcast) out << " from " << type_name(s.operand_type);
    if (s.output_slot != kNoSlot) out << " -> out" << s.output_slot;
    out << "\n";
  }
  return out.str();
}

}  // namespace kiln::detail
