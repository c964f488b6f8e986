// What a target decides when a kernel form is lowered to LLVM IR: the skeleton around one
// packet's code (a packet loop on the CPU, one lane per thread behind a `ptx_kernel` entry
// on NVIDIA GPUs) and the few lane-model choices the shared walk asks about. Everything
// else — statements, loops, masks, gathers, scatters — is written once (lowering.h).
#pragma once

#include <cstdint>
#include <sstream>
#include <string>

namespace kiln::detail::lowering {

class Lowering;

/// One packet's code as the shared walk writes it: it expects %i (the packet's first lane)
/// and the kernel's arguments %end, %buffers, %sizes, %params, %check (and %stream where
/// the target streams), and ends each path with `br label %latch`; a loop that sees Ctrl-C
/// branches to %interrupted.
struct PacketCode {
  std::string entry;     ///< entry-block instructions: values computed once per call
  std::string body;      ///< the blocks from `loop:` on
  bool polls_interrupt;  ///< the body branches to %interrupted
  bool has_outputs;      ///< the kernel stores outputs
};

class Target {
 public:
  virtual ~Target() = default;
  /// "cpu", "nvptx" or "nvptx-emulated": in the module's first line and in error messages.
  virtual const char* name() const = 0;
  /// The device a user names for it, in errors ("the CPU", "a CUDA device").
  virtual const char* device() const = 0;
  /// The first lines of the packet's `loop:` block, which define %i.
  virtual void begin_packet(std::ostringstream& body) const = 0;
  /// The functions around the packet's code: `name` is the kernel's entry point,
  /// `name(i64 start, i64 end, ptr buffers, ptr sizes, ptr params, ptr check, i64 stream)`,
  /// which runs lanes [start, end); `kernel_attributes` are group #0.
  virtual std::string functions(const std::string& name, const PacketCode& code) const = 0;
  /// Attributes of the function holding the packet's code (#0) and of a split kernel's
  /// pieces (#1, after `noinline nounwind`).
  virtual std::string kernel_attributes() const = 0;
  virtual std::string piece_attributes() const = 0;
  /// Full packets of a streaming launch store with non-temporal stores.
  virtual bool streams_outputs() const = 0;
  /// Gathers and scatters address with 32-bit offsets from a rebased pointer (a vector
  /// gather of 16 lanes takes one instruction with 32-bit offsets, two with 64-bit ones).
  virtual bool rebases_addresses() const = 0;
  /// Host functions can be called from kernels.
  virtual bool calls_host() const = 0;
  /// Writes the checked-mode report of lanes whose index is out of range, in the current
  /// block of `lowering`: `statement`, the first such lane's `index`, the buffer's `size`
  /// and the number of `lanes` (i64 SSA values). The launch raises IndexError afterwards
  /// from CheckState's fields.
  virtual void report_bad_lanes(Lowering& lowering, uint32_t statement, const std::string& index,
                                const std::string& size, const std::string& lanes) const = 0;
};

/// The host CPU: packets of form.packet_width lanes, `vector_bits` the widest register.
const Target& cpu_target(int vector_bits);
/// NVIDIA GPUs through LLVM's NVPTX target: one lane per thread, the global thread index
/// from the special registers.
const Target& nvptx_target();
/// The very module nvptx_target() writes, with its entry replaced by a host loop over the
/// thread indices: a test device that runs the GPU lowering on the CPU.
const Target& nvptx_emulated_target();

}  // namespace kiln::detail::lowering
