// Process-wide settings and statistics: flags, logging, memory counters, evaluation.
#pragma once

#include <kiln/device.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace kiln {

/// Behaviour switches. Each is also read once from the environment at start-up.
enum class Flag : uint8_t {
  Checks,       ///< KILN_CHECKS=1: bounds-check gathers and scatters, raise on violation.
  Interpreter,  ///< KILN_BACKEND=interp: run kernels on the reference interpreter (host memory only: not a GPU's).
  Generalize,   ///< on unless KILN_GENERALIZE=0: literals that change become parameters.
  DiskCache,    ///< on unless KILN_DISK_CACHE=0: keep compiled kernels on disk.
  Symbolic,     ///< on unless KILN_SYMBOLIC=0: loops, conditionals and calls default to symbolic mode.
};

void set_flag(Flag flag, bool value);
bool flag(Flag flag);

enum class LogLevel : uint8_t { Error, Warn, Info, Debug };
/// KILN_LOG=info prints one line per kernel launch; debug also prints the lowering of each
/// kernel: its form after scheduling (literal slots with their values), after
/// generalization (parameters), and the backend's code (LLVM IR as rendered and optimized).
void set_log_level(LogLevel level);
LogLevel log_level();

/// Bytes of memory Kiln's arrays use on one device (wrapped caller memory is not counted),
/// and bytes of freed blocks held there for reuse.
struct MemoryStats {
  size_t current_bytes = 0;  ///< in use by live arrays
  size_t peak_bytes = 0;     ///< highest current_bytes since start-up or reset_peak_memory()
  size_t allocations = 0;    ///< allocations served since start-up
  size_t cached_bytes = 0;   ///< freed blocks kept for reuse (not in use)
};
MemoryStats memory_stats(Device device = default_device());
/// Sets the peak counter to the current usage.
void reset_peak_memory(Device device = default_device());
/// Returns every cached block to the device.
void flush_memory_cache(Device device = default_device());
/// Caps the bytes of freed blocks kept for reuse (default 4 GiB per device; 0 disables the cache).
void set_memory_cache_limit(size_t bytes, Device device = default_device());

/// Where a launched kernel came from.
enum class KernelSource : uint8_t {
  Compiled,     ///< compiled now, with its literals baked in
  Generalized,  ///< compiled now as a generic kernel: some literal slots became parameters
  Memory,       ///< found in the in-memory cache (no code generated)
  Disk,         ///< loaded from the disk cache (no code generated)
  Library,      ///< not a kernel: a library call such as matmul's OpenBLAS GEMM (an evaluation boundary)
};
/// "compiled", "generalized", "memory", "disk" or "library"
const char* source_name(KernelSource source);

/// Statistics of the kernel caches.
struct CacheStats {
  size_t memory_hits = 0;      ///< launches served by the in-memory cache
  size_t disk_hits = 0;        ///< launches served by the disk cache
  size_t compiles = 0;         ///< kernels compiled (specialized and generalized)
  size_t generalizations = 0;  ///< compilations that turned literal slots into parameters
  size_t kernels = 0;          ///< kernels held in memory now
  size_t disk_bytes = 0;       ///< bytes of the disk cache directory's Kiln entries
  bool disk_enabled = false;   ///< false when the disk cache is off or its directory was refused
  std::string disk_problem;    ///< why the disk cache is not used (empty when it is)
};
CacheStats cache_stats();
/// Drops every compiled kernel held in memory and forgets which literals varied (the disk
/// cache stays: kernels found there are loaded instead of compiled).
void flush_kernel_cache();
/// Removes Kiln's entries from the disk cache directory.
void clear_disk_cache();
/// Uses `path` as the disk cache directory (empty: $KILN_CACHE_DIR, else ~/.cache/kiln).
/// It is created with mode 0700; one that is a symlink, owned by another user or
/// writable by others is refused (with a warning), and kernels are then cached in memory only.
void set_disk_cache_dir(const std::string& path);
std::string disk_cache_dir();
/// Caps the disk cache (default 1 GiB, or $KILN_CACHE_LIMIT bytes with an optional K/M/G
/// suffix); least recently used entries are removed first.
void set_disk_cache_limit(size_t bytes);

/// Number of distinct literal variants of one kernel shape at which the literals that
/// changed become kernel parameters (default 2: the second variant; 1: every literal is
/// a parameter from the first compilation). Flag::Generalize turns this off.
void set_generalization_threshold(uint32_t variants);
uint32_t generalization_threshold();

namespace detail {
struct LaunchListing;
}

/// One kernel launch, as recorded by kernel_history().
struct KernelLaunch {
  std::string hash;             ///< identity of the kernel that ran (32 hex digits)
  std::string shape_hash;       ///< its shape: the same kernel with literal values as placeholders
  size_t size = 0;              ///< lanes launched
  Device device = Device::CPU;  ///< where it ran
  std::string backend;          ///< what ran it: "llvm", "interp", "cuda", "cuda-emulated" or "library"
  size_t ops = 0;               ///< operations in the kernel (leaves not counted)
  size_t inputs = 0, outputs = 0, side_effects = 0;
  size_t parameters = 0;  ///< literal slots passed at launch instead of baked in
  KernelSource source = KernelSource::Compiled;
  std::string reason;  ///< why it was compiled; empty for cache hits
  double codegen_ms = 0, compile_ms = 0, run_ms = 0;
  /// Time spent identifying the kernel (hashing its form) and finding it in memory or
  /// loading it from disk; compilation is not included.
  double lookup_ms = 0;
  /// The kernel's statements with the label and creation site of each: labels as traced
  /// for this launch (creation sites of a cache hit without labels are those of the
  /// launch that compiled or loaded the kernel).
  std::string ir() const;
  std::shared_ptr<const detail::LaunchListing> listing;
};
/// The most recent launches (at most 4096 are kept), oldest first; `clear` empties it.
std::vector<KernelLaunch> kernel_history(bool clear = false);

/// Packet width (SIMD lanes) of the host's LLVM backend: 16 (AVX-512), 8 (AVX2) or 4.
int packet_width();
/// What Kiln sees of CUDA: "NVIDIA driver 13.0, 1 device" where a driver and a device are
/// found, else one sentence saying why not (no driver, too old, no device). Loads the
/// driver on first use (KILN_LIBCUDA_PATH, else libcuda.so.1).
std::string cuda_status();
/// Number of lanes each parallel task runs (a multiple of the packet width).
void set_block_size(size_t lanes);
size_t block_size();
/// Kernels of more than this many statements compile as pieces of about this many, each
/// a function of its own, so that compile time grows linearly with kernel size (LLVM's
/// scheduling and register allocation grow faster than that within one function). Default
/// 5000 (smaller pieces compile a little faster still, but each boundary costs run time);
/// 0 never splits. Results are the same either way; kernels compiled before a change keep
/// their form.
void set_kernel_split(uint32_t statements);
uint32_t kernel_split();

/// Prints the pending IR (everything reachable from live arrays), deterministically.
std::string ir_listing();
/// Number of live IR nodes (for tests of graph collapse and leaks).
size_t live_nodes();

}  // namespace kiln
