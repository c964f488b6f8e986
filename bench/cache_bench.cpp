// The kernel-cache groups of kiln_bench (see cache_bench.h).
//
// story: the loop of story 1 (../shared/stories/1-film-size-recompiles.txt) as
// examples/film_camera.h writes it. With generalization off every iteration compiles: what
// users of tools that bake host scalars into kernels pay today. When `drjit` is importable,
// bench/drjit_story.py renders the same cameras with Dr.Jit's LLVM backend.
//
// cache: one launch of a fixed op chain (bench/op_chain.h) on 16 lanes whose kernel is found
// in memory, loaded from a temporary disk cache, or compiled with both caches empty. Every
// timed launch is checked against kernel_history() to come from where it is meant to.
#include "cache_bench.h"

#include "harness.h"
#include "op_chain.h"

#include "film_camera.h"

#include <kiln/kiln.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>

namespace bench {
namespace {

std::string times(double ratio) {
  char text[32];
  std::snprintf(text, sizeof(text), ratio >= 10 ? "%.0fx" : "%.1fx", ratio);
  return text;
}

/// A new private directory under the system's temporary directory.
std::filesystem::path make_temporary_directory(const std::string& prefix) {
  std::string pattern = (std::filesystem::temp_directory_path() / (prefix + "XXXXXX")).string();
  if (!mkdtemp(pattern.data())) throw std::runtime_error("kiln_bench: cannot create a directory like " + pattern);
  return pattern;
}

// ---- story: 30 iterations of a camera whose host scalars change -------------------------

constexpr int kStoryIterations = 30;
constexpr uint64_t kStorySeed = 7;

/// One pass of the loop: what it compiled, how long it took, what it rendered.
struct StoryRun {
  size_t compilations = 0;
  double compile_s = 0;  ///< codegen + LLVM of the compiled and generalized launches
  double wall_s = 0;     ///< the whole loop: trace, eval, read back
  std::vector<std::vector<float>> images;
};

/// Runs the loop from empty in-memory caches (the disk cache is off during the group).
StoryRun story_loop(const std::vector<film::CameraSettings>& cameras, bool generalize) {
  ScopedFlag generalization(kiln::Flag::Generalize, generalize);
  kiln::flush_kernel_cache();
  kiln::kernel_history(true);
  StoryRun run;
  run.wall_s = time_once([&] {
    for (const film::CameraSettings& camera : cameras) run.images.push_back(film::render_crop(camera).to_vector());
  });
  for (const kiln::KernelLaunch& launch : kiln::kernel_history(true))
    if (launch.source == kiln::KernelSource::Compiled || launch.source == kiln::KernelSource::Generalized) {
      run.compilations++;
      run.compile_s += (launch.codegen_ms + launch.compile_ms) / 1e3;
    }
  return run;
}

double pixel_sum(const StoryRun& run) {
  double sum = 0;
  for (const std::vector<float>& image : run.images)
    for (float v : image) sum += v;
  return sum;
}

/// What bench/drjit_story.py reported, or why it did not run.
struct DrJitRun {
  std::string problem;  ///< empty when it ran
  std::string version;
  size_t compilations = 0;
  double compile_s = 0, wall_s = 0, pixel_sum = 0;
};

/// Standard output and exit status of a shell command.
std::pair<std::string, int> shell(const std::string& command) {
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return {"", -1};
  std::string output;
  char buffer[4096];
  for (size_t n; (n = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0;) output.append(buffer, n);
  return {output, pclose(pipe)};
}

/// The value of `key` in a one-line JSON object: a number's text, or a string unquoted.
std::string json_field(const std::string& json, const std::string& key) {
  size_t at = json.find("\"" + key + "\": ");
  if (at == std::string::npos) return {};
  at += key.size() + 4;
  if (json[at] == '"') return json.substr(at + 1, json.find('"', at + 1) - at - 1);
  return json.substr(at, json.find_first_of(",}", at) - at);
}

/// Renders `cameras` with bench/drjit_story.py, which reads them one per line.
DrJitRun run_drjit(const std::vector<film::CameraSettings>& cameras) {
  DrJitRun run;
  if (shell("python3 -c 'import drjit' 2>/dev/null").second != 0) {
    run.problem = "drjit not installed (python3 -c 'import drjit' failed); skipped";
    return run;
  }
  std::filesystem::path directory = make_temporary_directory("kiln_bench_story_");
  std::filesystem::path camera_file = directory / "cameras.txt";
  {
    std::ofstream out(camera_file);
    out.precision(9);  // floats round-trip
    for (const film::CameraSettings& c : cameras) {
      out << c.film_width << ' ' << c.film_height << ' ' << c.crop_offset_x << ' ' << c.crop_offset_y << ' '
          << c.crop_width << ' ' << c.crop_height << ' ' << c.fov_x;
      for (float v : c.to_world) out << ' ' << v;
      out << '\n';
    }
  }
  auto [output, status] = shell("python3 '" KILN_BENCH_DIR "/drjit_story.py' '" + camera_file.string() + "' 2>&1");
  std::filesystem::remove_all(directory);
  size_t end = output.find_last_not_of('\n');
  size_t begin = end == std::string::npos ? 0 : output.rfind('\n', end) + 1;  // npos + 1 == 0
  std::string last_line = end == std::string::npos ? "" : output.substr(begin, end + 1 - begin);
  if (status != 0 || json_field(last_line, "compilations").empty()) {
    run.problem = "bench/drjit_story.py failed: " + last_line;
    return run;
  }
  run.version = json_field(last_line, "drjit");
  run.compilations = std::stoul(json_field(last_line, "compilations"));
  run.compile_s = std::stod(json_field(last_line, "compile_ms")) / 1e3;
  run.wall_s = std::stod(json_field(last_line, "wall_s"));
  run.pixel_sum = std::stod(json_field(last_line, "pixel_sum"));
  return run;
}

// ---- cache: one launch, its kernel from memory, disk or a cold compile -------------------

constexpr size_t kCacheLanes = 16;      // run time negligible next to the launch overhead
constexpr uint32_t kChainSalt = 12345;  // one fixed kernel per size

/// Times and records of one launch.
struct LaunchTime {
  double eval_s, run_s, codegen_s, compile_s;
  double lookup_s;  ///< hashing the form and finding (or loading) the kernel
};

/// eval() of the chain; throws unless kernel_history() shows one launch from `expected`.
LaunchTime timed_launch(const kiln::Float& x, const kiln::Float& y, size_t ops, kiln::KernelSource expected) {
  kiln::Float out = op_chain(x, y, ops, kChainSalt);
  kiln::kernel_history(true);
  double eval_s = time_once([&] { kiln::eval(out); });
  std::vector<kiln::KernelLaunch> launches = kiln::kernel_history(true);
  if (launches.size() != 1 || launches[0].source != expected) {
    std::string seen;
    for (const kiln::KernelLaunch& l : launches)
      seen += std::string(seen.empty() ? "" : ", ") + kiln::source_name(l.source);
    throw std::runtime_error("cache benchmark: expected one launch whose kernel came from " +
                             std::string(kiln::source_name(expected)) + ", kernel_history() shows [" + seen + "]");
  }
  const kiln::KernelLaunch& l = launches[0];
  return {eval_s, l.run_ms / 1e3, l.codegen_ms / 1e3, l.compile_ms / 1e3, l.lookup_ms / 1e3};
}

/// Points the disk cache at a new empty directory and turns it on; on destruction the
/// default directory comes back and the temporary one is removed.
class TemporaryDiskCache {
 public:
  TemporaryDiskCache() : directory_(make_temporary_directory("kiln_bench_cache_")) {
    kiln::set_disk_cache_dir(directory_.string());
    kiln::CacheStats stats = kiln::cache_stats();
    if (!stats.disk_enabled) {
      restore();
      throw std::runtime_error("cache benchmark: the disk cache is not usable: " + stats.disk_problem);
    }
  }
  ~TemporaryDiskCache() { restore(); }
  TemporaryDiskCache(const TemporaryDiskCache&) = delete;
  TemporaryDiskCache& operator=(const TemporaryDiskCache&) = delete;

 private:
  void restore() {
    kiln::set_disk_cache_dir("");
    std::filesystem::remove_all(directory_);
  }
  ScopedFlag disk_{kiln::Flag::DiskCache, true};
  std::filesystem::path directory_;
};

void cache_rows(std::vector<Row>& rows, const kiln::Float& x, const kiln::Float& y, size_t ops, int rounds,
                int memory_launches) {
  std::vector<double> memory, memory_run, memory_lookup, disk, disk_lookup, cold, cold_codegen, cold_llvm;
  for (int round = 0; round <= rounds; ++round) {  // round 0 warms up
    kiln::clear_disk_cache();
    kiln::flush_kernel_cache();
    LaunchTime c = timed_launch(x, y, ops, kiln::KernelSource::Compiled);
    kiln::flush_kernel_cache();
    LaunchTime d = timed_launch(x, y, ops, kiln::KernelSource::Disk);
    std::vector<LaunchTime> m;
    for (int i = 0; i < memory_launches; ++i) m.push_back(timed_launch(x, y, ops, kiln::KernelSource::Memory));
    if (round == 0) continue;
    cold.push_back(c.eval_s), cold_codegen.push_back(c.codegen_s), cold_llvm.push_back(c.compile_s);
    disk.push_back(d.eval_s), disk_lookup.push_back(d.lookup_s);
    for (const LaunchTime& t : m)
      memory.push_back(t.eval_s), memory_run.push_back(t.run_s), memory_lookup.push_back(t.lookup_s);
  }
  std::string kernel = std::to_string(ops) + "-op kernel";
  double memory_s = median(memory), disk_s = median(disk), cold_s = median(cold);
  rows.push_back({"cache: memory hit, " + kernel, memory_s, kNone, Goal::None, 0,
                  "eval() on " + std::to_string(kCacheLanes) +
                      " lanes, kernel found in memory (the launch cost); "
                      "kernel run " +
                      format_seconds(median(memory_run)) + "; median of " + std::to_string(memory.size())});
  rows.push_back({"  memory hit: cache lookup", median(memory_lookup), kNone, Goal::KilnAtMost, 5e-6,
                  "what the cache adds to the launch: hashing the kernel form and finding the kernel "
                  "(KernelLaunch::lookup_ms); the rest of eval() is scheduling, launch and collapse"});
  rows.push_back({"  disk hit: cache lookup", median(disk_lookup), kNone, ops >= 5000 ? Goal::KilnAtMost : Goal::None,
                  1e-3, "hashing, reading and decompressing the file, linking the object into the JIT"});
  rows.push_back({"cache: disk hit vs cold compile, " + kernel, disk_s, cold_s, Goal::None, 0,
                  "disk hit " + times(disk_s / memory_s) + " the memory hit (+" + format_seconds(disk_s - memory_s) +
                      "); cold " + times(cold_s / memory_s) + " (codegen " + format_seconds(median(cold_codegen)) +
                      " + LLVM " + format_seconds(median(cold_llvm)) + " + store); median of " +
                      std::to_string(rounds)});
}

}  // namespace

void run_story(bool quick, std::vector<Row>& rows) {
  ScopedFlag no_disk(kiln::Flag::DiskCache, false);  // every compilation is real
  std::mt19937_64 random(kStorySeed);
  std::vector<film::CameraSettings> cameras;
  for (int i = 0; i < kStoryIterations; ++i) cameras.push_back(film::random_settings(random));

  story_loop(cameras, true);  // warm-up: starts LLVM and fills the allocator's cache
  int rounds = quick ? 1 : 3;
  std::vector<StoryRun> on, off;
  for (int round = 0; round < rounds; ++round) {
    on.push_back(story_loop(cameras, true));
    off.push_back(story_loop(cameras, false));
  }
  auto median_of = [](const std::vector<StoryRun>& runs, double StoryRun::* field) {
    std::vector<double> values;
    for (const StoryRun& run : runs) values.push_back(run.*field);
    return median(values);
  };
  double on_compile = median_of(on, &StoryRun::compile_s), off_compile = median_of(off, &StoryRun::compile_s);
  double on_wall = median_of(on, &StoryRun::wall_s), off_wall = median_of(off, &StoryRun::wall_s);
  bool same_images = on[0].images == off[0].images;
  std::string runs = rounds > 1 ? "median of " + std::to_string(rounds) : "one run";

  std::string name = "story " + std::to_string(kStoryIterations) + "-it";
  rows.push_back({name + " compile, generalize on vs off", on_compile, off_compile, Goal::None, 0,
                  std::to_string(on[0].compilations) + " vs " + std::to_string(off[0].compilations) +
                      " compilations (codegen+LLVM, kernel_history); images " + (same_images ? "bit-exact" : "DIFFER") +
                      "; " + runs});
  rows.push_back({name + " loop, generalize on vs off", on_wall, off_wall, Goal::None, 0,
                  "trace + eval + to_vector, seed " + std::to_string(kStorySeed) +
                      ", disk cache off, caches flushed first; " + runs});

  DrJitRun drjit = run_drjit(cameras);
  if (!drjit.problem.empty()) {
    rows.push_back({name + " vs Dr.Jit", kNone, kNone, Goal::None, 0, drjit.problem});
    return;
  }
  double sum = pixel_sum(on[0]);
  char agreement[64];
  std::snprintf(agreement, sizeof(agreement), "pixel sums differ by %.1e relative",
                std::fabs(drjit.pixel_sum - sum) / sum);
  rows.push_back({name + " compile vs Dr.Jit " + drjit.version, on_compile, drjit.compile_s, Goal::None, 0,
                  "Dr.Jit LLVM, literals baked in: " + std::to_string(drjit.compilations) +
                      " compilations (Kiln with generalization off: " + format_seconds(off_compile) + ")"});
  rows.push_back({name + " loop vs Dr.Jit " + drjit.version, on_wall, drjit.wall_s, Goal::None, 0,
                  "bench/drjit_story.py, same cameras, empty ~/.drjit, one run; " + std::string(agreement)});
}

void run_cache(bool quick, std::vector<Row>& rows) {
  TemporaryDiskCache disk;
  std::vector<float> hx(kCacheLanes), hy(kCacheLanes);
  for (size_t i = 0; i < kCacheLanes; ++i) hx[i] = 0.25f + 0.01f * float(i), hy[i] = 0.5f - 0.02f * float(i);
  kiln::Float x = kiln::Float::from(hx), y = kiln::Float::from(hy);
  for (size_t ops : {size_t(100), size_t(5000)}) cache_rows(rows, x, y, ops, quick ? 3 : 11, quick ? 20 : 50);
}

}  // namespace bench
