// The CUDA backend: kernels lowered for NVPTX (one lane per thread), turned into PTX by
// LLVM, linked by the driver's JIT into the device's binary (what the disk cache keeps:
// its key holds the compute capability, PTX ISA and driver version), and launched on the
// device's one stream with the block size of the occupancy API. Launches are asynchronous;
// the host waits only where it reads (a copy to the host, a checked kernel's report).
#include "backend/backend.h"
#include "backend/cuda/cuda_device.h"
#include "backend/llvm/nvptx_compiler.h"
#include "backend/lowering/lower.h"
#include "memory/allocator.h"
#include "util/settings.h"
#include "util/stopwatch.h"

#include <kiln/errors.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <vector>

namespace kiln::detail::cuda {
namespace {

/// The PTX ISA LLVM 19 writes for Kiln's kernels (nvptx_compiler.cpp: +ptx80).
constexpr const char* kPtxIsa = "PTX ISA 8.0";

class CudaKernel final : public Kernel {
 public:
  CudaKernel(CudaDevice& device, CUmodule module, const std::string& symbol) : device_(device), module_(module) {
    device.make_current();
    device.check(device.api().cuModuleGetFunction(&function_, module, symbol.c_str()), "cuModuleGetFunction");
    int min_grid = 0;
    device.check(device.api().cuOccupancyMaxPotentialBlockSize(&min_grid, &block_, function_, nullptr, 0, 0),
                 "cuOccupancyMaxPotentialBlockSize");
    block_ = std::max(block_, 32);
  }
  ~CudaKernel() override { device_.api().cuModuleUnload(module_); }

  void launch(const LaunchArgs& args) const override {
    if (args.size == 0) return;
    device_.make_current();
    // The slot table in device memory: buffer addresses, element counts, then parameters.
    std::vector<uint64_t> table(2 * args.buffer_count + args.param_count);
    for (size_t i = 0; i < args.buffer_count; ++i) {
      table[i] = uint64_t(reinterpret_cast<uintptr_t>(args.buffers[i]));
      table[args.buffer_count + i] = args.buffer_sizes[i];
    }
    if (args.param_count) std::memcpy(&table[2 * args.buffer_count], args.params, args.param_count * 8);
    std::shared_ptr<Buffer> slots = Buffer::allocate(table.size() * 8, Device::CUDA);
    slots->from_host(table.data(), table.size() * 8);  // freed after the launch: later work on the stream reuses it
    auto* base = static_cast<uint64_t*>(slots->data());
    void *buffers = base, *sizes = base + args.buffer_count, *params = base + 2 * args.buffer_count;
    CheckState* state = device_.begin_launch(args.check->interrupt);
    uint64_t stream_flag = 0;
    const uint64_t lanes_per_launch = uint64_t(INT_MAX) * uint64_t(block_);
    for (uint64_t start = 0; start < args.size; start += lanes_per_launch) {
      uint64_t end = std::min<uint64_t>(args.size, start + lanes_per_launch);
      void* arguments[] = {&start, &end, &buffers, &sizes, &params, &state, &stream_flag};
      unsigned grid = unsigned((end - start + uint64_t(block_) - 1) / uint64_t(block_));
      device_.check(device_.api().cuLaunchKernel(function_, grid, 1, 1, unsigned(block_), 1, 1, 0, device_.stream(),
                                                 arguments, nullptr),
                    "cuLaunchKernel");
    }
    if (!flag(Flag::Checks)) return;
    device_.wait_for_stream();  // the report is read now
    if (!state->failed) return;
    args.check->failed = 1;
    args.check->lanes += state->lanes.load();
    args.check->statement = state->statement;
    args.check->index = state->index;
    args.check->size = state->size;
  }

 private:
  CudaDevice& device_;
  CUmodule module_ = nullptr;
  CUfunction function_ = nullptr;
  int block_ = 256;
};

/// Runs a driver JIT call with an error log; throws with the log on failure.
class JitLog {
 public:
  int* options() { return options_; }
  void** values() { return values_; }
  unsigned count() const { return 2; }
  std::string text() const { return std::string(log_, strnlen(log_, sizeof log_)); }

 private:
  char log_[8192] = {};
  int options_[2] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* values_[2] = {log_, reinterpret_cast<void*>(uintptr_t(sizeof log_))};
};

class CudaBackend final : public Backend {
 public:
  const char* name() const override { return "cuda"; }
  std::string compiler() const override { return "LLVM NVPTX"; }
  std::string cpu() const override {
    CudaDevice& d = device();
    return "sm_" + std::to_string(target_sm()) + " " + kPtxIsa + ", " + d.name() + " (sm_" +
           std::to_string(d.compute_capability()) + "), driver " + std::to_string(driver().version);
  }
  uint32_t packet_width() const override { return 1; }
  bool has_object_code() const override { return true; }
  bool calls_host() const override { return false; }

  std::unique_ptr<Kernel> compile(const KernelForm& form, const std::string& symbol, CompileTimes& times,
                                  std::vector<uint8_t>& object) override {
    CudaDevice& d = device();
    Stopwatch stopwatch;
    std::string ir = lower_to_llvm_ir(form, symbol, lowering::nvptx_target(), kernel_split());
    times.codegen_ms = stopwatch.lap_ms();
    std::string ptx = compile_ptx(ir, symbol, target_sm());
    if (log_enabled(LogLevel::Debug)) log(LogLevel::Debug, "lowering " + symbol + " for CUDA, PTX:\n" + ptx);
    object = link(d, ptx, symbol);
    std::unique_ptr<Kernel> kernel = load(object, symbol);
    times.compile_ms = stopwatch.lap_ms();
    return kernel;
  }

  std::unique_ptr<Kernel> load(std::span<const uint8_t> object, const std::string& symbol) override {
    CudaDevice& d = device();
    d.make_current();
    JitLog log;
    CUmodule module = nullptr;
    CUresult result = d.api().cuModuleLoadDataEx(&module, object.data(), log.count(), log.options(), log.values());
    if (result != CUDA_SUCCESS)
      throw InternalError("kiln: CUDA: the driver could not load kernel " + symbol + ": " +
                          describe_failure(d.api(), "cuModuleLoadDataEx", result) + "\n" + log.text());
    return std::make_unique<CudaKernel>(d, module, symbol);
  }

 private:
  static CudaDevice& device() {
    device_memory(Device::CUDA);  // throws, saying why, when there is no GPU
    return CudaDevice::get();
  }
  static unsigned target_sm() { return std::min(CudaDevice::get().compute_capability(), kNewestComputeCapability); }

  /// The driver's binary for `ptx` (its JIT, once: the disk cache keeps the result).
  static std::vector<uint8_t> link(CudaDevice& d, const std::string& ptx, const std::string& symbol) {
    d.make_current();
    JitLog log;
    CUlinkState state = nullptr;
    d.check(d.api().cuLinkCreate(log.count(), log.options(), log.values(), &state), "cuLinkCreate");
    struct Destroy {
      const DriverApi& api;
      CUlinkState state;
      ~Destroy() { api.cuLinkDestroy(state); }
    } destroy{d.api(), state};
    CUresult result = d.api().cuLinkAddData(state, CU_JIT_INPUT_PTX, const_cast<char*>(ptx.c_str()), ptx.size() + 1,
                                            symbol.c_str(), 0, nullptr, nullptr);
    void* image = nullptr;
    size_t bytes = 0;
    if (result == CUDA_SUCCESS) result = d.api().cuLinkComplete(state, &image, &bytes);
    if (result != CUDA_SUCCESS)
      throw InternalError("kiln: CUDA: the driver's JIT rejected the PTX of " + symbol + ": " +
                          describe_failure(d.api(), "cuLinkAddData/cuLinkComplete", result) + "\n" + log.text());
    const auto* begin = static_cast<const uint8_t*>(image);
    return std::vector<uint8_t>(begin, begin + bytes);  // copied before cuLinkDestroy frees it
  }
};

}  // namespace
}  // namespace kiln::detail::cuda

namespace kiln::detail {
Backend& cuda_backend() {
  static cuda::CudaBackend backend;
  return backend;
}
}  // namespace kiln::detail
