// kiln_bench's `ptx` group: PTX generation time against a cold CPU compile of the same
// kernel, and ptxas's time on the PTX. Nothing here needs a GPU; the driver's own JIT time
// waits for the device check.
#include "ptx_bench.h"

#include "cache_bench.h"
#include "harness.h"
#include "op_chain.h"

#include <kiln/kiln.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

namespace bench {
namespace {

/// The ptxas the CUDA toolkit installs, or "".
std::string find_ptxas() {
  for (const char* candidate : {"/usr/local/cuda/bin/ptxas", "/usr/bin/ptxas"})
    if (access(candidate, X_OK) == 0) return candidate;
  return "";
}

/// Seconds ptxas takes to assemble `ptx` for sm_90 (the process included), or NaN when it fails.
double ptxas_seconds(const std::string& ptxas, const std::string& ptx) {
  std::filesystem::path dir = std::filesystem::temp_directory_path();
  std::filesystem::path source = dir / ("kiln_bench_" + std::to_string(getpid()) + ".ptx");
  std::ofstream(source) << ptx;
  std::string command = ptxas + " -arch=sm_90 " + source.string() + " -o " + source.string() + ".cubin";
  int status = 0;
  double seconds = time_once([&] { status = std::system(command.c_str()); });
  std::filesystem::remove(source);
  std::filesystem::remove(source.string() + ".cubin");
  return status == 0 ? seconds : kNone;
}

/// Codegen + LLVM seconds of a cold CPU compile of op_chain(ops, salt), from kernel_history().
double cpu_compile_seconds(const kiln::Float& x, const kiln::Float& y, size_t ops, uint32_t salt) {
  kiln::flush_kernel_cache();
  kiln::Float out = op_chain(x, y, ops, salt);
  kiln::kernel_history(true);
  kiln::eval(out);
  for (const kiln::KernelLaunch& l : kiln::kernel_history(true))
    if (l.source == kiln::KernelSource::Compiled) return (l.codegen_ms + l.compile_ms) / 1e3;
  throw std::runtime_error("ptx benchmark: the CPU kernel of the chain was not compiled");
}

}  // namespace

void run_ptx(bool quick, std::vector<Row>& rows) {
  ScopedFlag no_disk(kiln::Flag::DiskCache, false);  // every CPU compile is cold
  const size_t n = 1024;
  kiln::Float x = kiln::arange<kiln::Float>(n), y = kiln::sqrt(kiln::arange<kiln::Float>(n) + 1.0f);
  kiln::eval(x, y);
  const std::string ptxas = find_ptxas();
  for (size_t ops : {size_t(10), size_t(100), size_t(1000)}) {
    const int reps = quick || ops == 1000 ? 3 : 7;
    std::vector<double> ptx_s, cpu_s, ptxas_s;
    for (int r = 0; r < reps; ++r) {
      uint32_t salt = uint32_t(1000 * ops + r);
      kiln::Float chain = op_chain(x, y, ops, salt);
      std::string ptx;
      ptx_s.push_back(time_once([&] { ptx = kiln::kernel_source("cuda", chain); }));
      if (!ptxas.empty()) ptxas_s.push_back(ptxas_seconds(ptxas, ptx.substr(ptx.find('\n') + 1)));
      cpu_s.push_back(cpu_compile_seconds(x, y, ops, salt));
    }
    std::string note =
        "kernel_source(\"cuda\"): scheduling, lowering, LLVM NVPTX to PTX; baseline: a cold CPU "
        "compile of the same chain (codegen + LLVM x86 + JIT); ";
    note += ptxas.empty() ? "ptxas not installed"
                          : "ptxas -arch=sm_90 on the PTX " + format_seconds(median(ptxas_s)) +
                                " (the process included; what the driver's JIT does on a GPU)";
    rows.push_back({"PTX for a " + std::to_string(ops) + "-op kernel vs CPU compile", median(ptx_s), median(cpu_s),
                    Goal::None, 0, note + "; median of " + std::to_string(reps)});
  }
}

}  // namespace bench
