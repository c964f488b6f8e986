// The small interface every backend implements (LLVM, the reference interpreter, later
// CUDA), and the factory that picks one. Core code never includes a backend's headers.
#pragma once

#include "form/kernel_form.h"

#include <kiln/device.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace kiln::detail {

/// Shared with generated code: in checked mode the first member is called when gather or
/// scatter lanes (`lanes` of one packet) have indices out of range (in any mode those lanes
/// read 0 or write nothing); the first report's details are kept, the lanes counted, and
/// IndexError raised after the launch.
struct CheckState {
  void (*report)(CheckState* self, uint32_t statement, uint64_t index, uint64_t size, uint64_t lanes);
  /// Nonzero when the launch should stop (Ctrl-C): polled at every loop back edge and
  /// before every block. The second member: generated code loads it at offset 8.
  const std::atomic<uint32_t>* interrupt = nullptr;
  std::atomic<uint32_t> failed{0};
  std::atomic<uint64_t> lanes{0};
  uint32_t statement = 0;
  uint64_t index = 0, size = 0;
};
static_assert(offsetof(CheckState, interrupt) == sizeof(void*), "generated code reads the interrupt flag here");
void record_check_failure(CheckState* self, uint32_t statement, uint64_t index, uint64_t size, uint64_t lanes);

/// Everything one launch needs. Buffers: input slots first, then outputs.
struct LaunchArgs {
  size_t size = 0;
  size_t buffer_count = 0, param_count = 0;
  void* const* buffers = nullptr;          ///< addresses on the kernel's device
  const uint64_t* buffer_sizes = nullptr;  ///< elements per slot (used by checks)
  const uint64_t* params = nullptr;        ///< literal parameter block (for generalized kernels)
  CheckState* check = nullptr;
  size_t output_bytes = 0;  ///< bytes written to output buffers (large outputs are streamed)
};

/// Times of one compilation, in milliseconds.
struct CompileTimes {
  double codegen_ms = 0, compile_ms = 0;
};

class Kernel {
 public:
  virtual ~Kernel() = default;
  virtual void launch(const LaunchArgs& args) const = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual const char* name() const = 0;
  /// What generates the code, with its version ("LLVM 19.1.7"), and the CPU it is for
  /// (triple, CPU name, features): with name(), part of every kernel's identity.
  virtual std::string compiler() const = 0;
  virtual std::string cpu() const = 0;
  /// SIMD lanes of generated code.
  virtual uint32_t packet_width() const = 0;
  /// Compiles `form` with entry point `symbol`. Backends with object code (has_object_code())
  /// also return it in `object`: what the disk cache stores and load() accepts.
  virtual std::unique_ptr<Kernel> compile(const KernelForm& form, const std::string& symbol, CompileTimes& times,
                                          std::vector<uint8_t>& object) = 0;
  virtual bool has_object_code() const { return false; }
  /// Kernels can call host functions (host_call.h): not on a GPU.
  virtual bool calls_host() const { return true; }
  /// Loads object code produced by compile() (in this or another process).
  virtual std::unique_ptr<Kernel> load(std::span<const uint8_t> /*object*/, const std::string& /*symbol*/) {
    return nullptr;
  }
};

/// The backend that runs kernels on `device`: on the CPU, LLVM's; on CUDA, the CUDA
/// runtime (the emulated device under KILN_DEVICE=cuda-emulated). Flag::Interpreter runs
/// the kernels of devices whose memory is the host's (the CPU, the emulated device) on the
/// reference interpreter; a GPU's kernels run on the GPU whatever it says.
Backend& backend_for(Device device);
Backend& llvm_backend();
Backend& interpreter_backend();
/// Kernels on the GPU through the CUDA driver (src/backend/cuda/).
Backend& cuda_backend();
/// The emulated CUDA device (KILN_DEVICE=cuda-emulated): kernels lowered for NVPTX, run
/// on the host. A test device for the GPU lowering, not a user feature.
Backend& cuda_emulated_backend();

/// Row-major matrix products C = op(A)·op(B) (Float32 or Float64; C of m×n, m·n > 0) on
/// a device's memory, queued on the device's stream.
using DeviceGemm = void (*)(VarType type, bool transpose_a, bool transpose_b, size_t m, size_t n, size_t k,
                            const void* a, const void* b, void* c);
/// The GEMM of `device`; nullptr where the host computes products (the CPU; the emulated
/// device, whose memory is the host's). On a GPU without cuBLAS, ValueError saying why.
DeviceGemm gemm_for(Device device);
/// cuBLAS's (src/backend/cuda/cublas.cpp).
DeviceGemm cuda_gemm();

}  // namespace kiln::detail
