// Shape hashes, kernel keys and generic forms (see kernel_key.h).
#include "cache/kernel_key.h"

namespace kiln::detail {

KernelShape kernel_shape(const KernelForm& form, const Hash128& target) {
  // Slot statements of a scheduled form carry no value, so the statements are the shape.
  Hasher128 hasher;
  uint32_t header[] = {kKernelFormatVersion, form.packet_width, form.input_count, form.output_count,
                       uint32_t(form.checks)};
  hasher.update(target);
  hasher.update(header);
  hasher.update(form.statements.data(), form.statements.size() * sizeof(KernelStatement));
  return {hasher.finish(), form.slots};
}

Hash128 kernel_key(const KernelShape& shape, const ParameterMask& mask) {
  Hasher128 hasher;
  hasher.update(shape.hash);
  for (size_t k = 0; k < shape.slots.positions.size(); ++k) {
    hasher.update(mask[k]);
    if (!mask[k]) hasher.update(shape.slots.values[k]);
  }
  return hasher.finish();
}

KernelForm generic_form(const KernelForm& form, const KernelShape& shape, const ParameterMask& mask) {
  KernelForm generic;
  generic.statements = form.statements;
  generic.input_count = form.input_count;
  generic.output_count = form.output_count;
  generic.checks = form.checks;
  generic.packet_width = form.packet_width;
  uint64_t parameter = 0;
  for (size_t k = 0; k < shape.slots.positions.size(); ++k) {
    KernelStatement& s = generic.statements[shape.slots.positions[k]];
    s.op = mask[k] ? Op::Param : Op::Literal;
    s.literal = mask[k] ? parameter++ : shape.slots.values[k];
  }
  return generic;
}

std::vector<uint64_t> parameter_block(const KernelShape& shape, const ParameterMask& mask) {
  std::vector<uint64_t> block;
  for (size_t k = 0; k < shape.slots.positions.size(); ++k)
    if (mask[k]) block.push_back(shape.slots.values[k]);
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
