// kiln_bench's `gpu` group, run by the device check on a lent GPU: triad and the fused
// 10-op expression over 2^28 floats on the CUDA device against the same kernels written
// in CUDA C++ and compiled by nvcc in the same run (bench/cuda_baseline.cu; goal 0.9x its
// bandwidth), the compile time of a kernel (LLVM NVPTX and the driver's JIT) at 10/100/1000
// ops against a cold CPU compile, and a cached round trip (launch and read one value back).
#include "gpu_bench.h"

#include "cache_bench.h"
#include "harness.h"
#include "op_chain.h"
#include "workloads.h"

#include <kiln/kiln.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

namespace bench {
namespace {

/// Seconds of one evaluation of `make()` on the GPU, waited for.
template <typename Make> double gpu_seconds(Make make) {
  kiln::Float out = make();
  return time_once([&] {
    kiln::eval(out);
    kiln::synchronize(kiln::Device::CUDA);
  });
}

/// The nvcc baseline's (triad, fused) seconds over n floats, or NaNs (with the reason in `why`).
std::pair<double, double> nvcc_baseline(size_t n, std::string& why) {
  const char* nvcc = "/usr/local/cuda/bin/nvcc";
  if (access(nvcc, X_OK) != 0) return why = "nvcc not installed", std::pair{kNone, kNone};
  std::filesystem::path binary =
      std::filesystem::temp_directory_path() / ("kiln_cuda_baseline_" + std::to_string(getpid()));
  const char* sources = std::getenv("KILN_BENCH_DIR");  // the device check's copy of bench/
  std::string build = std::string(nvcc) + " -O3 -arch=native -o " + binary.string() + " " +
                      (sources ? sources : KILN_BENCH_DIR) + "/cuda_baseline.cu 2>&1";
  if (std::system(build.c_str()) != 0) return why = "nvcc failed to build the baseline", std::pair{kNone, kNone};
  std::string run = binary.string() + " " + std::to_string(n);
  FILE* pipe = popen(run.c_str(), "r");
  double triad = kNone, fused = kNone;
  if (!pipe || std::fscanf(pipe, "%lf %lf", &triad, &fused) != 2) why = "the nvcc baseline did not run";
  if (pipe) pclose(pipe);
  std::filesystem::remove(binary);
  return {triad, fused};
}

}  // namespace

void run_gpu(bool quick, std::vector<Row>& rows) {
  if (!kiln::device_available(kiln::Device::CUDA) || !kiln::is_gpu_memory(kiln::Device::CUDA)) {
    rows.push_back({"GPU benchmarks", kNone, kNone, Goal::None, 0, "skipped: " + kiln::cuda_status()});
    return;
  }
  kiln::DeviceScope on_gpu(kiln::Device::CUDA);
  const size_t n = quick ? size_t(1) << 24 : size_t(1) << 28;
  kiln::Float x = kiln::arange<kiln::Float>(n) * 1e-6f, y = kiln::sqrt(x + 1.f), z = x * 0.25f;
  kiln::eval(x, y, z);
  std::string why;
  auto [nvcc_triad, nvcc_fused] = nvcc_baseline(n, why);
  const double gib = double(n) * 4 / double(1 << 30);
  double triad_s = alternate(3, 10, {[&] { return gpu_seconds([&] { return triad(x, 3.0f, y); }); }})[0];
  rows.push_back({"GPU triad over 2^" + std::to_string(quick ? 24 : 28) + " floats vs nvcc", triad_s, nvcc_triad,
                  Goal::RatioAtLeast, 0.9,
                  std::to_string(3 * gib / triad_s) + " GiB/s (3 arrays moved); baseline: CUDA C++ by nvcc " +
                      (why.empty() ? "(events)" : why)});
  double fused_s = alternate(3, 10, {[&] { return gpu_seconds([&] { return fused10(x, y, z); }); }})[0];
  rows.push_back({"GPU fused 10-op over 2^" + std::to_string(quick ? 24 : 28) + " floats vs nvcc", fused_s, nvcc_fused,
                  Goal::RatioAtLeast, 0.9,
                  std::to_string(4 * gib / fused_s) + " GiB/s (4 arrays moved); baseline: CUDA C++ by nvcc"});

  ScopedFlag no_disk(kiln::Flag::DiskCache, false);
  kiln::Float cx = kiln::arange<kiln::Float>(1024), cy = kiln::sqrt(cx + 1.0f);
  kiln::eval(cx, cy);
  for (size_t ops : {size_t(10), size_t(100), size_t(1000)}) {
    auto compile = [&](kiln::Device device, uint32_t salt) {
      kiln::DeviceScope scope(device);
      kiln::Float a = cx.to(device), b = cy.to(device);
      kiln::flush_kernel_cache();
      kiln::kernel_history(true);
      kiln::eval(op_chain(a, b, ops, salt));
      for (const kiln::KernelLaunch& l : kiln::kernel_history(true))
        if (l.source == kiln::KernelSource::Compiled) return (l.codegen_ms + l.compile_ms) / 1e3;
      return kNone;
    };
    std::vector<double> gpu, cpu;
    for (uint32_t r = 0; r < 3; ++r) {
      gpu.push_back(compile(kiln::Device::CUDA, uint32_t(7000 * ops + r)));
      cpu.push_back(compile(kiln::Device::CPU, uint32_t(9000 * ops + r)));
    }
    rows.push_back({"GPU compile of a " + std::to_string(ops) + "-op kernel vs CPU compile", median(gpu), median(cpu),
                    Goal::None, 0, "lowering + LLVM NVPTX + the driver's JIT (cuLink*) vs a cold CPU compile"});
  }
  kiln::Float small = kiln::arange<kiln::Float>(1024);
  kiln::eval(small);
  double trip = alternate(3, 20, {[&] { return time_once([&] { (void)kiln::sum(small * 2.0f + 1.0f).item(); }); }})[0];
  rows.push_back({"GPU cached round trip (1024 lanes, sum, item)", trip, kNone, Goal::None, 0,
                  "trace, find in the in-memory cache, launch, reduce (host: not yet a device kernel), copy back"});
}

}  // namespace bench
