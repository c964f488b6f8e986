// kiln_bench: Kiln against hand-written C++ baselines, measured in the same process.
//
// Start reading here for the benchmarks. Each benchmark below traces a computation from
// bench/workloads.h with Kiln arrays, times only what it claims to time (tracing stays
// outside unless the row says otherwise), runs the same template compiled natively
// (bench/baselines.cpp) and checks that both agree before reporting. Kiln and baseline
// repetitions alternate, so a machine that gets busier slows both alike. The kernel-cache
// groups (story, cache) live in bench/cache_bench.cpp, the control-flow group (control) in
// bench/control_bench.cpp, the automatic-differentiation group (ad) in bench/ad_bench.cpp,
// gathers and scatters (memory) in bench/memory_bench.cpp, PTX generation (ptx) in
// bench/ptx_bench.cpp, and on a GPU (gpu) in bench/gpu_bench.cpp.
//
//   kiln_bench [--quick] [--json] [--threads N] [--only NAME]
#include "ad_bench.h"
#include "baselines.h"
#include "cache_bench.h"
#include "control_bench.h"
#include "gpu_bench.h"
#include "harness.h"
#include "launch_log.h"
#include "memory_bench.h"
#include "op_chain.h"
#include "ptx_bench.h"
#include "report.h"
#include "workloads.h"

#include <kiln/kiln.h>

#include <tbb/global_control.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <bit>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <string>

namespace bench {
namespace {

struct Options {
  bool quick = false, json = false;
  int threads = 0;   ///< 0: all hardware threads
  std::string only;  ///< run only benchmarks whose name contains this
};

/// Sizes and repetition counts of one mode (full or --quick).
struct Plan {
  size_t stream_elements;  ///< benchmarks 1 and 2
  int stream_warmup, stream_reps;
  MandelbrotView view;
  int mandelbrot_reps;
  std::vector<std::pair<size_t, int>> compile_ops_and_reps;
  int round_trips;
};

Plan make_plan(bool quick) {
  Plan p;
  p.stream_elements = quick ? size_t(1) << 22 : size_t(1) << 26;
  p.stream_warmup = quick ? 1 : 2;
  p.stream_reps = quick ? 5 : 11;
  uint32_t side = quick ? 256 : 1024;
  p.view.width = p.view.height = side;
  p.view.dx = p.view.dy = 3.0f / float(side);
  p.mandelbrot_reps = quick ? 3 : 7;
  if (quick)
    p.compile_ops_and_reps = {{10, 5}, {100, 5}, {1000, 2}, {10000, 1}};
  else
    p.compile_ops_and_reps = {{10, 9}, {100, 9}, {1000, 5}, {10000, 1}, {50000, 1}, {100000, 1}};
  p.round_trips = quick ? 2000 : 20000;
  return p;
}

/// 64-byte aligned host floats (what Kiln's own buffers get, so neither side is favoured).
struct HostFloats {
  explicit HostFloats(size_t n)
      : size(n), data(static_cast<float*>(std::aligned_alloc(64, (n * sizeof(float) + 63) / 64 * 64)), std::free) {}
  float* get() const { return data.get(); }
  size_t size;
  std::unique_ptr<float, decltype(&std::free)> data;
};

/// Deterministic values in [-1, 1), filled in parallel.
HostFloats random_floats(size_t n, uint32_t seed) {
  HostFloats out(n);
  float* p = out.get();
  tbb::parallel_for(size_t(0), n, size_t(1) << 16, [=](size_t begin) {
    for (size_t i = begin; i < std::min(n, begin + (size_t(1) << 16)); ++i) {
      uint32_t h = uint32_t(i) * 2654435761u ^ seed;
      h ^= h >> 16, h *= 0x7feb352du, h ^= h >> 15, h *= 0x846ca68bu, h ^= h >> 16;
      p[i] = float(h >> 8) * (2.0f / 16777216.0f) - 1.0f;
    }
  });
  return out;
}

/// Number of elements whose bits differ.
size_t mismatches(const float* a, const float* b, size_t n) {
  size_t count = 0;
  for (size_t i = 0; i < n; ++i) count += std::memcmp(a + i, b + i, sizeof(float)) != 0;
  return count;
}

std::string agreement(size_t differing, size_t n) {
  return differing == 0 ? "bit-exact" : std::to_string(differing) + "/" + std::to_string(n) + " DIFFER";
}

std::string rate(double value, const char* unit) {
  char text[64];
  std::snprintf(text, sizeof(text), "%.1f %s", value, unit);
  return text;
}

// ---- 1 and 2: streaming kernels over wrapped inputs ---------------------------------------

struct StreamInputs {
  explicit StreamInputs(size_t n) : x(random_floats(n, 1)), y(random_floats(n, 2)), z(random_floats(n, 3)), out(n) {}
  HostFloats x, y, z, out;  ///< `out` receives the baselines' results
};

/// Times eval() of the cached kernel that `trace()` records against `baseline(out)`, which
/// writes its result to `out`; `bytes_per_element` moved gives the throughput. Two rows:
/// against the loop writing to memory it reuses (the usual hand-written code), and, to
/// separate code quality from allocation policy, against the loop writing to freshly
/// allocated memory, as every Kiln eval does.
void stream_rows(std::vector<Row>& rows, const std::string& name, const Plan& plan, StreamInputs& in,
                 size_t bytes_per_element, const std::function<kiln::Float()>& trace,
                 const std::function<void(float*)>& baseline) {
  size_t n = plan.stream_elements;
  kiln::Float first = trace();  // compiles; also the result we check
  kiln::eval(first);
  baseline(in.out.get());
  std::string check = agreement(mismatches(first.data(), in.out.get(), n), n);
  first = kiln::Float();

  auto kiln_rep = [&] {
    kiln::Float out = trace();
    return time_once([&] { kiln::eval(out); });
  };
  auto baseline_rep = [&] { return time_once([&] { baseline(in.out.get()); }); };
  auto fresh_rep = [&] {
    std::unique_ptr<HostFloats> out;
    return time_once([&] {
      out = std::make_unique<HostFloats>(n);
      baseline(out->get());
    });
  };
  std::vector<double> t = alternate(plan.stream_warmup, plan.stream_reps, {kiln_rep, baseline_rep, fresh_rep});
  double kiln_s = t[0], baseline_s = t[1], fresh_s = t[2];
  double gb = double(n) * double(bytes_per_element) / 1e9;
  rows.push_back({name, kiln_s, baseline_s, Goal::RatioAtLeast, 0.9,
                  "kiln " + rate(gb / kiln_s, "GB/s") + ", loop " + rate(gb / baseline_s, "GB/s") + ", " + check});
  rows.push_back(
      {"  same, loop into fresh memory", kiln_s, fresh_s, Goal::None, 0,
       "diagnostic: the loop allocates (and page-faults) its output each time; " + rate(gb / fresh_s, "GB/s")});
}

void run_stream(const Plan& plan, std::vector<Row>& rows, bool fused, bool triad_too) {
  size_t n = plan.stream_elements;
  StreamInputs in(n);
  kiln::Float x = kiln::Float::wrap(in.x.get(), n), y = kiln::Float::wrap(in.y.get(), n),
              z = kiln::Float::wrap(in.z.get(), n);
  size_t block = kiln::block_size();
  std::string size = "2^" + std::to_string(std::countr_zero(n));
  if (fused)
    stream_rows(
        rows, "fused 10-op expr, " + size + " f32", plan, in, 16, [&] { return fused10(x, y, z); },
        [&](float* out) { fused10_loop(in.x.get(), in.y.get(), in.z.get(), out, n, block); });
  if (triad_too)
    stream_rows(
        rows, "triad a*s+b, " + size + " f32", plan, in, 12, [&] { return triad(x, 3.0f, y); },
        [&](float* out) { triad_loop(in.x.get(), 3.0f, in.y.get(), out, n, block); });
}

// ---- 3: Mandelbrot as one unrolled kernel ------------------------------------------------

kiln::Float mandelbrot_trace(const MandelbrotView& v) {
  kiln::UInt32 index = kiln::arange<kiln::UInt32>(v.pixels());
  kiln::Float cx = v.x0 + kiln::cast<float>(index % v.width) * v.dx;
  kiln::Float cy = v.y0 + kiln::cast<float>(index / v.width) * v.dy;
  kiln::Float zx(0.0f), zy(0.0f), count(0.0f);
  kiln::Bool active(true);
  for (int n = 0; n < v.iterations; ++n) mandelbrot_step(zx, zy, count, active, cx, cy, v.bailout);
  return count;
}

void run_mandelbrot(const Plan& plan, std::vector<Row>& rows) {
  const MandelbrotView& v = plan.view;
  size_t n = v.pixels(), block = kiln::block_size();
  std::string size =
      std::to_string(v.width) + "x" + std::to_string(v.height) + ", " + std::to_string(v.iterations) + " it";

  // First evaluation: compiles. The log gives Kiln's own codegen and compile times.
  double trace_s = 0;
  kiln::Float first;
  Launch launch;
  double first_s = 0;
  {
    LaunchLog log;
    trace_s = time_once([&] { first = mandelbrot_trace(v); });
    first_s = time_once([&] { kiln::eval(first); });
    auto launches = log.launches();
    if (!launches.empty()) launch = launches.back();
  }
  HostFloats early(n), branch_free(n);
  mandelbrot_early_exit(v, early.get(), block);
  mandelbrot_branch_free(v, branch_free.get(), block);
  std::string check_early = agreement(mismatches(first.data(), early.get(), n), n);
  std::string check_branch_free = agreement(mismatches(first.data(), branch_free.get(), n), n);
  first = kiln::Float();

  double total_iterations = 0;
  for (size_t i = 0; i < n; ++i) total_iterations += early.get()[i];
  auto kiln_rep = [&] {
    kiln::Float counts = mandelbrot_trace(v);
    return time_once([&] { kiln::eval(counts); });
  };
  std::vector<double> t =
      alternate(1, plan.mandelbrot_reps,
                {kiln_rep, [&] { return time_once([&] { mandelbrot_early_exit(v, early.get(), block); }); },
                 [&] { return time_once([&] { mandelbrot_branch_free(v, branch_free.get(), block); }); }});
  double kiln_s = t[0], early_s = t[1], branch_free_s = t[2];

  double lane_iterations = double(n) * v.iterations;
  rows.push_back({"mandelbrot " + size + " vs early exit", kiln_s, early_s, Goal::RatioAtLeast, 0.8,
                  rate(lane_iterations / kiln_s / 1e9, "G lane-it/s") + "; loop does " +
                      rate(100 * total_iterations / lane_iterations, "%") + " of the iterations, " + check_early});
  rows.push_back({"mandelbrot " + size + " vs branch-free", kiln_s, branch_free_s, Goal::RatioAtLeast, 0.8,
                  "same masked formulation, tiles of 64 pixels, " + check_branch_free});
  Row compile{"mandelbrot compile (" + std::to_string(launch.ops) + " ops)",
              (launch.codegen_ms + launch.compile_ms) / 1e3,
              kNone,
              Goal::None,
              0,
              ""};
  compile.note = "codegen " + format_seconds(launch.codegen_ms / 1e3) + " + LLVM " +
                 format_seconds(launch.compile_ms / 1e3) + "; trace " + format_seconds(trace_s) + "; first eval " +
                 format_seconds(first_s);
  rows.push_back(compile);
}

// ---- 4: compile time against kernel size -------------------------------------------------

/// Median codegen+LLVM seconds of compiling op_chain(ops) `reps` times, each a new kernel
/// (`salt`); `note` gets how it was measured.
double chain_compile_seconds(const kiln::Float& x, const kiln::Float& y, size_t ops, int reps, std::string& note) {
  static uint32_t salt = 1;
  std::vector<double> logged, difference, tracing;
  size_t logged_ops = 0;
  for (int r = 0; r < reps; ++r) {
    kiln::flush_kernel_cache();
    uint32_t s = salt++;
    LaunchLog log;
    kiln::Float a, b;
    tracing.push_back(time_once([&] { a = op_chain(x, y, ops, s); }));
    double first = time_once([&] { kiln::eval(a); });
    b = op_chain(x, y, ops, s);  // the same kernel again: a cache hit
    double cached = time_once([&] { kiln::eval(b); });
    difference.push_back(first - cached);
    for (const Launch& l : log.launches())
      if (l.compiled) {
        logged.push_back((l.codegen_ms + l.compile_ms) / 1e3);
        logged_ops = l.ops;
      }
  }
  note = "codegen+LLVM from the log (ops=" + std::to_string(logged_ops) + "); first-cached eval " +
         format_seconds(median(difference)) + "; trace " + format_seconds(median(tracing)) +
         (reps > 1 ? "; median of " + std::to_string(reps) : "; one run");
  return median(logged);
}

std::string ms_per_op(double seconds, size_t ops) {
  char text[64];
  std::snprintf(text, sizeof(text), "%.4f ms/op", seconds * 1e3 / double(ops));
  return text;
}

/// Rows per kernel size; then, for kernels of 10,000 ops and more, compile time per op
/// against the 1000-op kernel's (linear growth keeps the ratio near 1), and the 10,000-op
/// kernel compiled whole (kiln::set_kernel_split(0)) against in pieces.
void run_compile_times(const Plan& plan, std::vector<Row>& rows) {
  ScopedFlag no_disk(kiln::Flag::DiskCache, false);  // a kernel from an earlier run would not compile
  const size_t n = 1024;                             // small: the kernel's run time does not matter here
  HostFloats hx = random_floats(n, 4), hy = random_floats(n, 5);
  kiln::Float x = kiln::Float::wrap(hx.get(), n), y = kiln::Float::wrap(hy.get(), n);
  std::map<size_t, double> seconds;
  for (auto [ops, reps] : plan.compile_ops_and_reps) {
    Row row{"compile " + std::to_string(ops) + "-op kernel", 0,    kNone,
            ops == 100 ? Goal::KilnAtMost : Goal::None,      5e-3, ""};
    row.kiln_s = seconds[ops] = chain_compile_seconds(x, y, ops, reps, row.note);
    rows.push_back(row);
  }
  const double per_op_1000 = seconds.at(1000) / 1000;
  for (auto [ops, compile_s] : seconds) {
    if (ops < 10000) continue;
    rows.push_back({"  compile per op, " + std::to_string(ops) + " vs 1000 ops", compile_s / double(ops), per_op_1000,
                    Goal::RatioAtLeast, 0.5,
                    ms_per_op(compile_s, ops) + " against " + ms_per_op(seconds.at(1000), 1000) +
                        " (ratio near 1: compile time linear in kernel size)"});
  }
  if (seconds.count(10000)) {
    uint32_t split = kiln::kernel_split();
    kiln::set_kernel_split(0);
    std::string note;
    double whole_s = chain_compile_seconds(x, y, 10000, 1, note);
    kiln::set_kernel_split(split);
    rows.push_back({"  compile 10000-op kernel in pieces vs whole", seconds.at(10000), whole_s, Goal::None, 0,
                    "pieces of " + std::to_string(split) +
                        " statements (kiln::kernel_split()); whole: " + ms_per_op(whole_s, 10000)});
  }
}

// ---- 5: the round trip of a tiny cached kernel -------------------------------------------

void run_round_trip(const Plan& plan, std::vector<Row>& rows) {
  const size_t n = 16;
  HostFloats ha = random_floats(n, 6), hb = random_floats(n, 7);
  kiln::Float a = kiln::Float::from(ha.get(), n), b = kiln::Float::from(hb.get(), n);
  float sink = 0;
  auto round_trip = [&] {
    auto start = Clock::now();
    kiln::Float r = kiln::sqrt(a * b + 1.0f) - a * 0.5f;  // mul, add, sqrt, mul, sub
    kiln::eval(r);
    sink += r.read(3);
    return seconds_between(start, Clock::now());
  };
  for (int i = 0; i < 200; ++i) round_trip();
  std::vector<double> samples;
  for (int i = 0; i < plan.round_trips; ++i) samples.push_back(round_trip());
  std::sort(samples.begin(), samples.end());
  Row row{"round trip, 5 ops on 16 lanes", median(samples), kNone, Goal::KilnAtMost, 10e-6, ""};
  row.note = "trace + eval (cache hit) + read(3); p10 " + format_seconds(samples[samples.size() / 10]) + ", p90 " +
             format_seconds(samples[samples.size() * 9 / 10]) + ", " + std::to_string(plan.round_trips) + " trips" +
             (std::isfinite(sink) ? "" : " (NaN!)");
  rows.push_back(row);
}

// ---- driver -------------------------------------------------------------------------------

std::string cpu_name() {
  std::ifstream info("/proc/cpuinfo");
  for (std::string line; std::getline(info, line);)
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown";
}

int usage(const char* program, int code) {
  std::fprintf(code ? stderr : stdout,
               "usage: %s [--quick] [--json] [--threads N] [--only NAME]\n"
               "  --quick      small sizes and few repetitions (seconds)\n"
               "  --json       print JSON instead of a table\n"
               "  --threads N  limit Kiln and the baselines to N threads\n"
               "  --only NAME  run one group: stream, fused, triad, mandelbrot, compile, roundtrip,\n"
               "               story (story 1's loop, Dr.Jit's too if installed), cache,\n"
               "               control (while_loop + dispatch path tracer, symbolic vs evaluated)\n"
               "               ad (reverse pass vs primal: elementwise, MLP-shaped, path tracer)\n"
               "               memory (gather and scatter_add at random indices vs C++ loops)\n"
               "               ptx (PTX generation for CUDA vs a CPU compile; ptxas, where installed),\n"
               "               gpu (on a GPU: triad and fused vs nvcc, sum/prefix_sum/compress vs CUB,\n"
               "                    compile times, round trip)\n",
               program);
  return code;
}

int run(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--quick")
      o.quick = true;
    else if (arg == "--json")
      o.json = true;
    else if (arg == "--threads" && i + 1 < argc)
      o.threads = std::atoi(argv[++i]);
    else if (arg == "--only" && i + 1 < argc)
      o.only = argv[++i];
    else if (arg == "--help" || arg == "-h")
      return usage(argv[0], 0);
    else
      return usage(argv[0], 2);
  }
  std::unique_ptr<tbb::global_control> limit;
  if (o.threads > 0)
    limit = std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism, size_t(o.threads));
  Plan plan = make_plan(o.quick);
  auto wanted = [&](const char* group) { return o.only.empty() || o.only == group; };
  auto progress = [&](const char* what) {
    if (!o.json) std::fprintf(stderr, "running %s...\n", what);
  };

  std::vector<Row> rows;
  bool fused = wanted("stream") || wanted("fused"), triad_too = wanted("stream") || wanted("triad");
  if (fused || triad_too) progress("streaming kernels"), run_stream(plan, rows, fused, triad_too);
  if (wanted("mandelbrot")) progress("mandelbrot"), run_mandelbrot(plan, rows);
  if (wanted("compile")) progress("compile times"), run_compile_times(plan, rows);
  if (wanted("roundtrip")) progress("round trip"), run_round_trip(plan, rows);
  if (wanted("story")) progress("story 1 loop"), run_story(o.quick, rows);
  if (wanted("cache")) progress("kernel cache"), run_cache(o.quick, rows);
  std::vector<std::string> failures;  // wrong results: reported after the table, exit status 1
  if (wanted("control")) progress("control flow"), run_control(o.quick, rows, failures);
  if (wanted("ad")) progress("automatic differentiation"), run_ad(o.quick, rows, failures);
  if (wanted("memory")) progress("gathers and scatters"), run_memory(o.quick, rows, failures);
  if (wanted("ptx")) progress("PTX generation"), run_ptx(o.quick, rows);
  if (wanted("gpu")) progress("GPU"), run_gpu(o.quick, rows);

  Facts facts = {
      {"mode", o.quick ? "quick" : "full"},
      {"cpu", cpu_name()},
      {"threads", std::to_string(tbb::this_task_arena::max_concurrency())},
      {"kiln packet width", std::to_string(kiln::packet_width())},
      {"block (lanes per task)", std::to_string(kiln::block_size())},
      {"baseline", baseline_build()},
  };
  if (o.json)
    print_json(std::cout, facts, rows);
  else
    print_table(std::cout, facts, rows);
  for (const std::string& failure : failures) std::fprintf(stderr, "kiln_bench: FAILED: %s\n", failure.c_str());
  return failures.empty() ? 0 : 1;
}

}  // namespace
}  // namespace bench

int main(int argc, char** argv) {
  try {
    return bench::run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kiln_bench: %s\n", e.what());
    return 1;
  }
}
