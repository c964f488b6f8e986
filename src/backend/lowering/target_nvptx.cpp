// The NVPTX target: one lane per thread. The packet's code is a function of its own,
// `<name>.lane(i64 %i, ...)`, inlined into the entry; on a GPU the entry is a `ptx_kernel`
// that takes its lane from the special registers (start + ctaid.x * ntid.x + tid.x) and
// skips lanes past %end; emulated on the host, the entry is a loop over the lanes that
// calls the very same function. Masked stores only, 64-bit addresses, no host calls, and
// checked-mode reports written with atomics into CheckState's fields (no function call).
#include "backend/backend.h"
#include "backend/lowering/kernel_abi.h"
#include "backend/lowering/lowering.h"
#include "backend/lowering/target.h"

#include <cstddef>
#include <sstream>
#include <string>

namespace kiln::detail::lowering {
namespace {

class NvptxTarget final : public Target {
 public:
  explicit NvptxTarget(bool emulated) : emulated_(emulated) {}

  const char* name() const override { return emulated_ ? "nvptx-emulated" : "nvptx"; }
  const char* device() const override { return emulated_ ? "the emulated CUDA device" : "a CUDA device"; }

  void begin_packet(std::ostringstream&) const override {}  // %i is the lane function's argument

  std::string functions(const std::string& name, const PacketCode& code) const override {
    std::ostringstream out;
    out << "define internal i1 @" << name << ".lane(" << kPacketParameters << ") #0 {\n";
    out << "entry:\n" << code.entry << "  br label %loop\n" << code.body;
    out << "latch:\n  br label %exit\nexit:\n  ret i1 false\n";
    if (code.polls_interrupt) out << "interrupted:\n  ret i1 true\n";
    out << "}\n\n";
    if (emulated_)
      host_entry(out, name);
    else
      device_entry(out, name);
    return out.str();
  }

  std::string kernel_attributes() const override { return "alwaysinline"; }
  std::string piece_attributes() const override { return ""; }
  bool streams_outputs() const override { return false; }
  bool rebases_addresses() const override { return false; }
  bool calls_host() const override { return false; }

  void report_bad_lanes(Lowering& lowering, uint32_t statement, const std::string& index, const std::string& size,
                        const std::string& lanes) const override {
    auto field = [&](size_t offset) {
      return lowering.instr("getelementptr inbounds i8, ptr %check, i64 " + std::to_string(offset));
    };
    std::ostringstream& body = lowering.body();
    std::string exchanged = lowering.instr("cmpxchg ptr " + field(offsetof(CheckState, failed)) +
                                           ", i32 0, i32 1 monotonic monotonic, align 4");
    std::string first = lowering.instr("extractvalue { i32, i1 } " + exchanged + ", 1");
    lowering.instr("atomicrmw add ptr " + field(offsetof(CheckState, lanes)) + ", i64 " + lanes +
                   " monotonic, align 8");
    std::string record = lowering.label(statement, "first"), recorded = lowering.label(statement, "recorded");
    body << "  br i1 " << first << ", label %" << record << ", label %" << recorded << "\n";
    lowering.start_block(record);
    std::string statement_field = field(offsetof(CheckState, statement)),
                index_field = field(offsetof(CheckState, index)), size_field = field(offsetof(CheckState, size));
    body << "  store i32 " << statement << ", ptr " << statement_field << ", align 4\n";
    body << "  store i64 " << index << ", ptr " << index_field << ", align 8\n";
    body << "  store i64 " << size << ", ptr " << size_field << ", align 8\n";
    body << "  br label %" << recorded << "\n";
    lowering.start_block(recorded);
  }

 private:
  /// A `ptx_kernel` (the calling convention alone marks a kernel: LLVM 20 drops the
  /// nvvm.annotations route, and both together have miscompiled).
  static void device_entry(std::ostringstream& out, const std::string& name) {
    out << "define ptx_kernel void @" << name << "(" << kKernelParameters << ") {\n";
    out << "entry:\n";
    for (const char* reg : {"tid", "ntid", "ctaid"}) {
      out << "  %" << reg << " = call i32 @llvm.nvvm.read.ptx.sreg." << reg << ".x()\n";
      out << "  %" << reg << ".64 = zext i32 %" << reg << " to i64\n";
    }
    out << "  %block = mul i64 %ctaid.64, %ntid.64\n";
    out << "  %thread = add i64 %block, %tid.64\n";
    out << "  %i = add i64 %start, %thread\n";
    out << "  %inside = icmp ult i64 %i, %end\n";
    out << "  br i1 %inside, label %run, label %done\n";
    out << "run:\n  %stop = call i1 @" << name << ".lane(" << kPacketArguments << ")\n  br label %done\n";
    out << "done:\n  ret void\n}\n\n";
    for (const char* reg : {"tid", "ntid", "ctaid"}) out << "declare i32 @llvm.nvvm.read.ptx.sreg." << reg << ".x()\n";
  }

  /// The thread indices bound to a host loop; Ctrl-C (the lane function returns true)
  /// stops it.
  static void host_entry(std::ostringstream& out, const std::string& name) {
    out << "define void @" << name << "(" << kKernelParameters << ") {\n";
    out << "entry:\n  %any = icmp ult i64 %start, %end\n  br i1 %any, label %thread, label %done\n";
    out << "thread:\n  %i = phi i64 [ %start, %entry ], [ %i.next, %next ]\n";
    out << "  %stop = call i1 @" << name << ".lane(" << kPacketArguments << ")\n";
    out << "  br i1 %stop, label %done, label %next\n";
    out << "next:\n  %i.next = add i64 %i, 1\n  %more = icmp ult i64 %i.next, %end\n";
    out << "  br i1 %more, label %thread, label %done\n";
    out << "done:\n  ret void\n}\n";
  }

  bool emulated_;
};

}  // namespace

const Target& nvptx_target() {
  static const NvptxTarget target(false);
  return target;
}

const Target& nvptx_emulated_target() {
  static const NvptxTarget target(true);
  return target;
}

}  // namespace kiln::detail::lowering
