// The LLVM CPU backend's runtime: compiles lowered IR text to relocatable object code with
// LLVM's C API, loads it into an ORC LLJIT, and launches kernels over all cores with
// oneTBB. The same runtime runs the emulated CUDA device (a test device: the NVPTX module
// with a host loop for its entry). Every LLVM call in Kiln lives in src/backend/llvm/.
#include "backend/backend.h"
#include "backend/llvm/llvm_support.h"
#include "backend/llvm/nvptx_compiler.h"
#include "backend/lowering/kernel_abi.h"
#include "backend/lowering/lower.h"
#include "util/env.h"
#include "util/settings.h"
#include "util/stopwatch.h"

#include <kiln/errors.h>
#include <kiln/runtime.h>

#include <llvm-c/LLJIT.h>
#include <llvm-c/Orc.h>
#include <llvm-c/Target.h>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

namespace kiln::detail {
namespace {

/// Launches writing at least this much use non-temporal stores for their outputs: data
/// that large leaves the caches before anyone reads it, and streaming it saves reading
/// every target line first (a third of the memory traffic of y = f(x)).
size_t streaming_threshold() {
  static const size_t bytes = [] {
    long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    return size_t(l2 > 0 ? l2 : 1 << 20) * cores * 2;
  }();
  return bytes;
}

/// The host target, the JIT, and the compile lock (LLVM contexts are used one at a time).
class LlvmJit {
 public:
  LlvmJit() {
    LLVMInitializeNativeTarget();
    LLVMInitializeNativeAsmPrinter();
    triple_ = take_message(LLVMGetDefaultTargetTriple());
    cpu_ = take_message(LLVMGetHostCPUName());
    features_ = take_message(LLVMGetHostCPUFeatures());
    LLVMTargetRef target;
    char* message = nullptr;
    if (LLVMGetTargetFromTriple(triple_.c_str(), &target, &message))
      throw InternalError("kiln: LLVM has no target for " + triple_ + ": " + take_message(message));
    // The small code model, as LLJIT itself uses with JITLink (which places each object in
    // one block): constants are addressed relative to the code. The large model
    // (LLVMCodeModelJITDefault) cost a GOT register, 64-bit offsets and spills, and took
    // 1.7x as long to compile a 1000-op kernel.
    machine_ = LLVMCreateTargetMachine(target, triple_.c_str(), cpu_.c_str(), features_.c_str(),
                                       LLVMCodeGenLevelDefault, LLVMRelocPIC, LLVMCodeModelSmall);
    bool avx512 = has_feature("+avx512f"), avx2 = has_feature("+avx2");
    width_ = avx512 ? 16 : avx2 ? 8 : 4;
    vector_bits_ = avx512 ? 512 : avx2 ? 256 : 128;

    LLVMOrcLLJITBuilderRef builder = LLVMOrcCreateLLJITBuilder();
    if (LLVMErrorRef error = LLVMOrcCreateLLJIT(&jit_, builder))
      throw InternalError("kiln: could not create the ORC JIT: " + take_error(error));
    LLVMOrcDefinitionGeneratorRef process_symbols;
    if (LLVMErrorRef error = LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(
            &process_symbols, LLVMOrcLLJITGetGlobalPrefix(jit_), nullptr, nullptr))
      throw InternalError("kiln: ORC symbol generator: " + take_error(error));
    LLVMOrcJITDylibAddGenerator(LLVMOrcLLJITGetMainJITDylib(jit_), process_symbols);
  }

  uint32_t width() const { return width_; }
  int vector_bits() const { return vector_bits_; }
  /// Triple, CPU name and features: code compiled here runs on exactly this description.
  std::string cpu() const { return triple_ + " " + cpu_ + " " + features_; }

  /// IR text -> optimized relocatable object code.
  LLVMMemoryBufferRef compile_object(const std::string& ir, const std::string& name) {
    ParsedModule parsed;  // a fresh context per kernel: creating and freeing one costs ~0.05 ms
    parse_and_optimize(parsed, ir, name, machine_, triple_);
    LLVMMemoryBufferRef object = nullptr;
    char* message = nullptr;
    if (LLVMTargetMachineEmitToMemoryBuffer(machine_, parsed.module, LLVMObjectFile, &message, &object))
      throw InternalError("kiln: LLVM code generation failed: " + take_message(message));
    return object;
  }

  /// Loads object code (ORC takes the buffer) under its own resource tracker and returns
  /// the entry point.
  lowering::KernelEntry load(LLVMMemoryBufferRef object, const std::string& name, LLVMOrcResourceTrackerRef& tracker) {
    tracker = LLVMOrcJITDylibCreateResourceTracker(LLVMOrcLLJITGetMainJITDylib(jit_));
    if (LLVMErrorRef error = LLVMOrcLLJITAddObjectFileWithRT(jit_, tracker, object))
      throw InternalError("kiln: ORC could not load kernel " + name + ": " + take_error(error));
    LLVMOrcExecutorAddress address = 0;
    if (LLVMErrorRef error = LLVMOrcLLJITLookup(jit_, &address, name.c_str()))
      throw InternalError("kiln: kernel symbol " + name + " not found: " + take_error(error));
    return reinterpret_cast<lowering::KernelEntry>(address);
  }

  std::mutex mutex;

 private:
  bool has_feature(const char* feature) const {
    return (features_ + ",").find(std::string(feature) + ",") != std::string::npos;
  }

  std::string triple_, cpu_, features_;
  LLVMTargetMachineRef machine_ = nullptr;
  LLVMOrcLLJITRef jit_ = nullptr;
  uint32_t width_ = 4;
  int vector_bits_ = 128;
};

LlvmJit& jit() {
  static LlvmJit* instance = new LlvmJit();  // lives as long as the process: kernels point into it
  return *instance;
}

class LlvmKernel final : public Kernel {
 public:
  LlvmKernel(lowering::KernelEntry entry, LLVMOrcResourceTrackerRef tracker) : entry_(entry), tracker_(tracker) {}
  ~LlvmKernel() override {
    std::lock_guard<std::mutex> lock(jit().mutex);
    LLVMErrorRef error = LLVMOrcResourceTrackerRemove(tracker_);
    if (error) LLVMConsumeError(error);
    LLVMOrcReleaseResourceTracker(tracker_);
  }

  void launch(const LaunchArgs& args) const override {
    size_t block = block_size();
    size_t blocks = (args.size + block - 1) / block;
    uint64_t stream = args.output_bytes >= streaming_threshold();
    if (blocks <= 1) {
      entry_(0, args.size, args.buffers, args.buffer_sizes, args.params, args.check, stream);
      return;
    }
    tbb::parallel_for(tbb::blocked_range<size_t>(0, blocks, 1), [&](const tbb::blocked_range<size_t>& range) {
      for (size_t b = range.begin(); b != range.end(); ++b) {
        if (args.check->interrupt->load(std::memory_order_relaxed)) return;  // Ctrl-C
        size_t start = b * block, end = std::min(args.size, start + block);
        entry_(start, end, args.buffers, args.buffer_sizes, args.params, args.check, stream);
      }
    });
  }

 private:
  lowering::KernelEntry entry_;
  LLVMOrcResourceTrackerRef tracker_;
};

/// Writes the PTX of `form` for sm_75 and sm_90 to $KILN_PTX_DIR/<symbol>.sm_<cc>.ptx when
/// that variable is set: how the tests assemble every kernel the suites produce with ptxas
/// (ctest cuda_emulated, tests/cuda_emulated.py) while they run on the emulated device, with the disk cache off.
void write_ptx_for_checks(const KernelForm& form, const std::string& symbol) {
  static const std::optional<std::string> directory = env_text("KILN_PTX_DIR");
  if (!directory) return;
  std::string ir = lower_to_llvm_ir(form, symbol, lowering::nvptx_target(), kernel_split());
  for (unsigned sm : {kOldestComputeCapability, kNewestComputeCapability}) {
    std::string path = *directory + "/" + symbol + ".sm_" + std::to_string(sm) + ".ptx";
    std::ofstream(path) << compile_ptx(ir, symbol, sm);
  }
}

/// The CPU backend, or (`emulates_cuda`) the emulated CUDA device: kernels lowered for
/// NVPTX, one lane per thread, with their entry a host loop over the threads.
class LlvmBackend final : public Backend {
 public:
  explicit LlvmBackend(bool emulates_cuda) : emulates_cuda_(emulates_cuda) {}

  const char* name() const override { return emulates_cuda_ ? "cuda-emulated" : "llvm"; }
  std::string compiler() const override {
    unsigned major = 0, minor = 0, patch = 0;
    LLVMGetVersion(&major, &minor, &patch);
    return "LLVM " + std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
  }
  std::string cpu() const override { return jit().cpu(); }
  uint32_t packet_width() const override { return emulates_cuda_ ? 1 : jit().width(); }
  bool has_object_code() const override { return true; }
  bool calls_host() const override { return !emulates_cuda_; }

  std::unique_ptr<Kernel> compile(const KernelForm& form, const std::string& symbol, CompileTimes& times,
                                  std::vector<uint8_t>& object) override {
    LlvmJit& j = jit();
    std::lock_guard<std::mutex> lock(j.mutex);
    Stopwatch stopwatch;
    const lowering::Target& target =
        emulates_cuda_ ? lowering::nvptx_emulated_target() : lowering::cpu_target(j.vector_bits());
    std::string ir = lower_to_llvm_ir(form, symbol, target, kernel_split());
    times.codegen_ms = stopwatch.lap_ms();
    if (log_enabled(LogLevel::Debug)) log(LogLevel::Debug, "lowering " + symbol + ", LLVM IR as lowered:\n" + ir);
    if (emulates_cuda_) write_ptx_for_checks(form, symbol);
    LLVMMemoryBufferRef buffer = j.compile_object(ir, symbol);
    const uint8_t* start = reinterpret_cast<const uint8_t*>(LLVMGetBufferStart(buffer));
    object.assign(start, start + LLVMGetBufferSize(buffer));
    LLVMOrcResourceTrackerRef tracker = nullptr;
    lowering::KernelEntry entry = j.load(buffer, symbol, tracker);
    times.compile_ms = stopwatch.lap_ms();
    return std::make_unique<LlvmKernel>(entry, tracker);
  }

  std::unique_ptr<Kernel> load(std::span<const uint8_t> object, const std::string& symbol) override {
    LlvmJit& j = jit();
    std::lock_guard<std::mutex> lock(j.mutex);
    LLVMMemoryBufferRef buffer = LLVMCreateMemoryBufferWithMemoryRangeCopy(reinterpret_cast<const char*>(object.data()),
                                                                           object.size(), symbol.c_str());
    LLVMOrcResourceTrackerRef tracker = nullptr;
    lowering::KernelEntry entry = j.load(buffer, symbol, tracker);
    return std::make_unique<LlvmKernel>(entry, tracker);
  }

 private:
  bool emulates_cuda_;
};

}  // namespace

Backend& llvm_backend() {
  static LlvmBackend backend(false);
  return backend;
}

Backend& cuda_emulated_backend() {
  static LlvmBackend backend(true);
  return backend;
}

}  // namespace kiln::detail
