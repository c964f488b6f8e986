// In-memory kernel cache.
#include "cache/kernel_cache.h"

#include <kiln/runtime.h>

#include <mutex>
#include <unordered_map>

namespace kiln::detail {
namespace {
struct Cache {
  std::mutex mutex;
  std::unordered_map<Hash128, std::shared_ptr<const Kernel>, Hash128Hasher> kernels;
  size_t hits = 0, compiles = 0;
};
Cache& cache() {
  static Cache* instance = new Cache();
  return *instance;
}
}  // namespace

CachedKernel find_or_compile(Backend& backend, const KernelForm& form, const Hash128& key) {
  Cache& c = cache();
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    auto it = c.kernels.find(key);
    if (it != c.kernels.end()) {
      c.hits++;
      return {it->second, KernelSource::Memory, {}};
    }
  }
  CompileTimes times;
  std::shared_ptr<const Kernel> kernel = backend.compile(form, times);
  std::lock_guard<std::mutex> lock(c.mutex);
  c.compiles++;
  c.kernels.emplace(key, kernel);
  return {kernel, KernelSource::Compiled, times};
}

}  // namespace kiln::detail

namespace kiln {
CacheStats cache_stats() {
  detail::Cache& c = detail::cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  return {c.hits, c.compiles, c.kernels.size()};
}
void flush_kernel_cache() {
  detail::Cache& c = detail::cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  c.kernels.clear();
}
}  // namespace kiln
