// Story 1's optimization loop: 30 renders with a random film size, crop window, field of
// view and camera each. Prints every compilation with its reason, then the cache totals.
// Run it twice: the second process loads its kernels from the disk cache.
//   film_loop [--no-generalize]
#include <kiln/kiln.h>

#include "film_camera.h"

#include <cstdio>
#include <cstring>
#include <random>

int main(int argc, char** argv) {
  bool generalize = !(argc > 1 && std::strcmp(argv[1], "--no-generalize") == 0);
  kiln::set_flag(kiln::Flag::Generalize, generalize);
  std::mt19937_64 random(2024);
  double total = 0;
  for (int iteration = 0; iteration < 30; ++iteration) {
    film::CameraSettings settings = film::random_settings(random);
    total += kiln::sum(film::render_crop(settings)).item();
  }
  for (const kiln::KernelLaunch& launch : kiln::kernel_history()) {
    if (!launch.reason.empty())
      std::printf("%s %s (%.1f ms): %s\n", kiln::source_name(launch.source), launch.hash.c_str(),
                  launch.codegen_ms + launch.compile_ms, launch.reason.c_str());
  }
  kiln::CacheStats cache = kiln::cache_stats();
  std::printf("30 iterations (sum of pixels %.3f): %zu compiled (%zu generalized), %zu memory hits, %zu disk hits\n",
              total, cache.compiles, cache.generalizations, cache.memory_hits, cache.disk_hits);
  std::printf("disk cache: %s\n", cache.disk_enabled ? kiln::disk_cache_dir().c_str() : cache.disk_problem.c_str());
  return 0;
}
