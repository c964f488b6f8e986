// kernel_source(): the code of the kernels that would compute some values, lowered for a
// device without compiling for it or launching anything — PTX for CUDA on any machine,
// GPU or not, and LLVM IR for either device.
#include "backend/backend.h"
#include "backend/llvm/nvptx_compiler.h"
#include "backend/lowering/lower.h"
#include "cache/kernel_key.h"
#include "eval/evaluate.h"
#include "form/schedule.h"
#include "ir/node.h"
#include "util/settings.h"

#include <kiln/detail/trace_api.h>
#include <kiln/errors.h>

#include <string>
#include <vector>

namespace kiln::detail {
namespace {

/// The form a first launch compiles: every literal baked in, opaque() values parameters.
KernelForm first_variant(const KernelForm& form) {
  KernelShape shape = kernel_shape(form, Hash128{});
  return generic_form(form, shape, ParameterMask(form.slots.opaque.begin(), form.slots.opaque.end()));
}

}  // namespace

std::string kernel_source(const Index* indices, size_t count, const std::string& device, const std::string& format) {
  const bool cuda = device == "cuda";
  if (!cuda && device != "cpu")
    throw ValueError("kiln: kernel_source(): device '" + device + "'; use \"cpu\" or \"cuda\"");
  if (format != "llvm" && !(cuda && format == "ptx"))
    throw ValueError("kiln: kernel_source(): format '" + format + "' for device '" + device +
                     "'; use \"ptx\" (CUDA) or \"llvm\" (either device)");
  StateLock lock(state().mutex);
  std::vector<KernelGroup> groups =
      group_by_size(unevaluated_roots(indices, count, {}, "kernel_source"), state().side_effects);
  if (groups.empty()) return "// nothing to compute: the values are evaluated and no side effect is pending\n";

  const uint32_t width = cuda ? 1 : llvm_backend().packet_width();
  const lowering::Target& target = cuda ? lowering::nvptx_target() : lowering::cpu_target(int(width) * 32);
  std::string text;
  for (size_t g = 0; g < groups.size(); ++g) {
    ScheduledKernel k = schedule_kernel(groups[g], flag(Flag::Checks), width);
    std::string name = "kiln_source_" + std::to_string(g);
    std::string ir = lower_to_llvm_ir(first_variant(k.form), name, target, kernel_split());
    text += (format == "ptx" ? "// " : "; ") + std::string("kernel ") + std::to_string(g + 1) + " of " +
            std::to_string(groups.size()) + ": " + std::to_string(groups[g].size) + " lanes, " +
            std::to_string(k.form.input_count) + " inputs, " + std::to_string(k.form.output_count) + " outputs\n";
    text += format == "ptx" ? compile_ptx(ir, name, kNewestComputeCapability) : ir;
  }
  return text;
}

}  // namespace kiln::detail
