// Shape hashes, kernel keys and generic forms (see kernel_key.h).
#include "cache/kernel_key.h"

#include "ir/op_info.h"

namespace kiln::detail {
namespace {

bool is_slot(Op op) { return op == Op::Literal || op == Op::Param; }

/// Appends the bytes of `value` (field by field, so padding never takes part).
template <typename T> void put(std::vector<uint8_t>& bytes, const T& value) {
  const uint8_t* p = reinterpret_cast<const uint8_t*>(&value);
  bytes.insert(bytes.end(), p, p + sizeof(T));
}

}  // namespace

KernelShape kernel_shape(const KernelForm& form, const Hash128& target) {
  KernelShape shape;
  thread_local std::vector<uint8_t> bytes;
  bytes.clear();
  bytes.reserve(form.statements.size() * 24 + 48);
  uint32_t header[] = {kKernelFormatVersion, form.packet_width, form.input_count, form.output_count,
                       uint32_t(form.checks)};
  put(bytes, target);
  put(bytes, header);
  for (uint32_t i = 0; i < form.statements.size(); ++i) {
    const KernelStatement& s = form.statements[i];
    bool slot = is_slot(s.op);
    if (slot) {
      shape.slots.push_back(i);
      shape.values.push_back(s.literal);
      shape.opaque.push_back(s.op == Op::Param);
    }
    // A slot is a typed placeholder: Literal and Param alike, without its value.
    uint8_t small[] = {uint8_t(slot ? Op::Literal : s.op), uint8_t(s.type), uint8_t(s.operand_type),
                       uint8_t(s.broadcast)};
    put(bytes, small);
    for (int k = 0; k < op_arity(s.op); ++k) put(bytes, s.operands[k]);
    if (!slot) put(bytes, s.literal);
    put(bytes, s.input_slot);
    put(bytes, s.output_slot);
  }
  shape.hash = hash128_bytes(bytes.data(), bytes.size());
  return shape;
}

Hash128 kernel_key(const KernelShape& shape, const ParameterMask& mask) {
  std::vector<uint8_t> bytes;
  bytes.reserve(16 + shape.slots.size() * 9);
  put(bytes, shape.hash);
  for (size_t k = 0; k < shape.slots.size(); ++k) {
    bytes.push_back(mask[k]);
    if (!mask[k]) put(bytes, shape.values[k]);
  }
  return hash128_bytes(bytes.data(), bytes.size());
}

KernelForm generic_form(const KernelForm& form, const KernelShape& shape, const ParameterMask& mask) {
  KernelForm generic = form;
  uint64_t parameter = 0;
  for (size_t k = 0; k < shape.slots.size(); ++k) {
    if (!mask[k]) continue;
    KernelStatement& s = generic.statements[shape.slots[k]];
    s.op = Op::Param;
    s.literal = parameter++;
  }
  return generic;
}

std::vector<uint64_t> parameter_block(const KernelShape& shape, const ParameterMask& mask) {
  std::vector<uint64_t> block;
  for (size_t k = 0; k < shape.slots.size(); ++k)
    if (mask[k]) block.push_back(shape.values[k]);
  return block;
}

ParameterMask mask_union(const ParameterMask& a, const ParameterMask& b) {
  ParameterMask result(a.size());
  for (size_t k = 0; k < a.size(); ++k) result[k] = a[k] | b[k];
  return result;
}

size_t mask_count(const ParameterMask& mask) {
  size_t count = 0;
  for (uint8_t m : mask) count += m;
  return count;
}

}  // namespace kiln::detail
