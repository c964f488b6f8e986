// PTX from lowered LLVM IR, through LLVM's NVPTX target: what the CUDA driver's JIT takes.
#pragma once

#include <string>

namespace kiln::detail {

/// The oldest and newest compute capabilities Kiln emits PTX for: CUDA 13's ptxas no
/// longer takes sm_70, and LLVM 19's NVPTX target knows up to sm_90.
constexpr unsigned kOldestComputeCapability = 75, kNewestComputeCapability = 90;

/// The PTX of module `ir` (lowered for lowering::nvptx_target()) for compute capability
/// `sm` (75 to 90; newer devices run sm_90 PTX through the driver's JIT), PTX ISA 8.0.
/// `name` names the module in messages.
std::string compile_ptx(const std::string& ir, const std::string& name, unsigned sm);

}  // namespace kiln::detail
