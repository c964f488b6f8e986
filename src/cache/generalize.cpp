// Literal generalization decisions (see generalize.h).
#include "cache/generalize.h"

namespace kiln::detail {
CompilePlan plan_compilation(ShapeRecord& record, const KernelShape& shape, bool generalize, uint32_t threshold) {
  size_t slot_count = shape.slots.positions.size();
  if (record.parameters.size() != slot_count) record.parameters.assign(slot_count, 0);
  CompilePlan plan;
  plan.first_variant = record.variants == 0;
  if (plan.first_variant) {
    record.reference = record.last = shape.slots.values;
    record.varied.assign(slot_count, 0);
  }
  for (size_t k = 0; k < slot_count; ++k)
    if (!shape.slots.opaque[k] && shape.slots.values[k] != record.reference[k]) record.varied[k] = 1;
  record.variants++;

  ParameterMask current = generalize ? mask_union(record.parameters, shape.slots.opaque) : shape.slots.opaque;
  ParameterMask wanted = current;
  if (generalize && record.variants >= threshold)
    wanted = mask_union(current, threshold <= 1 ? ParameterMask(slot_count, 1) : record.varied);
  // A shape that outgrows its generic kernel varies in ways its first variants did not
  // show: the second widening makes every slot a parameter, so no shape ever compiles
  // more than three times (specialized, generic, fully generic).
  bool had_generic = mask_count(mask_union(record.parameters, shape.slots.opaque)) > mask_count(shape.slots.opaque);
  if (generalize && had_generic && mask_count(wanted) > mask_count(current)) wanted.assign(slot_count, 1);

  if (mask_count(wanted) > mask_count(current)) {
    plan.generalized = true;
    plan.new_parameters = mask_count(wanted) - mask_count(current);
    for (size_t k = 0; k < slot_count; ++k)
      if (wanted[k] && !current[k] && record.varied[k]) plan.changed.push_back(k);
    plan.old_values = record.reference;
    record.parameters = wanted;
  } else {
    for (size_t k = 0; k < slot_count; ++k)
      if (!current[k] && shape.slots.values[k] != record.last[k]) plan.changed.push_back(k);
    plan.old_values = record.last;
  }
  plan.mask = wanted;
  record.last = shape.slots.values;
  return plan;
}

}  // namespace kiln::detail
