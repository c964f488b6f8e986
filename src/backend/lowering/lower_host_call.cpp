// Lowering of host calls to LLVM IR (src/ir/host_function.h, include/kiln/host_call.h).
// A HostCall stores each argument's packet of values and the lanes to run (-1 / 0 as i32)
// into stack memory allocated in the entry block (a call inside a loop reuses it; nothing
// grows per iteration), then calls the function through its address parameter, unless no
// lane of the packet is active. A HostResult loads one output and zeroes the lanes the call
// did not run on, so results never depend on what the function leaves there.
#include "backend/lowering/lowering.h"

#include "ir/host_function.h"

#include <kiln/errors.h>

#include <string>
#include <vector>

namespace kiln::detail::lowering {
namespace {

/// The staging memory `what` of the HostCall at `position` ("%s7.in0").
std::string staging(uint32_t position, const std::string& what) { return "%s" + std::to_string(position) + "." + what; }

}  // namespace

std::string Lowering::host_call(uint32_t position, const KernelStatement& s) {
  const HostSignature& signature = host_signature(s.literal);
  if (!target_.calls_host())
    throw ValueError("kiln: host function '" + signature.name + "' cannot run on " + target_.device() +
                     ": host calls run only in CPU kernels. Compute it with Kiln operations, or on the CPU");
  std::vector<uint32_t> cells = host_argument_cells(form_, position);
  const std::string width = std::to_string(width_);
  auto allocate_packet = [&](const std::string& name, const char* element) {
    entry_ << "  " << name << " = alloca [" << width << " x " << element << "], align 64\n";
  };
  /// An array of the addresses of staging memory `prefix`0, `prefix`1, ... (null when empty).
  auto pointer_array = [&](const std::string& name, const std::string& prefix, size_t count) {
    if (count == 0) return std::string("null");
    entry_ << "  " << name << " = alloca [" << count << " x ptr], align 8\n";
    for (size_t k = 0; k < count; ++k) {
      entry_ << "  " << name << "." << k << " = getelementptr inbounds ptr, ptr " << name << ", i64 " << k << "\n";
      entry_ << "  store ptr " << prefix << k << ", ptr " << name << "." << k << ", align 8\n";
    }
    return name;
  };
  for (size_t k = 0; k < cells.size(); ++k)
    allocate_packet(staging(position, "in") + std::to_string(k), memory_type(signature.inputs[k]));
  for (size_t k = 0; k < signature.outputs.size(); ++k)
    allocate_packet(staging(position, "out") + std::to_string(k), memory_type(signature.outputs[k]));
  allocate_packet(staging(position, "lanes"), "i32");
  std::string inputs = pointer_array(staging(position, "inputs"), staging(position, "in"), cells.size());
  std::string outputs = pointer_array(staging(position, "outputs"), staging(position, "out"), signature.outputs.size());

  std::string active = instr("and " + vec("i1") + " %active, " + arg(s, 2));
  std::string any = call("i1", "llvm.vector.reduce.or." + vmangle("i1"), {{vec("i1"), active}});
  std::string run = label(position, "call"), done = label(position, "called");
  body_ << "  br i1 " << any << ", label %" << run << ", label %" << done << "\n";
  start_block(run);
  for (size_t k = 0; k < cells.size(); ++k) {
    VarType t = signature.inputs[k];
    std::string value = to_memory(t, names_[form_.statements[cells[k]].operands[1]]);
    body_ << "  store " << vec(memory_type(t)) << " " << value << ", ptr " << staging(position, "in") << k
          << ", align 64\n";
  }
  std::string lanes = instr("sext " + vec("i1") + " " + active + " to " + vec("i32"));
  body_ << "  store " << vec("i32") << " " << lanes << ", ptr " << staging(position, "lanes") << ", align 64\n";
  auto pointer_parameter = [&](int k) {  // a UInt64 parameter, the same on every lane
    return instr("inttoptr i64 " + instr("extractelement " + vec("i64") + " " + arg(s, k) + ", i64 0") + " to ptr");
  };
  std::string fn = pointer_parameter(0), context = pointer_parameter(1);
  body_ << "  call void " << fn << "(ptr " << context << ", i32 " << width << ", ptr " << staging(position, "lanes")
        << ", ptr " << inputs << ", ptr " << outputs << ")\n";
  body_ << "  br label %" << done << "\n";
  start_block(done);
  return active;
}

std::string Lowering::host_result(uint32_t position, const KernelStatement& s) {
  uint32_t call = s.operands[0];
  std::string element = memory_type(s.type);
  std::string loaded =
      instr("load " + vec(element) + ", ptr " + staging(call, "out") + std::to_string(s.literal) + ", align 64");
  std::string value = from_memory(s.type, loaded, body_, "s" + std::to_string(position));
  return instr("select " + vec("i1") + " " + names_[call] + ", " + vec(s.type) + " " + value + ", " + vec(s.type) +
               " zeroinitializer");
}

}  // namespace kiln::detail::lowering
