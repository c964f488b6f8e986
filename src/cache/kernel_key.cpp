// Shape hashes, kernel keys and generic forms (see kernel_key.h).
#include "cache/kernel_key.h"

#include "ir/op_info.h"

#include <iterator>

namespace kiln::detail {
namespace {

bool is_slot(Op op) { return op == Op::Literal || op == Op::Param; }

/// One statement as it enters the shape hash: fixed width, no padding.
struct HashedStatement {
  uint64_t literal;  ///< 0 for literal slots: their value is not part of the shape
  uint32_t operands[4];
  uint32_t input_slot, output_slot;
  uint8_t op, type, operand_type, broadcast;
  uint32_t zero = 0;
};
static_assert(sizeof(HashedStatement) == 40, "HashedStatement must have no padding");

}  // namespace

KernelShape kernel_shape(const KernelForm& form, const Hash128& target) {
  KernelShape shape;
  Hasher128 hasher;
  uint32_t header[] = {kKernelFormatVersion, form.packet_width, form.input_count, form.output_count,
                       uint32_t(form.checks)};
  hasher.update(target);
  hasher.update(header);
  // Statements are written into a batch and hashed a batch at a time (a small store
  // followed at once by a wide load of the same bytes stalls the CPU).
  HashedStatement batch[64];
  size_t batched = 0;
  for (uint32_t i = 0; i < form.statements.size(); ++i) {
    const KernelStatement& s = form.statements[i];
    bool slot = is_slot(s.op);
    if (slot) {
      shape.slots.push_back(i);
      shape.values.push_back(s.literal);
      shape.opaque.push_back(s.op == Op::Param);
    }
    // A slot is a typed placeholder: Literal and Param alike, without its value.
    batch[batched++] = {slot ? 0 : s.literal,
                         {s.operands[0], s.operands[1], s.operands[2], s.operands[3]},
                         s.input_slot,
                         s.output_slot,
                         uint8_t(slot ? Op::Literal : s.op),
                         uint8_t(s.type),
                         uint8_t(s.operand_type),
                         uint8_t(s.broadcast)};
    if (batched == std::size(batch)) {
      hasher.update(batch, sizeof(batch));
      batched = 0;
    }
  }
  hasher.update(batch, batched * sizeof(HashedStatement));
  shape.hash = hasher.finish();
  return shape;
}

Hash128 kernel_key(const KernelShape& shape, const ParameterMask& mask) {
  Hasher128 hasher;
  hasher.update(shape.hash);
  for (size_t k = 0; k < shape.slots.size(); ++k) {
    hasher.update(mask[k]);
    if (!mask[k]) hasher.update(shape.values[k]);
  }
  return hasher.finish();
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
