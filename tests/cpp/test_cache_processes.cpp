// The kernel cache across processes, as users meet it: a second run of a program compiles
// nothing; damaged disk entries are never executed, each is reported once, and those the
// program needs are recompiled over; four processes filling one directory at once leave
// only valid entries; a directory that is unsafe to load code from is refused and kernels
// are cached in memory only.
// Every test runs cache_child (tests/cpp/cache_child.cpp, the story-1 loop plus a few
// other kernels) with KILN_CACHE_DIR pointing into a fresh temporary directory.
#include <kiln/runtime.h>

#include <gtest/gtest.h>

#include "backend/backend.h"
#include "cache/disk_cache.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

extern char** environ;

namespace {

namespace fs = std::filesystem;
using kiln::detail::DiskEntryKind;
using kiln::detail::Hash128;

/// Seeds of the camera loop: with each, the camera kernel compiles twice (specialized, then
/// generic), and both reach the same generic kernel.
constexpr uint64_t kSeed = 7, kOtherSeed = 11;

/// A child that was started: its process id and the files its stdout and stderr go to.
struct Child {
  pid_t pid = -1;
  std::string out_path, err_path;
};

/// What a finished child printed: its exit code (-1 when it did not exit normally), its
/// stderr, and the key=value fields of its one stdout line.
struct ChildRun {
  int exit_code = -1;
  std::string out, err;
  std::map<std::string, std::string> fields;

  /// A numeric field (fails the test, returning 0, when it is missing).
  size_t number(const std::string& name) const {
    auto it = fields.find(name);
    EXPECT_NE(it, fields.end()) << "the child printed no " << name << "=: " << out;
    return it == fields.end() ? 0 : std::stoul(it->second);
  }
  std::string checksum() const { return fields.count("checksum") ? fields.at("checksum") : "(none)"; }
  /// Hashes of the kernels the child compiled.
  std::vector<std::string> compiled() const {
    std::vector<std::string> hashes;
    std::stringstream list(fields.count("compiled") ? fields.at("compiled") : "");
    for (std::string hash; std::getline(list, hash, ',');) hashes.push_back(hash);
    return hashes;
  }
  /// Lines of stderr that are Kiln warnings naming `path`.
  size_t warnings_naming(const std::string& path) const {
    size_t count = 0;
    std::stringstream lines(err);
    for (std::string line; std::getline(lines, line);)
      count += line.starts_with("kiln: ") && line.find(path) != std::string::npos;
    return count;
  }
  /// All Kiln warning lines on stderr.
  size_t warnings() const { return warnings_naming(""); }
};

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_file(const fs::path& path, const std::string& bytes) { std::ofstream(path, std::ios::binary) << bytes; }

/// Starts `cache_child <seed>` with KILN_CACHE_DIR=`cache_dir` and none of this process's
/// other KILN_ variables; its stdout and stderr go to `log_prefix`.out and .err.
Child start_child(const std::string& cache_dir, uint64_t seed, const std::string& log_prefix) {
  Child child{-1, log_prefix + ".out", log_prefix + ".err"};
  std::vector<std::string> env{"KILN_CACHE_DIR=" + cache_dir};
  for (char** e = environ; *e; ++e)
    if (!std::string_view(*e).starts_with("KILN_")) env.push_back(*e);
  std::vector<char*> envp;
  for (std::string& entry : env) envp.push_back(entry.data());
  envp.push_back(nullptr);
  std::string program = KILN_CACHE_CHILD, seed_text = std::to_string(seed);
  char* argv[] = {program.data(), seed_text.data(), nullptr};

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, child.out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&actions, 2, child.err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  int error = posix_spawn(&child.pid, program.c_str(), &actions, nullptr, argv, envp.data());
  posix_spawn_file_actions_destroy(&actions);
  EXPECT_EQ(error, 0) << "cannot start " << program << ": " << std::strerror(error);
  if (error != 0) child.pid = -1;
  return child;
}

/// Waits for `child` and reads what it printed.
ChildRun finish_child(const Child& child) {
  ChildRun run;
  int status = 0;
  if (child.pid > 0 && waitpid(child.pid, &status, 0) == child.pid && WIFEXITED(status))
    run.exit_code = WEXITSTATUS(status);
  run.out = read_file(child.out_path);
  run.err = read_file(child.err_path);
  std::stringstream words(run.out.substr(0, run.out.find('\n')));
  for (std::string word; words >> word;)
    if (size_t equals = word.find('='); equals != std::string::npos)
      run.fields[word.substr(0, equals)] = word.substr(equals + 1);
  EXPECT_EQ(run.exit_code, 0) << "the child failed; stdout:\n" << run.out << "stderr:\n" << run.err;
  return run;
}

/// Entry files of `directory` whose names end with `suffix`, sorted.
std::vector<fs::path> entries(const fs::path& directory, const std::string& suffix) {
  std::vector<fs::path> found;
  for (const fs::directory_entry& e : fs::directory_iterator(directory))
    if (e.path().filename().string().ends_with(suffix)) found.push_back(e.path());
  std::sort(found.begin(), found.end());
  return found;
}

/// The key an entry file is named after: 32 hex digits, high half first (Hash128::hex()).
Hash128 key_of(const fs::path& entry) {
  std::string hex = entry.filename().string().substr(0, 32);
  return {std::stoull(hex.substr(16), nullptr, 16), std::stoull(hex.substr(0, 16), nullptr, 16)};
}

/// Whether `entry` loads through the disk cache (pointed at its directory) for the LLVM backend.
bool loads(const fs::path& entry, DiskEntryKind kind) {
  kiln::detail::Backend& llvm = kiln::detail::llvm_backend();
  kiln::detail::disk_cache().set_directory(entry.parent_path().string());
  return kiln::detail::disk_cache().load(kind, key_of(entry), {llvm.compiler(), llvm.cpu()}).has_value();
}

/// Changes the first byte of the Kiln version string in an entry's header and stores a
/// checksum that matches, so that only the version check can reject the file (layout in
/// src/cache/disk_cache.cpp: 36 bytes, then three u32-length strings, two u64 sizes, the
/// u64 XXH3-64 of every other byte of the file). Returns the changed version.
std::string patch_version(const fs::path& entry) {
  std::string file = read_file(entry);
  auto u32_at = [&](size_t at) {
    size_t value = 0;
    for (size_t i = 0; i < 4 && at + i < file.size(); ++i) value |= size_t(uint8_t(file[at + i])) << (8 * i);
    return value;
  };
  constexpr size_t kVersionAt = 36;
  size_t version_bytes = u32_at(kVersionAt), at = kVersionAt;
  for (int string = 0; string < 3; ++string) at += 4 + u32_at(at);
  size_t checksum_at = at + 16;
  EXPECT_LT(checksum_at + 8, file.size()) << entry;
  if (version_bytes == 0 || checksum_at + 8 >= file.size()) return "";
  file[kVersionAt + 4] = file[kVersionAt + 4] == '9' ? '8' : '9';
  std::string covered = file.substr(0, checksum_at) + file.substr(checksum_at + 8);
  uint64_t checksum = kiln::detail::hash_bytes(covered.data(), covered.size());
  for (int i = 0; i < 8; ++i) file[checksum_at + i] = char(checksum >> (8 * i));
  write_file(entry, file);
  return file.substr(kVersionAt + 4, version_bytes);
}

/// Gives each test a temporary directory with an empty cache directory `cache_` inside.
class CacheProcesses : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::path(::testing::TempDir()) / "kiln-cache-processes-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr) << std::strerror(errno);
    work_ = pattern;
    cache_ = work_ + "/cache";
    ASSERT_EQ(mkdir(cache_.c_str(), 0700), 0) << std::strerror(errno);
  }
  void TearDown() override { fs::remove_all(work_); }

  /// Runs one child to completion on `cache_dir`; `name` names its output files.
  ChildRun run(const std::string& cache_dir, uint64_t seed, const std::string& name) {
    return finish_child(start_child(cache_dir, seed, work_ + "/" + name));
  }

  std::string work_, cache_;
};

TEST_F(CacheProcesses, SecondProcessCompilesNothing) {
  ChildRun first = run(cache_, kSeed, "first");
  EXPECT_GE(first.number("compiles"), 1u);
  EXPECT_LE(first.number("compiles"), 8u);
  EXPECT_EQ(first.number("disk_hits"), 0u);
  EXPECT_EQ(first.number("disk_enabled"), 1u) << first.err;

  ChildRun second = run(cache_, kSeed, "second");
  EXPECT_EQ(second.number("compiles"), 0u) << second.out;
  EXPECT_GT(second.number("disk_hits"), 0u);
  EXPECT_EQ(second.checksum(), first.checksum());
  EXPECT_EQ(second.warnings(), 0u) << second.err;
}

TEST_F(CacheProcesses, DamagedEntriesAreRejectedReportedAndReplaced) {
  ChildRun first = run(cache_, kSeed, "first");
  std::vector<fs::path> kernels = entries(cache_, ".kernel");
  ASSERT_GE(kernels.size(), 5u) << "the workload should leave at least five kernel files";
  ASSERT_FALSE(first.compiled().empty()) << first.out;

  // Five kernel files, five kinds of damage, and the words the warning for each must use.
  const fs::path &halved = kernels[0], &emptied = kernels[1], &flipped = kernels[2], &renamed = kernels[3],
                 &repatched = kernels[4];
  fs::copy_file(repatched, renamed, fs::copy_options::overwrite_existing);  // a valid entry of another key
  fs::resize_file(halved, fs::file_size(halved) / 2);
  fs::resize_file(emptied, 0);
  std::string bytes = read_file(flipped);
  bytes.back() ^= 0x40;  // the last byte is in the compressed payload
  write_file(flipped, bytes);
  std::string version = patch_version(repatched);
  ASSERT_FALSE(version.empty());
  const std::map<fs::path, std::string> damaged{{halved, "truncated ("},
                                                {emptied, "truncated (0 bytes"},
                                                {flipped, "checksum mismatch"},
                                                {renamed, "stored under key " + key_of(repatched).hex()},
                                                {repatched, "written by Kiln " + version + " "}};

  // Every damaged file the workload needs is recompiled; the camera's first, specialized
  // kernel is not needed (its generic kernel stands in for it when its file is rejected).
  std::set<std::string> needed;
  for (const auto& [entry, reason] : damaged)
    if (key_of(entry).hex() != first.compiled().at(0)) needed.insert(key_of(entry).hex());

  ChildRun second = run(cache_, kSeed, "second");
  EXPECT_EQ(second.checksum(), first.checksum()) << "a damaged file was executed";
  std::vector<std::string> recompiled = second.compiled();
  EXPECT_EQ(second.number("compiles"), recompiled.size());
  EXPECT_EQ(std::set<std::string>(recompiled.begin(), recompiled.end()), needed) << second.out;
  for (const std::string& hash : recompiled)
    EXPECT_TRUE(loads(fs::path(cache_) / (hash + ".kernel"), DiskEntryKind::Kernel)) << hash << " was not replaced";
  EXPECT_EQ(second.warnings(), damaged.size()) << second.err;
  for (const auto& [entry, reason] : damaged) {
    EXPECT_EQ(second.warnings_naming(entry.string()), 1u) << entry << "\n" << second.err;
    EXPECT_EQ(second.warnings_naming(entry.string() + ": " + reason), 1u) << "expected \"" << reason << "\"\n"
                                                                          << second.err;
  }

  ChildRun third = run(cache_, kSeed, "third");
  EXPECT_EQ(third.number("compiles"), 0u) << third.out;
  EXPECT_EQ(third.checksum(), first.checksum());
  // Rejected files were removed, including the one no kernel was recompiled for.
  EXPECT_EQ(third.warnings(), 0u) << third.err;
}

TEST_F(CacheProcesses, FourConcurrentProcessesLeaveOnlyValidFiles) {
  std::vector<Child> children;
  for (int i = 0; i < 4; ++i)
    children.push_back(start_child(cache_, i % 2 ? kOtherSeed : kSeed, work_ + "/child" + std::to_string(i)));
  std::vector<ChildRun> runs;
  for (const Child& child : children) runs.push_back(finish_child(child));
  for (int i = 0; i < 4; ++i) {
    EXPECT_NE(runs[i].checksum(), "(none)") << runs[i].out;
    EXPECT_EQ(runs[i].checksum(), runs[i % 2].checksum()) << "child " << i << " (same seed as child " << i % 2 << ")";
    EXPECT_EQ(runs[i].warnings(), 0u) << runs[i].err;
  }

  size_t kernel_files = 0;
  for (const fs::directory_entry& e : fs::directory_iterator(cache_)) {
    std::string name = e.path().filename().string();
    EXPECT_FALSE(name.starts_with(".tmp-")) << "a temporary file remains: " << name;
    if (name.ends_with(".kernel")) {
      EXPECT_TRUE(loads(e.path(), DiskEntryKind::Kernel)) << name;
      kernel_files++;
    } else {
      EXPECT_TRUE(name.ends_with(".shape") && loads(e.path(), DiskEntryKind::Shape)) << name;
    }
  }
  EXPECT_GE(kernel_files, 5u);

  ChildRun fifth = run(cache_, kSeed, "fifth");
  EXPECT_EQ(fifth.number("compiles"), 0u) << fifth.out;
  EXPECT_EQ(fifth.checksum(), runs[0].checksum());
}

/// Checks that `refused` ran like `good` but with memory-only caching, that it warned
/// about `directory` with `reason`, and that `empty_dir` (where it would have written) stays empty.
void expect_memory_only(const ChildRun& refused, const ChildRun& good, const std::string& directory,
                        const std::string& reason, const std::string& empty_dir) {
  EXPECT_EQ(refused.checksum(), good.checksum());
  EXPECT_EQ(refused.number("disk_enabled"), 0u);
  EXPECT_EQ(refused.number("compiles"), good.number("compiles"));
  EXPECT_EQ(refused.number("disk_hits"), 0u);
  EXPECT_EQ(refused.warnings_naming("disk cache directory " + directory + " " + reason), 1u) << refused.err;
  EXPECT_EQ(refused.warnings(), 1u) << refused.err;
  EXPECT_TRUE(fs::is_empty(empty_dir)) << "the refused directory was written";
}

TEST_F(CacheProcesses, RefusedDirectoryFallsBackToMemory) {
  ChildRun good = run(cache_, kSeed, "good");
  ASSERT_EQ(good.number("disk_enabled"), 1u) << good.err;

  std::string open_dir = work_ + "/open";
  ASSERT_EQ(mkdir(open_dir.c_str(), 0700), 0);
  ASSERT_EQ(chmod(open_dir.c_str(), 0777), 0);
  expect_memory_only(run(open_dir, kSeed, "open"), good, open_dir, "is writable by group or others (mode 0777)",
                     open_dir);

  std::string target = work_ + "/target", link = work_ + "/link";
  ASSERT_EQ(mkdir(target.c_str(), 0700), 0);
  ASSERT_EQ(symlink(target.c_str(), link.c_str()), 0);
  expect_memory_only(run(link, kSeed, "link"), good, link, "is a symlink", target);
}

}  // namespace
