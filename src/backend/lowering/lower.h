// Lowers a canonical kernel form to LLVM IR text for a target: a pure function (no LLVM
// library calls), so it is golden-tested like any printer.
#pragma once

#include "backend/lowering/target.h"
#include "form/kernel_form.h"

#include <string>

namespace kiln::detail {

/// LLVM IR of a function `name(i64 start, i64 end, ptr buffers, ptr sizes, ptr params,
/// ptr check, i64 stream)` that runs lanes [start, end) of `form` on `target`: on the CPU
/// in packets of form.packet_width lanes with a masked tail (when `stream` is nonzero, full
/// packets store their outputs with non-temporal stores and the function ends with a
/// fence); on a GPU one lane per thread. A form of more than `split_statements` statements
/// (0: no limit) is lowered as pieces of about that many, each a function of its own that
/// the packet's code calls (backend/kernel_split.h).
std::string lower_to_llvm_ir(const KernelForm& form, const std::string& name, const lowering::Target& target,
                             uint32_t split_statements = 0);

}  // namespace kiln::detail
