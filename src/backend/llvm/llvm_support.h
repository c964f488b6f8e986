// What the two users of LLVM's library share (the CPU runtime, llvm_backend.cpp, and the
// NVPTX code generator, nvptx_compiler.cpp): parsing lowered IR text into a module of its
// own context, the optimization pipeline, and LLVM's messages as strings.
#pragma once

#include <llvm-c/Core.h>
#include <llvm-c/Error.h>
#include <llvm-c/TargetMachine.h>

#include <string>

namespace kiln::detail {

/// An LLVM message as a string (the message is disposed of).
std::string take_message(char* message);
std::string take_error(LLVMErrorRef error);

/// A module parsed into its own context; both are freed when it goes out of scope.
struct ParsedModule {
  LLVMContextRef context = LLVMContextCreate();
  LLVMModuleRef module = nullptr;
  ParsedModule() = default;
  ParsedModule(const ParsedModule&) = delete;
  ParsedModule& operator=(const ParsedModule&) = delete;
  ~ParsedModule();
};

/// Parses lowered IR text for `machine` (its triple and data layout) and runs the
/// optimization pipeline on it. `name` names the module in messages; a module that does
/// not parse is a Kiln bug (InternalError with the text).
void parse_and_optimize(ParsedModule& parsed, const std::string& ir, const std::string& name,
                        LLVMTargetMachineRef machine, const std::string& triple);

}  // namespace kiln::detail
