// The on-disk kernel cache (see disk_cache.h). An entry file holds, every number
// little-endian and fixed-width:
//
//   "KILNDISK" | u32 disk format | u32 kernel format | u32 kind | u64 key.low | u64 key.high
//   | u32 n, n bytes: Kiln version | u32 n, n bytes: compiler | u32 n, n bytes: cpu
//   | u64 payload bytes | u64 compressed bytes | u64 XXH3-64 of every other byte of the file
//   | the zstd-compressed payload
//
// load() checks every length against the bytes actually read before using it, so a file
// cut at any byte, or overwritten with anything, is rejected rather than trusted.
#include "cache/disk_cache.h"

#include <kiln/runtime.h>

#include "form/kernel_form.h"
#include "util/env.h"
#include "util/settings.h"

#include <xxhash.h>
#include <zstd.h>

#include <dirent.h>
#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <optional>
#include <string_view>
#include <tuple>

namespace kiln::detail {
namespace {

constexpr char kMagic[8] = {'K', 'I', 'L', 'N', 'D', 'I', 'S', 'K'};
constexpr uint32_t kDiskFormatVersion = 1;
constexpr size_t kMaxStringBytes = 4096;                  ///< longest version/compiler/cpu string
constexpr uint64_t kMaxPayloadBytes = uint64_t(1) << 30;  ///< largest payload one entry holds
constexpr size_t kDefaultLimit = size_t(1) << 30;
constexpr int kZstdLevel = 3;
constexpr const char* kTempPrefix = ".tmp-";
constexpr time_t kStaleTempSeconds = 3600;

/// "<32 hex digits>.kernel" or ".shape".
std::string entry_name(DiskEntryKind kind, const Hash128& key) {
  return key.hex() + (kind == DiskEntryKind::Kernel ? ".kernel" : ".shape");
}

/// Whether `name` is an entry file name (and not, say, a user's notes.txt).
bool is_entry_name(const std::string& name) {
  auto hex = [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); };
  std::string_view tail = name.size() > 32 ? std::string_view(name).substr(32) : "";
  return (tail == ".kernel" || tail == ".shape") && std::all_of(name.begin(), name.begin() + 32, hex);
}

bool is_temp_name(const std::string& name) { return name.starts_with(kTempPrefix); }

std::string error_text(int error) { return std::strerror(error); }

/// `text` with control and non-ASCII bytes replaced by '?' (file contents are untrusted).
std::string printable(const std::string& text) {
  std::string out = text;
  for (char& c : out)
    if (!std::isprint((unsigned char)c)) c = '?';
  return out;
}

/// Appends the `bytes` low bytes of `value`, least significant first.
void put_uint(std::vector<uint8_t>& out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(uint8_t(value >> (8 * i)));
}

/// Appends a u32 length and the bytes of `text`.
void put_string(std::vector<uint8_t>& out, const std::string& text) {
  put_uint(out, text.size(), 4);
  out.insert(out.end(), text.begin(), text.end());
}

/// Reads fields from the bytes of a file; a read past the end sets `truncated` and yields 0/"".
struct Reader {
  std::span<const uint8_t> data;
  size_t pos = 0;
  bool truncated = false;
  bool corrupt = false;  ///< a string length over kMaxStringBytes

  uint64_t uint(int bytes) {
    if (truncated || data.size() - pos < size_t(bytes)) {
      truncated = true;
      return 0;
    }
    uint64_t value = 0;
    for (int i = 0; i < bytes; ++i) value |= uint64_t(data[pos + i]) << (8 * i);
    pos += size_t(bytes);
    return value;
  }
  std::string string() {
    uint64_t size = uint(4);
    if (truncated) return {};
    if (size > kMaxStringBytes) {
      corrupt = true;
      return {};
    }
    if (data.size() - pos < size) {
      truncated = true;
      return {};
    }
    std::string text(data.begin() + pos, data.begin() + pos + size);
    pos += size;
    return text;
  }
};

/// XXH3-64 of the header bytes before the checksum field followed by the compressed payload.
uint64_t entry_checksum(std::span<const uint8_t> header, std::span<const uint8_t> payload) {
  std::unique_ptr<XXH3_state_t, decltype(&XXH3_freeState)> state(XXH3_createState(), XXH3_freeState);
  if (!state) return 0;
  XXH3_64bits_reset(state.get());
  XXH3_64bits_update(state.get(), header.data(), header.size());
  XXH3_64bits_update(state.get(), payload.data(), payload.size());
  return XXH3_64bits_digest(state.get());
}

/// What produced a file, as the rejection message names it.
std::string describe(const std::string& kiln_version, uint64_t kernel_format, const std::string& compiler,
                     const std::string& cpu) {
  return "Kiln " + printable(kiln_version) + " (kernel format " + std::to_string(kernel_format) + ") / " +
         printable(compiler) + " for CPU " + printable(cpu);
}

const char* kind_name(uint64_t kind) {
  if (kind > uint64_t(DiskEntryKind::Shape)) return "unknown";
  return kind == uint64_t(DiskEntryKind::Kernel) ? "kernel" : "shape";
}

/// The complete file for an entry, or an empty vector when zstd fails (`error` says why).
std::vector<uint8_t> encode_entry(DiskEntryKind kind, const Hash128& key, const DiskTarget& target,
                                  std::span<const uint8_t> payload, std::string& error) {
  std::vector<uint8_t> compressed(ZSTD_compressBound(payload.size()));
  size_t compressed_bytes =
      ZSTD_compress(compressed.data(), compressed.size(), payload.data(), payload.size(), kZstdLevel);
  if (ZSTD_isError(compressed_bytes)) {
    error = std::string("zstd cannot compress the payload: ") + ZSTD_getErrorName(compressed_bytes);
    return {};
  }
  compressed.resize(compressed_bytes);
  std::vector<uint8_t> file(std::begin(kMagic), std::end(kMagic));
  put_uint(file, kDiskFormatVersion, 4);
  put_uint(file, kKernelFormatVersion, 4);
  put_uint(file, uint64_t(kind), 4);
  put_uint(file, key.low, 8);
  put_uint(file, key.high, 8);
  put_string(file, KILN_VERSION);
  put_string(file, target.compiler);
  put_string(file, target.cpu);
  put_uint(file, payload.size(), 8);
  put_uint(file, compressed_bytes, 8);
  put_uint(file, entry_checksum(file, compressed), 8);
  file.insert(file.end(), compressed.begin(), compressed.end());
  return file;
}

/// Checks `file` against what load() asked for and decompresses its payload into `payload`;
/// returns what is wrong with it, or "".
std::string decode_entry(std::span<const uint8_t> file, DiskEntryKind kind, const Hash128& key,
                         const DiskTarget& target, std::vector<uint8_t>& payload) {
  size_t size = file.size();
  std::string short_header = "truncated (" + std::to_string(size) + " bytes, shorter than its header)";
  size_t magic_bytes = std::min(size, sizeof(kMagic));
  if (!std::equal(file.begin(), file.begin() + magic_bytes, kMagic)) return "not a Kiln cache file";
  if (size < sizeof(kMagic)) return short_header;

  Reader in{file, sizeof(kMagic)};
  uint64_t disk_format = in.uint(4);
  if (!in.truncated && disk_format != kDiskFormatVersion)
    return "written in disk format " + std::to_string(disk_format) + ", this Kiln reads format " +
           std::to_string(kDiskFormatVersion);
  uint64_t kernel_format = in.uint(4);
  uint64_t stored_kind = in.uint(4);
  Hash128 stored_key;
  stored_key.low = in.uint(8);
  stored_key.high = in.uint(8);
  std::string kiln_version = in.string();
  std::string compiler = in.string();
  std::string cpu = in.string();
  uint64_t payload_bytes = in.uint(8);
  uint64_t compressed_bytes = in.uint(8);
  size_t checksum_at = in.pos;
  uint64_t checksum = in.uint(8);
  if (in.corrupt) return "corrupt header (a string longer than " + std::to_string(kMaxStringBytes) + " bytes)";
  if (in.truncated) return short_header;

  size_t payload_at = in.pos;
  if (compressed_bytes > ZSTD_compressBound(kMaxPayloadBytes))
    return "corrupt header (a compressed payload of " + std::to_string(compressed_bytes) + " bytes)";
  std::string declared_size = std::to_string(payload_at + compressed_bytes);
  if (compressed_bytes > size - payload_at)
    return "truncated (" + std::to_string(size) + " of " + declared_size + " bytes)";
  std::span<const uint8_t> compressed = file.subspan(payload_at);
  if (entry_checksum(file.first(checksum_at), compressed) != checksum) return "checksum mismatch (the file is corrupt)";
  if (compressed_bytes != compressed.size())
    return "corrupt (" + std::to_string(size) + " bytes, its header says " + declared_size + ")";

  if (kiln_version != KILN_VERSION || kernel_format != kKernelFormatVersion || compiler != target.compiler ||
      cpu != target.cpu)
    return "written by " + describe(kiln_version, kernel_format, compiler, cpu) + ", this is " +
           describe(KILN_VERSION, kKernelFormatVersion, target.compiler, target.cpu);
  if (stored_key != key) return "stored under key " + stored_key.hex() + " but named " + key.hex();
  if (stored_kind != uint64_t(kind))
    return std::string("holds a ") + kind_name(stored_kind) + " entry but is named as a " + kind_name(uint64_t(kind));
  if (payload_bytes > kMaxPayloadBytes)
    return "corrupt header (a payload of " + std::to_string(payload_bytes) + " bytes)";

  payload.resize(payload_bytes);
  size_t got = ZSTD_decompress(payload.data(), payload.size(), compressed.data(), compressed.size());
  if (ZSTD_isError(got)) return std::string("zstd cannot decompress the payload: ") + ZSTD_getErrorName(got);
  if (got != payload_bytes)
    return "the payload decompresses to " + std::to_string(got) + " bytes, its header says " +
           std::to_string(payload_bytes);
  return "";
}

/// Reads all of `fd` into `out`; returns errno, or 0.
int read_all(int fd, std::vector<uint8_t>& out) {
  struct stat st;
  if (fstat(fd, &st) != 0) return errno;
  out.resize(size_t(std::max<off_t>(st.st_size, 0)));
  size_t got = 0;
  while (got < out.size()) {
    ssize_t n = read(fd, out.data() + got, out.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    if (n == 0) break;
    got += size_t(n);
  }
  out.resize(got);
  return 0;
}

/// Writes all of `bytes` to `fd`, retrying short writes; returns errno, or 0.
int write_all(int fd, std::span<const uint8_t> bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    done += size_t(n);
  }
  return 0;
}

/// One Kiln entry found by a directory scan.
struct EntryFile {
  std::string name;
  size_t bytes;
  timespec mtime;
};

/// Calls `fn(dir_fd, name, st)` for every regular entry or temporary file in `directory`.
template <typename Fn> void for_each_cache_file(const std::string& directory, Fn&& fn) {
  DIR* dir = opendir(directory.c_str());
  if (!dir) return;
  while (dirent* e = readdir(dir)) {
    std::string name = e->d_name;
    struct stat st;
    if ((is_entry_name(name) || is_temp_name(name)) && fstatat(dirfd(dir), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
        S_ISREG(st.st_mode))
      fn(dirfd(dir), name, st);
  }
  closedir(dir);
}

/// The Kiln entries in `directory`; removes temporary files older than an hour on the way.
std::vector<EntryFile> scan_directory(const std::string& directory) {
  std::vector<EntryFile> entries;
  time_t now = std::time(nullptr);
  for_each_cache_file(directory, [&](int dir_fd, const std::string& name, const struct stat& st) {
    if (is_entry_name(name))
      entries.push_back({name, size_t(st.st_size), st.st_mtim});
    else if (now - st.st_mtime > kStaleTempSeconds)
      unlinkat(dir_fd, name.c_str(), 0);
  });
  return entries;
}

size_t total_bytes(const std::vector<EntryFile>& entries) {
  size_t total = 0;
  for (const EntryFile& e : entries) total += e.bytes;
  return total;
}

/// Creates `path` and its missing parents with mode 0700; returns errno, or 0.
int make_directories(const std::string& path) {
  for (size_t end = path.find('/', 1); end != std::string::npos; end = path.find('/', end + 1))
    if (mkdir(path.substr(0, end).c_str(), 0700) != 0 && errno != EEXIST) return errno;
  if (mkdir(path.c_str(), 0700) != 0) return errno == EEXIST ? 0 : errno;  // lstat() checks what is there
  return chmod(path.c_str(), 0700) == 0 ? 0 : errno;                       // the umask may have narrowed it
}

/// The sentence problem() returns for a refused directory.
std::string refusal(const std::string& path, const std::string& reason, const std::string& fix) {
  return "disk cache directory " + path + " " + reason + ", so kernels are cached in memory only; " + fix + ".";
}

/// Creates `path` if missing and checks that it is a safe place to load code from;
/// returns why it is refused, or "".
std::string prepare_directory(const std::string& path) {
  const std::string choose = "set KILN_CACHE_DIR (or call set_disk_cache_dir()) to a directory of your own";
  if (path.empty())
    return "the disk cache has no directory (HOME is not set and the user has no home directory), so kernels are "
           "cached in memory only; " +
           choose + ".";
  struct stat st;
  if (lstat(path.c_str(), &st) != 0) {
    int error = errno == ENOENT ? make_directories(path) : errno;
    if (error == 0 && lstat(path.c_str(), &st) != 0) error = errno;
    if (error != 0) return refusal(path, "cannot be created (" + error_text(error) + ")", choose);
  }
  if (S_ISLNK(st.st_mode)) return refusal(path, "is a symlink", "point KILN_CACHE_DIR at the real directory instead");
  if (!S_ISDIR(st.st_mode)) return refusal(path, "is not a directory", choose);
  if (st.st_uid != geteuid())
    return refusal(
        path, "is owned by user " + std::to_string(st.st_uid) + ", not by you (user " + std::to_string(geteuid()) + ")",
        choose);
  if (st.st_mode & 022) {
    char mode[8];
    std::snprintf(mode, sizeof(mode), "%04o", unsigned(st.st_mode & 07777));
    return refusal(path, std::string("is writable by group or others (mode ") + mode + ")",
                   "run chmod go-w " + path + ", or " + choose);
  }
  return "";
}

/// $KILN_CACHE_DIR, else $HOME/.cache/kiln (the password database's home when HOME is unset).
std::string default_directory() {
  if (std::optional<std::string> dir = env_text("KILN_CACHE_DIR")) return *dir;
  const char* home = std::getenv("HOME");
  if (!home || !*home)
    if (const passwd* user = getpwuid(geteuid())) home = user->pw_dir;
  return home && *home ? std::string(home) + "/.cache/kiln" : std::string();
}

}  // namespace

DiskCache::DiskCache() : directory_(default_directory()), limit_(env_bytes("KILN_CACHE_LIMIT", kDefaultLimit)) {}

bool DiskCache::open_locked() {
  if (!opened_) {
    opened_ = true;
    problem_ = prepare_directory(directory_);
    if (problem_.empty())
      bytes_ = total_bytes(scan_directory(directory_));
    else
      report_once_locked(directory_, problem_);
  }
  return problem_.empty();
}

void DiskCache::remove_rejected_locked(int fd, const std::string& path) {
  // Only the file that was read: another process may have renamed a good one over it since.
  struct stat opened{}, named{};
  if (fstat(fd, &opened) != 0 || lstat(path.c_str(), &named) != 0) return;
  if (opened.st_dev != named.st_dev || opened.st_ino != named.st_ino) return;
  if (unlink(path.c_str()) == 0) bytes_ -= std::min(bytes_, size_t(opened.st_size));
}

void DiskCache::report_once_locked(const std::string& key, const std::string& message) {
  if (reported_.insert(key).second) log(LogLevel::Warn, message);
}

std::optional<std::vector<uint8_t>> DiskCache::load(DiskEntryKind kind, const Hash128& key, const DiskTarget& target) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!open_locked()) return std::nullopt;
  std::string path = directory_ + "/" + entry_name(kind, key);
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0 && errno == ENOENT) return std::nullopt;
  std::vector<uint8_t> file, payload;
  std::string problem;
  if (fd < 0) {
    problem = "cannot be opened (" + error_text(errno) + ")";
  } else if (int error = read_all(fd, file)) {
    problem = "cannot be read (" + error_text(error) + ")";
  } else {
    problem = decode_entry(file, kind, key, target, payload);
  }
  if (problem.empty()) {
    const timespec times[2] = {{0, UTIME_OMIT}, {0, UTIME_NOW}};
    futimens(fd, times);  // least recently used goes first; failing to mark it is harmless
  } else if (fd >= 0) {
    remove_rejected_locked(fd, path);
  }
  if (fd >= 0) close(fd);
  if (!problem.empty()) {
    report_once_locked(path, "disk cache: ignoring " + path + ": " + problem +
                                 "; removed it (the kernel is recompiled when it is needed)");
    return std::nullopt;
  }
  return payload;
}

void DiskCache::store(DiskEntryKind kind, const Hash128& key, const DiskTarget& target,
                      std::span<const uint8_t> payload) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!open_locked()) return;
  std::string name = entry_name(kind, key), error;
  if (payload.size() > kMaxPayloadBytes)
    error = "a payload of " + std::to_string(payload.size()) + " bytes is too large";
  std::vector<uint8_t> file;
  if (error.empty()) file = encode_entry(kind, key, target, payload, error);
  if (error.empty()) error = write_file_locked(name, file);
  if (!error.empty()) {
    report_once_locked("store " + directory_,
                       "disk cache: cannot write " + directory_ + "/" + name + ": " + error +
                           "; kernels are still cached in memory (later write failures in this directory are "
                           "not reported)");
    return;
  }
  if (bytes_ > limit_) evict_locked(name);
}

std::string DiskCache::write_file_locked(const std::string& name, std::span<const uint8_t> bytes) {
  uint64_t nonce[3] = {uint64_t(getpid()), ++temp_counter_,
                       uint64_t(std::chrono::system_clock::now().time_since_epoch().count())};
  char temp_name[64];
  std::snprintf(temp_name, sizeof(temp_name), "%s%llu-%llu-%016llx", kTempPrefix, (unsigned long long)nonce[0],
                (unsigned long long)nonce[1], (unsigned long long)hash_bytes(nonce, sizeof(nonce)));
  std::string temp = directory_ + "/" + temp_name;
  std::string path = directory_ + "/" + name;

  int fd = open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return "cannot create " + temp + " (" + error_text(errno) + ")";
  std::string error;
  if (int e = write_all(fd, bytes)) error = "cannot write " + temp + " (" + error_text(e) + ")";
  if (close(fd) != 0 && error.empty()) error = "cannot close " + temp + " (" + error_text(errno) + ")";
  struct stat old;
  size_t replaced = lstat(path.c_str(), &old) == 0 && S_ISREG(old.st_mode) ? size_t(old.st_size) : 0;
  if (error.empty() && rename(temp.c_str(), path.c_str()) != 0)
    error = "cannot rename " + temp + " (" + error_text(errno) + ")";
  if (!error.empty()) {
    unlink(temp.c_str());
    return error;
  }
  bytes_ = bytes_ - std::min(bytes_, replaced) + bytes.size();
  return "";
}

void DiskCache::evict_locked(const std::string& keep) {
  std::vector<EntryFile> entries = scan_directory(directory_);
  std::sort(entries.begin(), entries.end(), [](const EntryFile& a, const EntryFile& b) {
    return std::tie(a.mtime.tv_sec, a.mtime.tv_nsec, a.name) < std::tie(b.mtime.tv_sec, b.mtime.tv_nsec, b.name);
  });
  size_t total = total_bytes(entries);
  auto remove = [&](const EntryFile& e) {
    std::string path = directory_ + "/" + e.name;
    if (unlink(path.c_str()) == 0 || errno == ENOENT)  // another process may have removed it first
      total -= e.bytes;
    else
      report_once_locked("evict " + directory_, "disk cache: cannot remove " + path + " (" + error_text(errno) +
                                                    "), so the directory may outgrow its limit");
  };
  for (const EntryFile& e : entries)  // first, so that it does not push out entries that fit
    if (e.name == keep && e.bytes > limit_) remove(e);
  size_t target = limit_ - limit_ / 10;
  for (const EntryFile& e : entries) {
    if (total <= target) break;
    if (e.name != keep) remove(e);
  }
  bytes_ = total;
}

bool DiskCache::enabled() {
  std::lock_guard<std::mutex> lock(mutex_);
  return open_locked();
}

std::string DiskCache::problem() {
  std::lock_guard<std::mutex> lock(mutex_);
  open_locked();
  return problem_;
}

size_t DiskCache::bytes() {
  std::lock_guard<std::mutex> lock(mutex_);
  open_locked();
  return bytes_;
}

std::string DiskCache::directory() {
  std::lock_guard<std::mutex> lock(mutex_);
  return directory_;
}

std::string DiskCache::entry_path(DiskEntryKind kind, const Hash128& key) {
  std::lock_guard<std::mutex> lock(mutex_);
  return directory_ + "/" + entry_name(kind, key);
}

void DiskCache::set_directory(const std::string& path) {
  std::lock_guard<std::mutex> lock(mutex_);
  directory_ = path.empty() ? default_directory() : path;
  problem_.clear();
  opened_ = false;
  bytes_ = 0;
}

void DiskCache::set_limit(size_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  limit_ = bytes;
}

size_t DiskCache::limit() {
  std::lock_guard<std::mutex> lock(mutex_);
  return limit_;
}

void DiskCache::clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!open_locked()) return;
  for_each_cache_file(
      directory_, [](int dir_fd, const std::string& name, const struct stat&) { unlinkat(dir_fd, name.c_str(), 0); });
  bytes_ = 0;
}

DiskCache& disk_cache() {
  static DiskCache instance;
  return instance;
}

}  // namespace kiln::detail

namespace kiln {

void clear_disk_cache() { detail::disk_cache().clear(); }
void set_disk_cache_dir(const std::string& path) { detail::disk_cache().set_directory(path); }
std::string disk_cache_dir() { return detail::disk_cache().directory(); }
void set_disk_cache_limit(size_t bytes) { detail::disk_cache().set_limit(bytes); }

}  // namespace kiln
