// The CPU target: a loop over packets of form.packet_width lanes from %start to %end (the
// last one masked), non-temporal stores for full packets of a streaming launch and the
// fence that orders them, gathers addressed with 32-bit offsets, host calls, and
// checked-mode reports through the function in CheckState.
#include "backend/lowering/kernel_abi.h"
#include "backend/lowering/lowering.h"
#include "backend/lowering/target.h"

#include <sstream>
#include <string>

namespace kiln::detail::lowering {
namespace {

class CpuTarget final : public Target {
 public:
  explicit CpuTarget(int vector_bits) : vector_bits_(std::to_string(vector_bits)) {}

  const char* name() const override { return "cpu"; }
  const char* device() const override { return "the CPU"; }

  void begin_packet(std::ostringstream& body) const override {
    body << "  %i = phi i64 [ %start, %entry ], [ %i.next, %latch ]\n";
  }

  std::string functions(const std::string& name, const PacketCode& code) const override {
    std::ostringstream out;
    out << "define void @" << name << "(" << kKernelParameters << ") #0 {\n";
    out << "entry:\n" << code.entry;
    out << "  %stream = icmp ne i64 %stream.flag, 0\n";
    out << "  br label %loop\n";
    out << code.body;
    out << "latch:\n";
    out << "  %more = icmp ult i64 %i.next, %end\n";
    out << "  br i1 %more, label %loop, label %exit\nexit:\n";
    if (code.has_outputs) {
      // Streaming stores are weakly ordered: make them visible before the launch completes.
      out << "  br i1 %stream, label %exit.fence, label %exit.return\nexit.fence:\n";
      out << "  fence seq_cst\n  br label %exit.return\nexit.return:\n";
    }
    out << "  ret void\n";
    if (code.polls_interrupt) out << "interrupted:\n  ret void\n";
    out << "}\n";
    return out.str();
  }

  std::string kernel_attributes() const override { return vector_width_attributes(); }
  std::string piece_attributes() const override { return vector_width_attributes(); }
  bool streams_outputs() const override { return true; }
  bool rebases_addresses() const override { return true; }
  bool calls_host() const override { return true; }

  void report_bad_lanes(Lowering& lowering, uint32_t statement, const std::string& index, const std::string& size,
                        const std::string& lanes) const override {
    std::string report = lowering.instr("load ptr, ptr %check, align 8");  // CheckState::report
    lowering.body() << "  call void " << report << "(ptr %check, i32 " << statement << ", i64 " << index << ", i64 "
                    << size << ", i64 " << lanes << ")\n";
  }

 private:
  std::string vector_width_attributes() const {
    return "\"min-legal-vector-width\"=\"" + vector_bits_ + "\" \"prefer-vector-width\"=\"" + vector_bits_ + "\"";
  }

  std::string vector_bits_;
};

}  // namespace

const Target& cpu_target(int vector_bits) {
  static const CpuTarget narrow(128), wide(256), widest(512);
  return vector_bits >= 512 ? widest : vector_bits >= 256 ? wide : narrow;
}

}  // namespace kiln::detail::lowering
