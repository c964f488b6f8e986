// The LLVM CPU backend's runtime: compiles rendered IR text to relocatable object code
// with LLVM's C API, loads it into an ORC LLJIT, and launches kernels over all cores with
// oneTBB. Every LLVM call in Kiln lives in src/backend/llvm/.
#include "backend/backend.h"
#include "backend/llvm/llvm_render.h"
#include "util/settings.h"
#include "util/stopwatch.h"

#include <kiln/errors.h>
#include <kiln/runtime.h>

#include <llvm-c/Core.h>
#include <llvm-c/Error.h>
#include <llvm-c/IRReader.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/Orc.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>

namespace kiln::detail {
namespace {

/// The optimization pipeline: the few function passes that matter for code that arrives
/// vectorized (literal splats folded, CSE, lane loops under constant masks removed, work on
/// broadcast inputs hoisted by LICM, lane loops rotated; reassociate orders operands by
/// rank, which some min/max patterns of instruction selection depend on). Measured against
/// default<O2>: the same loop instructions on 121 of the 122 kernels of the math, vector
/// and random tests (one fewer on the last), 1.4% fewer over 1,109 kernels of the op, eval
/// and fuzz tests, in a quarter of O2's time (~1 ms instead of 4-6 ms per kernel).
/// default<O3> gave exactly O2's loop instructions on the 122.
constexpr const char* kPassPipeline =
    "function(early-cse,instcombine<no-verify-fixpoint>,sccp,simplifycfg,reassociate,"
    "loop-mssa(loop-rotate,licm),adce,simplifycfg)";

using KernelFunction = void (*)(uint64_t start, uint64_t end, void* const* buffers, const uint64_t* sizes,
                                const uint64_t* params, CheckState* check, uint64_t stream);

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

std::string take_message(char* message) {
  std::string text = message ? message : "";
  if (message) LLVMDisposeMessage(message);
  return text;
}
std::string take_error(LLVMErrorRef error) { return take_message(LLVMGetErrorMessage(error)); }

/// A module parsed into its own context; both are freed when it goes out of scope.
struct ParsedModule {
  LLVMContextRef context = LLVMContextCreate();
  LLVMModuleRef module = nullptr;
  ParsedModule() = default;
  ParsedModule(const ParsedModule&) = delete;
  ParsedModule& operator=(const ParsedModule&) = delete;
  ~ParsedModule() {
    if (module) LLVMDisposeModule(module);
    LLVMContextDispose(context);
  }
};

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
    LLVMMemoryBufferRef source = LLVMCreateMemoryBufferWithMemoryRangeCopy(ir.data(), ir.size(), name.c_str());
    char* message = nullptr;
    if (LLVMParseIRInContext(parsed.context, source, &parsed.module, &message))
      throw InternalError("kiln: generated LLVM IR does not parse (a Kiln bug): " + take_message(message) + "\n" + ir);
    LLVMSetTarget(parsed.module, triple_.c_str());
    LLVMTargetDataRef layout = LLVMCreateTargetDataLayout(machine_);
    LLVMSetModuleDataLayout(parsed.module, layout);
    LLVMDisposeTargetData(layout);
    if (LLVMErrorRef error = LLVMRunPasses(parsed.module, kPassPipeline, machine_, pass_options_))
      throw InternalError("kiln: LLVM optimization failed: " + take_error(error));
    if (log_enabled(LogLevel::Debug))
      log(LogLevel::Debug, "lowering " + name + ", LLVM IR after optimization:\n" +
                               take_message(LLVMPrintModuleToString(parsed.module)));
    LLVMMemoryBufferRef object = nullptr;
    if (LLVMTargetMachineEmitToMemoryBuffer(machine_, parsed.module, LLVMObjectFile, &message, &object))
      throw InternalError("kiln: LLVM code generation failed: " + take_message(message));
    return object;
  }

  /// Loads object code (ORC takes the buffer) under its own resource tracker and returns
  /// the entry point.
  KernelFunction load(LLVMMemoryBufferRef object, const std::string& name, LLVMOrcResourceTrackerRef& tracker) {
    tracker = LLVMOrcJITDylibCreateResourceTracker(LLVMOrcLLJITGetMainJITDylib(jit_));
    if (LLVMErrorRef error = LLVMOrcLLJITAddObjectFileWithRT(jit_, tracker, object))
      throw InternalError("kiln: ORC could not load kernel " + name + ": " + take_error(error));
    LLVMOrcExecutorAddress address = 0;
    if (LLVMErrorRef error = LLVMOrcLLJITLookup(jit_, &address, name.c_str()))
      throw InternalError("kiln: kernel symbol " + name + " not found: " + take_error(error));
    return reinterpret_cast<KernelFunction>(address);
  }

  std::mutex mutex;

 private:
  bool has_feature(const char* feature) const {
    return (features_ + ",").find(std::string(feature) + ",") != std::string::npos;
  }

  std::string triple_, cpu_, features_;
  LLVMTargetMachineRef machine_ = nullptr;
  /// Default options: they only tune default<On> pipelines, and kPassPipeline is explicit.
  LLVMPassBuilderOptionsRef pass_options_ = LLVMCreatePassBuilderOptions();
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
  LlvmKernel(KernelFunction entry, LLVMOrcResourceTrackerRef tracker) : entry_(entry), tracker_(tracker) {}
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
  KernelFunction entry_;
  LLVMOrcResourceTrackerRef tracker_;
};

class LlvmBackend final : public Backend {
 public:
  const char* name() const override { return "llvm"; }
  std::string compiler() const override {
    unsigned major = 0, minor = 0, patch = 0;
    LLVMGetVersion(&major, &minor, &patch);
    return "LLVM " + std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
  }
  std::string cpu() const override { return jit().cpu(); }
  uint32_t packet_width() const override { return jit().width(); }
  bool has_object_code() const override { return true; }

  std::unique_ptr<Kernel> compile(const KernelForm& form, const std::string& symbol, CompileTimes& times,
                                  std::vector<uint8_t>& object) override {
    LlvmJit& j = jit();
    std::lock_guard<std::mutex> lock(j.mutex);
    Stopwatch stopwatch;
    std::string ir = render_llvm_ir(form, symbol, j.vector_bits(), kernel_split());
    times.codegen_ms = stopwatch.lap_ms();
    if (log_enabled(LogLevel::Debug)) log(LogLevel::Debug, "lowering " + symbol + ", LLVM IR as rendered:\n" + ir);
    LLVMMemoryBufferRef buffer = j.compile_object(ir, symbol);
    const uint8_t* start = reinterpret_cast<const uint8_t*>(LLVMGetBufferStart(buffer));
    object.assign(start, start + LLVMGetBufferSize(buffer));
    LLVMOrcResourceTrackerRef tracker = nullptr;
    KernelFunction entry = j.load(buffer, symbol, tracker);
    times.compile_ms = stopwatch.lap_ms();
    return std::make_unique<LlvmKernel>(entry, tracker);
  }

  std::unique_ptr<Kernel> load(std::span<const uint8_t> object, const std::string& symbol) override {
    LlvmJit& j = jit();
    std::lock_guard<std::mutex> lock(j.mutex);
    LLVMMemoryBufferRef buffer = LLVMCreateMemoryBufferWithMemoryRangeCopy(reinterpret_cast<const char*>(object.data()),
                                                                           object.size(), symbol.c_str());
    LLVMOrcResourceTrackerRef tracker = nullptr;
    KernelFunction entry = j.load(buffer, symbol, tracker);
    return std::make_unique<LlvmKernel>(entry, tracker);
  }
};

}  // namespace

Backend& llvm_backend() {
  static LlvmBackend backend;
  return backend;
}

}  // namespace kiln::detail
