// kiln_bench's `gpu` group, run by the device check on a lent GPU: triad and the fused
// 10-op expression over 2^28 floats on the CUDA device against the same kernels written
// in CUDA C++ and compiled by nvcc in the same run (bench/cuda_baseline.cu; goal 0.9x its
// bandwidth); sum, prefix_sum and compress (Kiln's device kernels) against CUB; the
// compile time of a kernel (LLVM NVPTX and the driver's JIT) at 10/100/1000 ops against a
// cold CPU compile, and a cached round trip (launch and read one value back).
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

/// Seconds of the nvcc baseline's kernels (NaN where it did not run).
struct Baseline {
  double triad = kNone, fused = kNone, sum = kNone, scan = kNone, compress = kNone;
};

/// The nvcc baseline over n floats (with the reason in `why` when it did not run).
Baseline nvcc_baseline(size_t n, std::string& why) {
  const char* nvcc = "/usr/local/cuda/bin/nvcc";
  if (access(nvcc, X_OK) != 0) return why = "nvcc not installed", Baseline{};
  std::filesystem::path binary =
      std::filesystem::temp_directory_path() / ("kiln_cuda_baseline_" + std::to_string(getpid()));
  const char* sources = std::getenv("KILN_BENCH_DIR");  // the device check's copy of bench/
  std::string build = std::string(nvcc) + " -O3 -arch=native -o " + binary.string() + " " +
                      (sources ? sources : KILN_BENCH_DIR) + "/cuda_baseline.cu 2>&1";
  if (std::system(build.c_str()) != 0) return why = "nvcc failed to build the baseline", Baseline{};
  std::string run = binary.string() + " " + std::to_string(n);
  FILE* pipe = popen(run.c_str(), "r");
  Baseline b;
  if (!pipe || std::fscanf(pipe, "%lf %lf %lf %lf %lf", &b.triad, &b.fused, &b.sum, &b.scan, &b.compress) != 5)
    why = "the nvcc baseline did not run", b = Baseline{};
  if (pipe) pclose(pipe);
  std::filesystem::remove(binary);
  return b;
}

/// Median seconds of `op` on the GPU, waited for.
template <typename Op> double gpu_seconds(Op op) {
  return alternate(3, 10, {[&] {
                     return time_once([&] {
                       op();
                       kiln::synchronize(kiln::Device::CUDA);
                     });
                   }})[0];
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
  Baseline nvcc = nvcc_baseline(n, why);
  const std::string size = "2^" + std::to_string(quick ? 24 : 28);
  const double gib = double(n) * 4 / double(1 << 30);
  double triad_s = gpu_seconds([&] { kiln::eval(triad(x, 3.0f, y)); });
  rows.push_back({"GPU triad over " + size + " floats vs nvcc", triad_s, nvcc.triad, Goal::RatioAtLeast, 0.9,
                  std::to_string(3 * gib / triad_s) + " GiB/s (3 arrays moved); baseline: CUDA C++ by nvcc " +
                      (why.empty() ? "(events)" : why)});
  double fused_s = gpu_seconds([&] { kiln::eval(fused10(x, y, z)); });
  rows.push_back({"GPU fused 10-op over " + size + " floats vs nvcc", fused_s, nvcc.fused, Goal::RatioAtLeast, 0.9,
                  std::to_string(4 * gib / fused_s) + " GiB/s (4 arrays moved); baseline: CUDA C++ by nvcc"});
  // The horizontal operations' device kernels against CUB, on the baseline's data
  // (i % 1000 * 1e-3; flags where it is above 0.5).
  kiln::Float ramp = kiln::cast<float>(kiln::arange<kiln::UInt32>(n) % 1000u) * 1e-3f;
  kiln::Bool flags = ramp > 0.5f;
  kiln::eval(ramp, flags);
  rows.push_back({"GPU sum over " + size + " floats vs CUB", gpu_seconds([&] { (void)kiln::sum(ramp); }), nvcc.sum,
                  Goal::None, 0, "strided passes of one symbolic loop per lane vs cub::DeviceReduce::Sum"});
  rows.push_back({"GPU prefix_sum over " + size + " floats vs CUB", gpu_seconds([&] { (void)kiln::prefix_sum(ramp); }),
                  nvcc.scan, Goal::None, 0,
                  "run totals, scanned recursively, then each run again vs cub::DeviceScan::InclusiveSum"});
  rows.push_back({"GPU compress over " + size + " flags vs CUB", gpu_seconds([&] { (void)kiln::compress(flags); }),
                  nvcc.compress, Goal::None, 0,
                  "counts, their scan, the count read by the host, the indices written vs "
                  "cub::DeviceSelect::Flagged (count left on the GPU)"});

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
                  "trace, find in the in-memory cache, launch, reduce (device kernels), copy back"});
}

}  // namespace bench
