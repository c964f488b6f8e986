// Process-wide settings and statistics: flags, logging, memory counters, evaluation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace kiln {

/// Behaviour switches. Each is also read once from the environment at start-up.
enum class Flag : uint8_t {
  Checks,       ///< KILN_CHECKS=1: bounds-check gathers and scatters, raise on violation.
  Interpreter,  ///< KILN_BACKEND=interp: run kernels on the reference interpreter.
};

void set_flag(Flag flag, bool value);
bool flag(Flag flag);

enum class LogLevel : uint8_t { Error, Warn, Info, Debug };
/// KILN_LOG=info prints one line per kernel launch; debug also prints the kernel IR.
void set_log_level(LogLevel level);
LogLevel log_level();

/// Bytes of memory Kiln's arrays use (wrapped caller memory is not counted), and bytes
/// of freed blocks held for reuse.
struct MemoryStats {
  size_t current_bytes = 0;  ///< in use by live arrays
  size_t peak_bytes = 0;     ///< highest current_bytes since start-up or reset_peak_memory()
  size_t allocations = 0;    ///< allocations served since start-up
  size_t cached_bytes = 0;   ///< freed blocks kept for reuse (not in use)
};
MemoryStats memory_stats();
/// Sets the peak counter to the current usage.
void reset_peak_memory();
/// Returns every cached block to the system.
void flush_memory_cache();
/// Caps the bytes of freed blocks kept for reuse (default 4 GiB; 0 disables the cache).
void set_memory_cache_limit(size_t bytes);

/// Statistics of the in-memory kernel cache.
struct CacheStats {
  size_t hits = 0;
  size_t compiles = 0;
  size_t kernels = 0;  ///< kernels held in memory now
};
CacheStats cache_stats();
/// Drops every compiled kernel held in memory.
void flush_kernel_cache();

/// One kernel launch, as recorded by kernel_history().
struct KernelLaunch {
  std::string hash;  ///< structural hash of the kernel (32 hex digits)
  size_t size = 0;   ///< lanes launched
  size_t ops = 0;    ///< operations in the kernel (leaves not counted)
  size_t inputs = 0, outputs = 0, side_effects = 0;
  bool cache_hit = false;
  double codegen_ms = 0, compile_ms = 0, run_ms = 0;
};
/// The most recent launches (at most 4096 are kept), oldest first; `clear` empties it.
std::vector<KernelLaunch> kernel_history(bool clear = false);

/// Packet width (SIMD lanes) of the host's LLVM backend: 16 (AVX-512), 8 (AVX2) or 4.
int packet_width();
/// Number of lanes each parallel task runs (a multiple of the packet width).
void set_block_size(size_t lanes);
size_t block_size();

/// Prints the pending IR (everything reachable from live arrays), deterministically.
std::string ir_listing();
/// Number of live IR nodes (for tests of graph collapse and leaks).
size_t live_nodes();

}  // namespace kiln
