// The child process of tests/cpp/test_cache_processes.cpp: runs a deterministic workload
// against the disk cache named by $KILN_CACHE_DIR and prints one line, e.g.
//
//   compiles=5 generalizations=1 disk_hits=0 memory_hits=28 disk_enabled=1 checksum=<16 hex> compiled=<hash>,<hash>
//
// where `checksum` is FNV-1a of every output byte and `compiled` lists the kernels this
// process compiled (32 hex digits each, in launch order), so the parent can tell which
// disk entries were recompiled. Usage: cache_child <seed>.
#include <kiln/kiln.h>

#include "film_camera.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

namespace {

/// 64-bit FNV-1a over every byte handed to add().
class Checksum {
 public:
  template <typename T> void add(const std::vector<T>& values) {
    const auto* bytes = reinterpret_cast<const unsigned char*>(values.data());
    for (size_t i = 0; i < values.size() * sizeof(T); ++i) state_ = (state_ ^ bytes[i]) * 0x100000001b3ull;
  }
  uint64_t value() const { return state_; }

 private:
  uint64_t state_ = 0xcbf29ce484222325ull;
};

/// Story 1: 30 iterations of the film camera with random settings (generalizes once).
void camera_loop(uint64_t seed, Checksum& checksum) {
  std::mt19937_64 random(seed);
  for (int iteration = 0; iteration < 30; ++iteration)
    checksum.add(film::render_crop(film::random_settings(random)).to_vector());
}

/// A histogram by scatter_add, then gathers from it and from a table (several kernels).
void histogram(Checksum& checksum) {
  using namespace kiln;
  UInt32 bin = (arange<UInt32>(4096) * 2654435761u) >> 26u;
  UInt32 counts = zeros<UInt32>(64);
  scatter_add(counts, UInt32(1u), bin);
  Float table = cast<float>(arange<UInt32>(64)) * 0.5f;
  Float picked = gather(table, bin) + cast<float>(gather(counts, bin));
  checksum.add(counts.to_vector());
  checksum.add(picked.to_vector());
}

/// A Float64 kernel with transcendental functions.
void float64_curve(Checksum& checksum) {
  using namespace kiln;
  Float64 x = linspace<Float64>(0.0, 2.0, 1000);
  checksum.add((exp(x) * sin(x) + sqrt(x)).to_vector());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <seed>\n", argv[0]);
    return 2;
  }
  Checksum checksum;
  camera_loop(std::strtoull(argv[1], nullptr, 10), checksum);
  histogram(checksum);
  float64_curve(checksum);

  std::string compiled;
  for (const kiln::KernelLaunch& launch : kiln::kernel_history())
    if (launch.source == kiln::KernelSource::Compiled || launch.source == kiln::KernelSource::Generalized)
      compiled += (compiled.empty() ? "" : ",") + launch.hash;
  kiln::CacheStats stats = kiln::cache_stats();
  std::printf(
      "compiles=%zu generalizations=%zu disk_hits=%zu memory_hits=%zu disk_enabled=%d checksum=%016llx "
      "compiled=%s\n",
      stats.compiles, stats.generalizations, stats.disk_hits, stats.memory_hits, int(stats.disk_enabled),
      (unsigned long long)checksum.value(), compiled.c_str());
  return 0;
}
