// Kernel identity (DESIGN.md "Kernel identity"): from the canonical kernel form, before any
// code is generated, the *shape hash* (every literal slot a placeholder of its type) and
// the *key* of a kernel (its shape, which literal slots it takes as launch parameters, and
// the values of the slots baked into its code). Node indices, labels, creation sites and
// the array size are not in the form, so they never change a kernel's identity.
#pragma once

#include "form/kernel_form.h"
#include "util/hash.h"

#include <cstdint>
#include <vector>

namespace kiln::detail {

/// Which literal slots a kernel reads from its parameter block (1) instead of baking in (0).
using ParameterMask = std::vector<uint8_t>;

/// A scheduled kernel form seen as a shape plus the values in its literal slots.
struct KernelShape {
  Hash128 hash;
  const LiteralSlots& slots;  ///< the form's slots (the shape does not outlive the form)
};

/// The shape of `form` for a backend whose code generation is identified by `target`
/// (backend, compiler version, CPU and its features).
KernelShape kernel_shape(const KernelForm& form, const Hash128& target);

/// The identity of the kernel of `shape` that takes the slots in `mask` as parameters and
/// bakes in the values of the others.
Hash128 kernel_key(const KernelShape& shape, const ParameterMask& mask);

/// The form to compile for `mask`: its slots become Param statements reading parameter k
/// (the k-th slot in the mask), so the generated code does not depend on their values.
KernelForm generic_form(const KernelForm& form, const KernelShape& shape, const ParameterMask& mask);

/// The parameter block of one launch: the values of the slots in `mask`, in order.
std::vector<uint64_t> parameter_block(const KernelShape& shape, const ParameterMask& mask);

/// `a | b` slot by slot.
ParameterMask mask_union(const ParameterMask& a, const ParameterMask& b);
size_t mask_count(const ParameterMask& mask);

}  // namespace kiln::detail
