// PTX through LLVM's NVPTX target (triple nvptx64-nvidia-cuda, PTX ISA 8.0): the same
// optimization pipeline as the CPU's, then the NVPTX assembly printer. One target machine
// per compute capability, created on first use.
#include "backend/llvm/nvptx_compiler.h"

#include "backend/llvm/llvm_support.h"

#include <kiln/errors.h>

#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>

#include <map>
#include <mutex>

namespace kiln::detail {
namespace {

constexpr const char* kTriple = "nvptx64-nvidia-cuda";

class NvptxCompiler {
 public:
  NvptxCompiler() {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
    char* message = nullptr;
    if (LLVMGetTargetFromTriple(kTriple, &target_, &message))
      throw InternalError("kiln: this LLVM has no NVPTX target: " + take_message(message));
  }

  std::string compile(const std::string& ir, const std::string& name, unsigned sm) {
    std::lock_guard<std::mutex> lock(mutex_);
    LLVMTargetMachineRef machine = machine_for(sm);
    ParsedModule parsed;
    parse_and_optimize(parsed, ir, name, machine, kTriple);
    LLVMMemoryBufferRef assembly = nullptr;
    char* message = nullptr;
    if (LLVMTargetMachineEmitToMemoryBuffer(machine, parsed.module, LLVMAssemblyFile, &message, &assembly))
      throw InternalError("kiln: NVPTX code generation failed for " + name + ": " + take_message(message));
    std::string ptx(LLVMGetBufferStart(assembly), LLVMGetBufferSize(assembly));
    LLVMDisposeMemoryBuffer(assembly);
    return ptx;
  }

 private:
  LLVMTargetMachineRef machine_for(unsigned sm) {
    LLVMTargetMachineRef& machine = machines_[sm];
    if (!machine) {
      std::string cpu = "sm_" + std::to_string(sm);
      machine = LLVMCreateTargetMachine(target_, kTriple, cpu.c_str(), "+ptx80", LLVMCodeGenLevelDefault,
                                        LLVMRelocDefault, LLVMCodeModelDefault);
    }
    return machine;
  }

  LLVMTargetRef target_ = nullptr;
  std::map<unsigned, LLVMTargetMachineRef> machines_;  ///< live as long as the process
  std::mutex mutex_;
};

}  // namespace

std::string compile_ptx(const std::string& ir, const std::string& name, unsigned sm) {
  if (sm < kOldestComputeCapability || sm > kNewestComputeCapability)
    throw ValueError("kiln: PTX for compute capability " + std::to_string(sm) + ": Kiln emits sm_" +
                     std::to_string(kOldestComputeCapability) + " to sm_" + std::to_string(kNewestComputeCapability));
  static NvptxCompiler* compiler = new NvptxCompiler();  // lives as long as the process
  return compiler->compile(ir, name, sm);
}

}  // namespace kiln::detail
