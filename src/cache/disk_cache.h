// The on-disk kernel cache: one file per entry in $KILN_CACHE_DIR (default ~/.cache/kiln),
// holding a checked header and zstd-compressed payload (a kernel's relocatable object
// code, or the generalization record of a kernel shape). Files are written to a temporary
// file in the same directory and renamed, so concurrent processes never see a torn entry;
// the total size is bounded with least-recently-used eviction. A file that is truncated,
// corrupt, written by another Kiln/LLVM/CPU or stored under another key is never used: it
// is reported once (a warning) and removed, and the caller recompiles it. A directory that is a
// symlink, not owned by the user or writable by others is refused (memory-only caching).
#pragma once

#include "util/hash.h"

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <unordered_set>
#include <vector>

namespace kiln::detail {

/// What an entry holds; each kind has its own file suffix.
enum class DiskEntryKind : uint8_t {
  Kernel,  ///< relocatable object code of one kernel ("<key>.kernel")
  Shape,   ///< generalization record of one kernel shape ("<key>.shape")
};

/// What produced an entry's payload; a file written for another target is rejected.
struct DiskTarget {
  std::string compiler;  ///< e.g. "LLVM 19.1.7"
  std::string cpu;       ///< triple, CPU name and features
};

class DiskCache {
 public:
  /// Opens the directory named by KILN_CACHE_DIR (default ~/.cache/kiln) lazily, on first use.
  DiskCache();

  /// The payload stored under `key`, or nothing when there is no valid entry (a rejected
  /// file is reported once per process and removed). A hit marks the entry as recently used.
  std::optional<std::vector<uint8_t>> load(DiskEntryKind kind, const Hash128& key, const DiskTarget& target);
  /// Stores `payload` under `key` (atomically replacing any previous file), then evicts
  /// least-recently-used entries while the total exceeds the size limit. Failures to
  /// write (full disk, permissions) are reported once and otherwise ignored.
  void store(DiskEntryKind kind, const Hash128& key, const DiskTarget& target, std::span<const uint8_t> payload);

  /// False when the directory was refused or cannot be created (see problem()).
  bool enabled();
  /// Why the disk cache is disabled; empty when it works.
  std::string problem();
  /// Bytes of all Kiln entries in the directory (as last scanned plus what this process
  /// wrote since).
  size_t bytes();
  /// The directory in use.
  std::string directory();
  /// Full path of the file for an entry (for tests and diagnostics).
  std::string entry_path(DiskEntryKind kind, const Hash128& key);

  /// Switches to another directory (empty: the default). Validates it on next use.
  void set_directory(const std::string& path);
  void set_limit(size_t bytes);
  size_t limit();
  /// Removes every Kiln entry and temporary file in the directory; other files stay.
  void clear();

 private:
  /// Creates/validates the directory on first use; returns enabled().
  bool open_locked();
  /// Deletes least-recently-used entries until the total is at most 90% of the limit;
  /// `keep` (the entry just written) goes only when it alone exceeds the limit.
  void evict_locked(const std::string& keep);
  /// Writes `bytes` to a temporary file, renames it to `name` and counts it in bytes_;
  /// returns why it failed, or "".
  std::string write_file_locked(const std::string& name, std::span<const uint8_t> bytes);
  /// Removes a rejected entry (open as `fd`) so that no later process trips over it.
  void remove_rejected_locked(int fd, const std::string& path);
  /// Logs `message` as a warning unless something was already reported under `key`.
  void report_once_locked(const std::string& key, const std::string& message);

  std::mutex mutex_;
  std::string directory_;
  std::string problem_;
  bool opened_ = false;
  size_t limit_ = size_t(1) << 30;
  size_t bytes_ = 0;
  uint64_t temp_counter_ = 0;                 ///< numbers this process's temporary files
  std::unordered_set<std::string> reported_;  ///< paths (and directories) already reported
};

/// The process-wide disk cache.
DiskCache& disk_cache();

}  // namespace kiln::detail
