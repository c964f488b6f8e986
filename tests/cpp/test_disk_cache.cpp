// The on-disk kernel cache: round trips, the file layout, file and directory modes, the
// rejection of every kind of bad file (each reported once, then replaced by the next
// store), directory safety, settings from the environment, LRU eviction, clear(), and
// several processes writing one directory at once.
#include <kiln/runtime.h>

#include <gtest/gtest.h>

#include "cache/disk_cache.h"
#include "form/kernel_form.h"
#include "scoped_env.h"

#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

using namespace kiln::detail;
namespace fs = std::filesystem;

namespace {

static_assert(std::endian::native == std::endian::little, "the layout helpers read fields in host order");

constexpr DiskEntryKind kKernel = DiskEntryKind::Kernel;
constexpr DiskEntryKind kShape = DiskEntryKind::Shape;
const DiskTarget kTarget{"LLVM 19.1.7", "x86_64-unknown-linux-gnu znver3 +avx2,+fma"};

Hash128 key_of(uint64_t i) { return hash128_bytes(&i, sizeof(i)); }

std::vector<uint8_t> random_bytes(size_t size, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<uint8_t> out(size);
  for (uint8_t& b : out) b = uint8_t(rng());
  return out;
}

/// The payload every process stores under key `i` (the concurrency test compares them).
std::vector<uint8_t> payload_for(uint64_t i) { return random_bytes(64 + (i * 2654435761u) % 20000, i); }

std::vector<uint8_t> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_file(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
}

/// Occurrences of `needle` (not empty) in `text`.
size_t count(const std::string& text, const std::string& needle) {
  if (needle.empty()) return 0;
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + needle.size())) ++n;
  return n;
}

uint32_t u32_at(const std::vector<uint8_t>& file, size_t at) {
  uint32_t value;
  std::memcpy(&value, file.data() + at, sizeof(value));
  return value;
}

uint64_t u64_at(const std::vector<uint8_t>& file, size_t at) {
  uint64_t value;
  std::memcpy(&value, file.data() + at, sizeof(value));
  return value;
}

void set_u32_at(std::vector<uint8_t>& file, size_t at, uint32_t value) {
  std::memcpy(file.data() + at, &value, sizeof(value));
}

/// Where the fields of an entry file are (the layout documented in disk_cache.cpp).
struct Layout {
  size_t version_at, version_size, compiler_at, compiler_size, cpu_at, cpu_size, payload_size_at, checksum_at,
      payload_at;
};

Layout layout_of(const std::vector<uint8_t>& file) {
  Layout l;
  l.version_size = u32_at(file, 36);  // after magic, disk format, kernel format, kind, key
  l.version_at = 40;
  l.compiler_size = u32_at(file, l.version_at + l.version_size);
  l.compiler_at = l.version_at + l.version_size + 4;
  l.cpu_size = u32_at(file, l.compiler_at + l.compiler_size);
  l.cpu_at = l.compiler_at + l.compiler_size + 4;
  l.payload_size_at = l.cpu_at + l.cpu_size;
  l.checksum_at = l.payload_size_at + 16;
  l.payload_at = l.checksum_at + 8;
  return l;
}

/// The checksum `file` should carry: XXH3-64 of every byte but the checksum's own.
uint64_t expected_checksum(const std::vector<uint8_t>& file) {
  Layout l = layout_of(file);
  std::vector<uint8_t> covered(file.begin(), file.begin() + long(l.checksum_at));
  covered.insert(covered.end(), file.begin() + long(l.payload_at), file.end());
  return hash_bytes(covered.data(), covered.size());
}

/// Rewrites the checksum of a patched file, so that only the patched field is wrong.
void fix_checksum(std::vector<uint8_t>& file) {
  uint64_t sum = expected_checksum(file);
  std::memcpy(file.data() + layout_of(file).checksum_at, &sum, sizeof(sum));
}

/// Each test gets a fresh, not yet existing cache directory `dir_` under a temporary `root_`.
class DiskCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "kiln_disk_XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    root_ = pattern;
    dir_ = root_ + "/cache";
    saved_dir_ = cache().directory();
    saved_limit_ = cache().limit();
    saved_level_ = kiln::log_level();
    kiln::set_log_level(kiln::LogLevel::Warn);
    cache().set_directory(dir_);
    cache().set_limit(size_t(1) << 30);
  }
  void TearDown() override {
    cache().set_directory(saved_dir_);
    cache().set_limit(saved_limit_);
    kiln::set_log_level(saved_level_);
    std::error_code ignored;
    fs::remove_all(root_, ignored);
  }

  static DiskCache& cache() { return disk_cache(); }
  static std::string path(uint64_t i, DiskEntryKind kind = kKernel) { return cache().entry_path(kind, key_of(i)); }
  static void store(uint64_t i, const std::vector<uint8_t>& payload, DiskEntryKind kind = kKernel,
                    const DiskTarget& target = kTarget) {
    cache().store(kind, key_of(i), target, payload);
  }
  static std::optional<std::vector<uint8_t>> load(uint64_t i, DiskEntryKind kind = kKernel,
                                                  const DiskTarget& target = kTarget) {
    return cache().load(kind, key_of(i), target);
  }

  /// Stores a kernel under key `i` and returns its file's bytes.
  static std::vector<uint8_t> stored_file(uint64_t i) {
    store(i, random_bytes(1000, i));
    return read_file(path(i));
  }

  /// Loading key `i` twice misses, with one warning naming the file, `reason` and the
  /// recompilation; the file is removed, and store + load then work.
  static void expect_rejected_once(uint64_t i, const std::string& reason, DiskEntryKind kind = kKernel,
                                   const DiskTarget& target = kTarget) {
    std::string file = path(i, kind);
    testing::internal::CaptureStderr();
    bool first = load(i, kind, target).has_value();
    bool second = load(i, kind, target).has_value();
    std::string err = testing::internal::GetCapturedStderr();
    EXPECT_FALSE(first);
    EXPECT_FALSE(second);
    EXPECT_EQ(count(err, file), 1u) << err;
    EXPECT_NE(err.find(reason), std::string::npos) << "missing '" << reason << "' in: " << err;
    EXPECT_NE(err.find("recompiled"), std::string::npos) << err;
    EXPECT_FALSE(fs::exists(file)) << "load() must remove a rejected file, or every later process trips over it";
    std::vector<uint8_t> payload = random_bytes(300, i + 77);
    store(i, payload, kind, target);
    EXPECT_EQ(load(i, kind, target), payload);
  }

  /// Names of the files in the cache directory.
  std::vector<std::string> files() const {
    std::vector<std::string> names;
    for (const fs::directory_entry& e : fs::directory_iterator(dir_)) names.push_back(e.path().filename());
    std::sort(names.begin(), names.end());
    return names;
  }

  std::string root_, dir_, saved_dir_;
  size_t saved_limit_ = 0;
  kiln::LogLevel saved_level_ = kiln::LogLevel::Warn;
};

/// Sets the modification time of `path` to `seconds_ago` seconds before now.
void set_age(const std::string& path, time_t seconds_ago) {
  timespec times[2] = {{0, UTIME_OMIT}, {std::time(nullptr) - seconds_ago, 0}};
  ASSERT_EQ(utimensat(AT_FDCWD, path.c_str(), times, 0), 0) << path;
}

size_t file_size(const std::string& path) { return size_t(fs::file_size(path)); }

}  // namespace

// ---- round trips and layout -----------------------------------------------------------

TEST_F(DiskCacheTest, RoundTripsPayloadsOfEverySizeAndKind) {
  uint64_t i = 0;
  for (size_t size : {size_t(0), size_t(1), size_t(1) << 20}) {
    std::vector<uint8_t> kernel = random_bytes(size, i), shape = random_bytes(size, i + 1000);
    store(i, kernel, kKernel);
    store(i, shape, kShape);
    EXPECT_EQ(load(i, kKernel), kernel) << size << " bytes";
    EXPECT_EQ(load(i, kShape), shape) << size << " bytes";
    ++i;
  }
  std::vector<uint8_t> zeros(size_t(1) << 20, 0);
  store(i, zeros);
  EXPECT_EQ(load(i), zeros);
  EXPECT_LT(file_size(path(i)), zeros.size() / 100) << "the payload is stored compressed";
  EXPECT_TRUE(cache().enabled());
  EXPECT_EQ(cache().problem(), "");
}

TEST_F(DiskCacheTest, MissingKeysAndOtherKindsAreSilentMisses) {
  store(1, random_bytes(100, 1), kKernel);
  testing::internal::CaptureStderr();
  EXPECT_FALSE(load(2).has_value());
  EXPECT_FALSE(load(1, kShape).has_value());
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  EXPECT_TRUE(load(1).has_value());
}

TEST_F(DiskCacheTest, FileLayoutIsAsDocumented) {
  store(7, random_bytes(1000, 7), kShape);
  std::vector<uint8_t> file = read_file(path(7, kShape));
  ASSERT_GT(file.size(), 40u);
  EXPECT_EQ(std::string(file.begin(), file.begin() + 8), "KILNDISK");
  EXPECT_EQ(u32_at(file, 8), 1u);
  EXPECT_EQ(u32_at(file, 12), kKernelFormatVersion);
  EXPECT_EQ(u32_at(file, 16), uint32_t(kShape));
  EXPECT_EQ(u64_at(file, 20), key_of(7).low);
  EXPECT_EQ(u64_at(file, 28), key_of(7).high);
  Layout l = layout_of(file);
  ASSERT_LT(l.payload_at, file.size());
  EXPECT_GT(l.version_size, 0u);
  EXPECT_EQ(std::string(file.begin() + long(l.compiler_at), file.begin() + long(l.compiler_at + l.compiler_size)),
            kTarget.compiler);
  EXPECT_EQ(std::string(file.begin() + long(l.cpu_at), file.begin() + long(l.cpu_at + l.cpu_size)), kTarget.cpu);
  EXPECT_EQ(u64_at(file, l.payload_size_at), 1000u);
  EXPECT_EQ(u64_at(file, l.payload_size_at + 8), file.size() - l.payload_at);
  EXPECT_EQ(u64_at(file, l.checksum_at), expected_checksum(file));
  EXPECT_EQ(std::vector<std::string>{key_of(7).hex() + ".shape"}, files());
}

TEST_F(DiskCacheTest, CreatesTheDirectoryWith0700AndFilesWith0600) {
  cache().set_directory(root_ + "/a/b/cache");
  store(1, random_bytes(10, 1));
  struct stat st;
  ASSERT_EQ(stat((root_ + "/a/b/cache").c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  ASSERT_EQ(stat(path(1).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
}

// ---- rejected files ---------------------------------------------------------------------

TEST_F(DiskCacheTest, FileTruncatedToZeroBytesIsRejected) {
  stored_file(1);
  ASSERT_EQ(truncate(path(1).c_str(), 0), 0);
  expect_rejected_once(1, "truncated (0 bytes");
}

TEST_F(DiskCacheTest, FileTruncatedToTenBytesIsRejected) {
  stored_file(1);
  ASSERT_EQ(truncate(path(1).c_str(), 10), 0);
  expect_rejected_once(1, "truncated (10 bytes");
}

TEST_F(DiskCacheTest, FileTruncatedInsideItsHeaderIsRejected) {
  std::vector<uint8_t> file = stored_file(1);
  ASSERT_EQ(truncate(path(1).c_str(), off_t(layout_of(file).checksum_at + 3)), 0);
  expect_rejected_once(1, "shorter than its header");
}

TEST_F(DiskCacheTest, FileTruncatedToItsHeaderIsRejected) {
  std::vector<uint8_t> file = stored_file(1);
  size_t header = layout_of(file).payload_at;
  ASSERT_EQ(truncate(path(1).c_str(), off_t(header)), 0);
  expect_rejected_once(1, "truncated (" + std::to_string(header) + " of " + std::to_string(file.size()) + " bytes)");
}

TEST_F(DiskCacheTest, FileMissingItsLastByteIsRejected) {
  std::vector<uint8_t> file = stored_file(1);
  ASSERT_EQ(truncate(path(1).c_str(), off_t(file.size() - 1)), 0);
  expect_rejected_once(
      1, "truncated (" + std::to_string(file.size() - 1) + " of " + std::to_string(file.size()) + " bytes)");
}

TEST_F(DiskCacheTest, FlippedPayloadByteFailsTheChecksum) {
  std::vector<uint8_t> file = stored_file(1);
  file[(layout_of(file).payload_at + file.size()) / 2] ^= 0x10;
  write_file(path(1), file);
  expect_rejected_once(1, "checksum mismatch");
}

TEST_F(DiskCacheTest, FlippedHeaderByteFailsTheChecksum) {
  std::vector<uint8_t> file = stored_file(1);
  file[layout_of(file).compiler_at] ^= 0x01;
  write_file(path(1), file);
  expect_rejected_once(1, "checksum mismatch");
}

TEST_F(DiskCacheTest, TrailingBytesAreRejected) {
  std::vector<uint8_t> file = stored_file(1);
  file.push_back(0);
  write_file(path(1), file);
  expect_rejected_once(1, "checksum mismatch");
  file = stored_file(2);
  file.push_back(0);
  fix_checksum(file);
  write_file(path(2), file);
  expect_rejected_once(2, "corrupt (" + std::to_string(file.size()) + " bytes, its header says " +
                              std::to_string(file.size() - 1) + ")");
}

TEST_F(DiskCacheTest, EntryOfAnotherCompilerIsRejected) {
  stored_file(1);
  DiskTarget other{"LLVM 18.1.8", kTarget.cpu};
  expect_rejected_once(1, "/ LLVM 19.1.7 for CPU " + kTarget.cpu + ", this is Kiln", kKernel, other);
  EXPECT_FALSE(load(1, kKernel, kTarget).has_value()) << "the file now holds the other compiler's entry";
}

TEST_F(DiskCacheTest, EntryOfAnotherCpuIsRejected) {
  stored_file(1);
  DiskTarget other{kTarget.compiler, "aarch64-unknown-linux-gnu neoverse-v2"};
  expect_rejected_once(1, "for CPU " + kTarget.cpu + ", this is Kiln", kKernel, other);
  testing::internal::CaptureStderr();
  load(1, kKernel, kTarget);
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "") << "one report per file per process";
}

TEST_F(DiskCacheTest, EntryOfAnotherKilnVersionIsRejected) {
  std::vector<uint8_t> file = stored_file(1);
  Layout l = layout_of(file);
  file[l.version_at] = file[l.version_at] == '9' ? '8' : '9';
  std::string version(file.begin() + long(l.version_at), file.begin() + long(l.version_at + l.version_size));
  fix_checksum(file);
  write_file(path(1), file);
  expect_rejected_once(1, "written by Kiln " + version + " (kernel format");
}

TEST_F(DiskCacheTest, EntryOfAnotherKernelFormatIsRejected) {
  std::vector<uint8_t> file = stored_file(1);
  set_u32_at(file, 12, kKernelFormatVersion + 1);
  fix_checksum(file);
  write_file(path(1), file);
  expect_rejected_once(1, "(kernel format " + std::to_string(kKernelFormatVersion + 1) + ")");
}

TEST_F(DiskCacheTest, EntryOfAnotherDiskFormatIsRejected) {
  std::vector<uint8_t> file = stored_file(1);
  set_u32_at(file, 8, 2);
  fix_checksum(file);
  write_file(path(1), file);
  expect_rejected_once(1, "written in disk format 2, this Kiln reads format 1");
}

TEST_F(DiskCacheTest, EntryStoredUnderAnotherKeyIsRejected) {
  stored_file(1);
  fs::copy_file(path(1), path(2));
  expect_rejected_once(2, "stored under key " + key_of(1).hex() + " but named " + key_of(2).hex());
  EXPECT_TRUE(load(1).has_value());
}

TEST_F(DiskCacheTest, EntryOfAnotherKindIsRejected) {
  std::vector<uint8_t> file = stored_file(1);
  set_u32_at(file, 16, uint32_t(kShape));
  fix_checksum(file);
  write_file(path(1), file);
  expect_rejected_once(1, "holds a shape entry but is named as a kernel");
}

TEST_F(DiskCacheTest, PayloadOfAnotherSizeIsRejected) {
  std::vector<uint8_t> file = stored_file(1);
  Layout l = layout_of(file);
  uint64_t declared = u64_at(file, l.payload_size_at) + 1;
  std::memcpy(file.data() + l.payload_size_at, &declared, sizeof(declared));
  fix_checksum(file);
  write_file(path(1), file);
  expect_rejected_once(1, "the payload decompresses to 1000 bytes, its header says 1001");
}

TEST_F(DiskCacheTest, PayloadThatIsNotZstdIsRejected) {
  std::vector<uint8_t> file = stored_file(1);
  file[layout_of(file).payload_at] ^= 0xff;  // the zstd frame magic
  fix_checksum(file);
  write_file(path(1), file);
  expect_rejected_once(1, "zstd cannot decompress the payload");
}

TEST_F(DiskCacheTest, GarbageFileIsRejected) {
  stored_file(1);
  std::string text = "these are some notes, not a kernel\n";
  write_file(path(1), std::vector<uint8_t>(text.begin(), text.end()));
  expect_rejected_once(1, "not a Kiln cache file");
}

TEST_F(DiskCacheTest, StoreFailureIsReportedOnceAndNeverThrows) {
  ASSERT_TRUE(cache().enabled());
  fs::remove_all(dir_);  // the directory vanishes under the open cache
  testing::internal::CaptureStderr();
  EXPECT_NO_THROW(store(1, random_bytes(100, 1)));
  EXPECT_NO_THROW(store(2, random_bytes(100, 2)));
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(count(err, "cannot write"), 1u) << err;
  EXPECT_NE(err.find(path(1)), std::string::npos) << err;
  EXPECT_FALSE(load(1).has_value());
}

// ---- directory safety ---------------------------------------------------------------------

/// `directory` is refused with a problem naming it and every `fragment`, reported once;
/// stores and loads do nothing; the test's own directory then works again.
void expect_refused(const std::string& directory, std::initializer_list<std::string> fragments,
                    const std::string& good) {
  DiskCache& cache = disk_cache();
  cache.set_directory(directory);
  testing::internal::CaptureStderr();
  EXPECT_FALSE(cache.enabled());
  std::string problem = cache.problem();
  cache.store(kKernel, key_of(1), kTarget, random_bytes(10, 1));
  EXPECT_FALSE(cache.load(kKernel, key_of(1), kTarget).has_value());
  EXPECT_EQ(cache.bytes(), 0u);
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(problem.find(directory), std::string::npos) << problem;
  EXPECT_NE(problem.find("memory only"), std::string::npos) << problem;
  EXPECT_NE(problem.find("KILN_CACHE_DIR"), std::string::npos) << problem;
  for (const std::string& f : fragments)
    EXPECT_NE(problem.find(f), std::string::npos) << "missing '" << f << "' in: " << problem;
  EXPECT_EQ(count(err, problem), 1u) << err;
  cache.set_directory(good);
  EXPECT_TRUE(cache.enabled()) << cache.problem();
  EXPECT_EQ(cache.problem(), "");
}

TEST_F(DiskCacheTest, SymlinkDirectoryIsRefused) {
  std::string real = root_ + "/real", link = root_ + "/link";
  ASSERT_EQ(mkdir(real.c_str(), 0700), 0);
  ASSERT_EQ(symlink(real.c_str(), link.c_str()), 0);
  expect_refused(link, {"is a symlink"}, dir_);
  EXPECT_TRUE(fs::is_empty(real)) << "nothing may be written through the link";
}

TEST_F(DiskCacheTest, WorldWritableDirectoryIsRefused) {
  std::string open = root_ + "/open";
  ASSERT_EQ(mkdir(open.c_str(), 0700), 0);
  ASSERT_EQ(chmod(open.c_str(), 0777), 0);
  expect_refused(open, {"writable by group or others (mode 0777)", "chmod go-w"}, dir_);
}

TEST_F(DiskCacheTest, DirectoryUnderARegularFileIsRefused) {
  std::string file = root_ + "/file";
  write_file(file, {1, 2, 3});
  expect_refused(file + "/cache", {"cannot be created (Not a directory)"}, dir_);
  expect_refused(file, {"is not a directory"}, dir_);
}

TEST_F(DiskCacheTest, DirectoryOfAnotherUserIsRefused) {
  if (geteuid() != 0) GTEST_SKIP() << "giving a directory to another user needs root";
  std::string theirs = root_ + "/theirs";
  ASSERT_EQ(mkdir(theirs.c_str(), 0700), 0);
  ASSERT_EQ(chown(theirs.c_str(), 65534, 65534), 0);
  expect_refused(theirs, {"is owned by user 65534, not by you"}, dir_);
}

// ---- settings -------------------------------------------------------------------------------

TEST(DiskCacheSettings, LimitComesFromTheEnvironment) {
  kiln::set_log_level(kiln::LogLevel::Warn);
  const std::pair<const char*, size_t> good[] = {
      {"1234", 1234}, {"512K", 512u << 10}, {"2m", 2u << 20}, {"3G", size_t(3) << 30}, {"0", 0},
      {" 7", 7},      {"64MB", 64u << 20}};
  for (auto [text, bytes] : good) {
    ScopedEnv env("KILN_CACHE_LIMIT", text);
    EXPECT_EQ(DiskCache().limit(), bytes) << text;
  }
  for (const char* text : {"12X", "-5", "K", "1.5G", "99999999999999999999", "20000000000G"}) {
    ScopedEnv env("KILN_CACHE_LIMIT", text);
    testing::internal::CaptureStderr();
    size_t limit = DiskCache().limit();
    std::string err = testing::internal::GetCapturedStderr();
    EXPECT_EQ(limit, size_t(1) << 30) << text;
    EXPECT_NE(err.find(std::string("KILN_CACHE_LIMIT=\"") + text + "\" is not a valid value (accepted: bytes"),
              std::string::npos)
        << err;
  }
  ScopedEnv unset("KILN_CACHE_LIMIT", nullptr);
  EXPECT_EQ(DiskCache().limit(), size_t(1) << 30);
}

TEST(DiskCacheSettings, DirectoryComesFromTheEnvironment) {
  {
    ScopedEnv dir("KILN_CACHE_DIR", "/somewhere/kiln");
    DiskCache cache;
    EXPECT_EQ(cache.directory(), "/somewhere/kiln");
    cache.set_directory("/elsewhere");
    EXPECT_EQ(cache.directory(), "/elsewhere");
    cache.set_directory("");
    EXPECT_EQ(cache.directory(), "/somewhere/kiln");
  }
  ScopedEnv dir("KILN_CACHE_DIR", nullptr);
  {
    ScopedEnv home("HOME", "/home/someone");
    EXPECT_EQ(DiskCache().directory(), "/home/someone/.cache/kiln");
  }
  ScopedEnv home("HOME", nullptr);
  const passwd* user = getpwuid(geteuid());
  ASSERT_NE(user, nullptr);
  EXPECT_EQ(DiskCache().directory(), std::string(user->pw_dir) + "/.cache/kiln");
}

// ---- size accounting, eviction, clear --------------------------------------------------------

TEST_F(DiskCacheTest, BytesCountEntriesOnOpenAndReplacedEntriesOnce) {
  store(1, random_bytes(1000, 1));
  store(2, random_bytes(2000, 2), kShape);
  store(2, random_bytes(2000, 3), kShape);
  size_t total = file_size(path(1)) + file_size(path(2, kShape));
  EXPECT_EQ(cache().bytes(), total);

  std::string stale = dir_ + "/.tmp-1-1-stale", fresh = dir_ + "/.tmp-2-2-fresh";
  write_file(stale, {1});
  write_file(fresh, {2});
  set_age(stale, 7200);
  write_file(dir_ + "/notes.txt", {1, 2, 3});
  DiskCache other;
  other.set_directory(dir_);
  EXPECT_EQ(other.bytes(), total) << "only Kiln entries count";
  EXPECT_FALSE(fs::exists(stale)) << "temporary files older than an hour are removed";
  EXPECT_TRUE(fs::exists(fresh)) << "another process may be writing this one";
}

TEST_F(DiskCacheTest, EvictsLeastRecentlyUsedEntries) {
  store(0, random_bytes(4096, 0));
  size_t entry = file_size(path(0));
  size_t limit = 3 * entry + entry / 2;
  cache().set_limit(limit);
  store(1, random_bytes(4096, 1));
  store(2, random_bytes(4096, 2));
  set_age(path(0), 500);
  set_age(path(1), 400);
  set_age(path(2), 300);
  ASSERT_TRUE(load(0).has_value());  // now the most recently used

  store(3, random_bytes(4096, 3));  // 4 entries > limit: 1 goes
  EXPECT_FALSE(fs::exists(path(1)));
  EXPECT_TRUE(fs::exists(path(2)));
  store(4, random_bytes(4096, 4));  // 2 goes
  EXPECT_FALSE(fs::exists(path(2)));
  for (uint64_t i : {0, 3, 4}) EXPECT_EQ(load(i), random_bytes(4096, i)) << i;
  EXPECT_FALSE(load(1).has_value());
  EXPECT_FALSE(load(2).has_value());
  EXPECT_LE(cache().bytes(), limit);
  EXPECT_EQ(cache().bytes(), 3 * entry);
}

TEST_F(DiskCacheTest, EvictsDownToNinetyPercentOfTheLimit) {
  store(0, random_bytes(4096, 0));
  size_t entry = file_size(path(0));
  cache().set_limit(3 * entry + entry / 5);  // 90% of it holds only two entries
  for (uint64_t i = 1; i < 4; ++i) {
    set_age(path(i - 1), time_t(100 - i));
    store(i, random_bytes(4096, i));
  }
  EXPECT_EQ(files(), (std::vector<std::string>{key_of(2).hex() + ".kernel", key_of(3).hex() + ".kernel"}));
  EXPECT_EQ(cache().bytes(), 2 * entry);
}

TEST_F(DiskCacheTest, NeverEvictsTheEntryJustWritten) {
  for (uint64_t i = 0; i < 3; ++i) store(i, random_bytes(4096, i));
  size_t entry = file_size(path(0));
  cache().set_limit(3 * entry + entry / 2);
  for (uint64_t i = 0; i < 3; ++i) set_age(path(i), -1000 - time_t(i));  // newer than now (clock skew), 0 oldest
  store(3, random_bytes(4096, 3));
  EXPECT_TRUE(load(3).has_value());
  EXPECT_FALSE(fs::exists(path(0)));
  EXPECT_TRUE(fs::exists(path(1)));
}

TEST_F(DiskCacheTest, EntryLargerThanTheLimitIsNotKept) {
  store(1, random_bytes(100, 1));
  cache().set_limit(file_size(path(1)) + 1000);
  store(2, random_bytes(5000, 2));
  EXPECT_FALSE(load(2).has_value());
  EXPECT_TRUE(load(1).has_value()) << "the small entry fits once the large one is gone";
  EXPECT_LE(cache().bytes(), cache().limit());
}

TEST_F(DiskCacheTest, ClearRemovesOnlyKilnFiles) {
  for (uint64_t i = 0; i < 3; ++i) store(i, random_bytes(100, i), i % 2 ? kShape : kKernel);
  write_file(dir_ + "/notes.txt", {1, 2, 3});
  write_file(dir_ + "/.tmp-7-7-leftover", {4});
  write_file(dir_ + "/" + key_of(9).hex() + ".kernel.bak", {5});
  EXPECT_GT(cache().bytes(), 0u);
  kiln::clear_disk_cache();
  EXPECT_EQ(cache().bytes(), 0u);
  EXPECT_EQ(files(), (std::vector<std::string>{key_of(9).hex() + ".kernel.bak", "notes.txt"}));
  EXPECT_FALSE(load(0).has_value());
}

TEST_F(DiskCacheTest, PublicFunctionsForwardToTheDiskCache) {
  kiln::set_disk_cache_dir(root_ + "/public");
  EXPECT_EQ(kiln::disk_cache_dir(), root_ + "/public");
  EXPECT_EQ(cache().directory(), root_ + "/public");
  kiln::set_disk_cache_limit(12345);
  EXPECT_EQ(cache().limit(), 12345u);
}

// ---- several processes ------------------------------------------------------------------------

/// What one child process does: store 50 shared keys (in its own order) and 20 of its
/// own, twice, loading each back at once; returns the number of wrong loads.
int run_child(const std::string& dir, int child) {
  DiskCache& cache = disk_cache();
  cache.set_directory(dir);
  cache.set_limit(size_t(1) << 30);
  std::vector<uint64_t> keys;
  for (uint64_t i = 0; i < 50; ++i) keys.push_back(i);
  for (uint64_t j = 0; j < 20; ++j) keys.push_back(1000 + 100 * uint64_t(child) + j);
  std::shuffle(keys.begin(), keys.end(), std::mt19937(unsigned(child)));
  int failures = 0;
  for (int round = 0; round < 2; ++round)
    for (uint64_t k : keys) {
      std::vector<uint8_t> payload = payload_for(k);
      cache.store(kKernel, key_of(k), kTarget, payload);
      if (cache.load(kKernel, key_of(k), kTarget) != payload) ++failures;
    }
  return failures;
}

TEST_F(DiskCacheTest, ProcessesWritingTheSameEntriesNeverSeeTornFiles) {
  constexpr int kChildren = 4;
  std::fflush(nullptr);
  std::vector<pid_t> children;
  for (int c = 0; c < kChildren; ++c) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) _exit(run_child(dir_, c) == 0 ? 0 : 1);
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child " << pid << " status " << status;
  }
  std::vector<uint64_t> keys;
  for (uint64_t i = 0; i < 50; ++i) keys.push_back(i);
  for (uint64_t c = 0; c < kChildren; ++c)
    for (uint64_t j = 0; j < 20; ++j) keys.push_back(1000 + 100 * c + j);
  testing::internal::CaptureStderr();
  for (uint64_t k : keys) EXPECT_EQ(load(k), payload_for(k)) << "key " << k;
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  std::vector<std::string> names = files();
  EXPECT_EQ(names.size(), keys.size());
  for (const std::string& name : names) EXPECT_FALSE(name.starts_with(".tmp-")) << name;
}
