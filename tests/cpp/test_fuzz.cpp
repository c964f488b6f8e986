// Differential fuzzer: random typed programs run by the LLVM backend and by the reference
// interpreter must agree lane for lane (bitwise; NaNs compare equal whatever their
// payload; on a GPU, float Mul/Min/Max scatter targets within 1e-4/1e-12 relative and ±0
// alike, since its atomics take lanes in any order). A failure prints the seed and the smallest failing prefix of the
// program.
//   KILN_FUZZ_PROGRAMS=N   number of programs (default 10000; more for a longer run)
//   KILN_FUZZ_FIRST=F      first seed (ctest runs shards of the default range in parallel)
//   KILN_FUZZ_SEED=S       run only seed S (to reproduce a failure)
// A third test runs the JIT with every literal as a kernel parameter (generalization
// threshold 1) against the interpreter with literals baked in: generic kernels must give
// bit-identical results.
// Fuzz.SymbolicLoopsMatchInterpreter runs random while_loop programs (fuzz_program.h,
// FuzzLoopProgram) symbolic on the JIT, symbolic on the interpreter and evaluated on both:
// all four must agree.
//   KILN_FUZZ_LOOPS=N      number of loop programs (default 200; seeds 300001...)
//   KILN_FUZZ_LOOP_SEED=S  run only loop seed S
//   KILN_FUZZ_LOOP_IF=0    no if_stmt inside loop bodies
//   KILN_FUZZ_VALUES=1     listings show the lanes of inputs
#include <gtest/gtest.h>

#include "fuzz_program.h"

#include <cstdlib>
#include <string>

using namespace kiln;
using namespace kiln::test;

namespace {

uint64_t env_number(const char* name, uint64_t fallback) {
  const char* value = std::getenv(name);
  return value ? std::strtoull(value, nullptr, 10) : fallback;
}

/// Generalization threshold of the JIT runs (1: every literal is a parameter).
uint32_t jit_threshold = 2;

FuzzResult run_seed(uint64_t seed, int max_steps, bool interpreter) {
  set_generalization_threshold(interpreter ? 2 : jit_threshold);
  FuzzResult result = run_on(interpreter, [&] { return FuzzProgram(seed, max_steps).run(); });
  set_generalization_threshold(2);
  return result;
}

/// True on a GPU (not the emulated one, whose lanes run in order).
bool on_a_gpu() {
  const char* device = std::getenv("KILN_DEVICE");
  return default_device() == Device::CUDA && !(device && std::string(device) == "cuda-emulated");
}

/// Index of the first differing value, or -1. On a GPU, float targets of Mul, Min and Max
/// scatters compare within close_value()'s tolerance (their atomics' order is the GPU's).
long first_mismatch(const FuzzResult& jit, const FuzzResult& reference) {
  bool reordering = on_a_gpu();
  for (size_t v = 0; v < jit.lanes.size(); ++v)
    for (size_t i = 0; i < jit.lanes[v].size(); ++i)
      if (reordering && jit.reordered[v] ? !close_value(jit.types[v], jit.lanes[v][i], reference.lanes[v][i])
                                         : !same_value(jit.types[v], jit.lanes[v][i], reference.lanes[v][i]))
        return long(v);
  return -1;
}

bool fails(uint64_t seed, int max_steps) {
  return first_mismatch(run_seed(seed, max_steps, false), run_seed(seed, max_steps, true)) >= 0;
}

void check_seed(uint64_t seed) {
  FuzzResult jit = run_seed(seed, 1000, false), reference = run_seed(seed, 1000, true);
  ASSERT_EQ(jit.listing, reference.listing) << "seed " << seed << ": generation is not deterministic";
  if (first_mismatch(jit, reference) < 0) return;
  int steps = 0;
  while (steps < 1000 && !fails(seed, steps)) ++steps;
  FuzzResult small_jit = run_seed(seed, steps, false), small_reference = run_seed(seed, steps, true);
  long v = first_mismatch(small_jit, small_reference);
  std::ostringstream lanes;
  if (v >= 0)
    for (size_t i = 0; i < small_jit.lanes[v].size(); ++i)
      if (!same_value(small_jit.types[v], small_jit.lanes[v][i], small_reference.lanes[v][i]))
        lanes << "  lane " << i << ": jit 0x" << std::hex << small_jit.lanes[v][i] << " interpreter 0x"
              << small_reference.lanes[v][i] << std::dec << "\n";
  FAIL() << "fuzz seed " << seed << " (reproduce with KILN_FUZZ_SEED=" << seed << "), smallest failing program ("
         << steps << " steps), value #" << v << " differs:\n"
         << small_jit.listing << lanes.str();
}

}  // namespace

TEST(Fuzz, JitMatchesInterpreter) {
  if (const char* seed = std::getenv("KILN_FUZZ_SEED")) {
    check_seed(std::strtoull(seed, nullptr, 10));
    return;
  }
  uint64_t first = env_number("KILN_FUZZ_FIRST", 1), programs = env_number("KILN_FUZZ_PROGRAMS", 10000);
  for (uint64_t seed = first; seed < first + programs; ++seed) {
    check_seed(seed);
    if (HasFatalFailure() || HasFailure()) return;
  }
}

TEST(Fuzz, CheckedModeMatchesToo) {
  set_flag(Flag::Checks, true);
  for (uint64_t seed = 100001; seed <= 100200; ++seed) {
    check_seed(seed);
    if (HasFailure()) break;
  }
  set_flag(Flag::Checks, false);
}

TEST(Fuzz, GeneralizedKernelsMatchSpecialized) {
  jit_threshold = 1;
  for (uint64_t seed = 200001; seed <= 200300; ++seed) {
    check_seed(seed);
    if (HasFailure()) break;
  }
  jit_threshold = 2;
  EXPECT_GT(cache_stats().generalizations, 0u);
}

namespace {

std::string describe_difference(const FuzzResult& got, const FuzzResult& want) {
  std::ostringstream out;
  if (got.lanes.size() != want.lanes.size()) {
    out << got.lanes.size() << " values, expected " << want.lanes.size() << "\n";
    return out.str();
  }
  for (size_t v = 0; v < got.lanes.size(); ++v) {
    if (got.types[v] != want.types[v] || got.lanes[v].size() != want.lanes[v].size()) {
      out << "value #" << v << ": type or size differs\n";
      return out.str();
    }
    int shown = 0;
    for (size_t i = 0; i < got.lanes[v].size() && shown < 4; ++i)
      if (!same_value(got.types[v], got.lanes[v][i], want.lanes[v][i])) {
        if (shown == 0) out << "value #" << v << " (" << type_name(got.types[v]) << ") differs:\n";
        out << "  lane " << i << ": 0x" << std::hex << got.lanes[v][i] << " expected 0x" << want.lanes[v][i] << std::dec
            << "\n";
        ++shown;
      }
    if (shown) return out.str();
  }
  return "";
}

/// Runs loop seed `seed` (body truncated to `max_steps`) in every variant: empty when all
/// agree with symbolic/jit, else what went wrong; `listing` gets the program.
std::string loop_failure(uint64_t seed, int max_steps, std::string* listing = nullptr) {
  FuzzResult reference;
  for (const test::ModeRun& variant : test::kModeRuns) {
    FuzzResult result;
    try {
      result = run_on(variant.interpreter, [&] { return FuzzLoopProgram(seed, max_steps).run(variant.mode); });
    } catch (const std::exception& e) {
      return std::string(variant.name) + " threw: " + e.what() + "\n";
    }
    if (&variant == &test::kModeRuns[0]) {
      reference = std::move(result);
      if (listing) *listing = reference.listing;
      continue;
    }
    if (variant.mode == ControlMode::Symbolic && result.listing != reference.listing)
      return "generation is not deterministic\n";
    std::string diff = describe_difference(result, reference);
    if (!diff.empty()) return std::string(variant.name) + " differs from symbolic/jit:\n" + diff;
  }
  return "";
}

void check_loop_seed(uint64_t seed) {
  if (loop_failure(seed, 1000).empty()) return;
  int steps = 0;  // the smallest failing body
  while (steps < 1000 && loop_failure(seed, steps).empty()) ++steps;
  std::string listing;
  std::string failure = loop_failure(seed, steps, &listing);
  if (listing.empty()) try {
      listing = run_on(true, [&] { return FuzzLoopProgram(seed, steps).run(ControlMode::Symbolic); }).listing;
    } catch (const std::exception& e) {
      listing = std::string("(the symbolic interpreter run threw too: ") + e.what() + ")\n";
    }
  FAIL() << "loop fuzz seed " << seed << " (reproduce with KILN_FUZZ_LOOP_SEED=" << seed << "), smallest failing body ("
         << steps << " steps): " << failure << "program:\n"
         << listing;
}

}  // namespace

TEST(Fuzz, SymbolicLoopsMatchInterpreter) {
  if (const char* seed = std::getenv("KILN_FUZZ_LOOP_SEED")) {
    check_loop_seed(std::strtoull(seed, nullptr, 10));
    return;
  }
  uint64_t programs = env_number("KILN_FUZZ_LOOPS", 200);
  for (uint64_t seed = 300001; seed < 300001 + programs; ++seed) {
    check_loop_seed(seed);
    if (HasFailure()) return;
  }
}

// Kernels split into pieces of a few statements (kernel_split(); long kernels compile that
// way) must give the same results: nearly every value crosses between pieces. Straight-line
// programs from seed 400001 and loop programs from seed 300001:
//   KILN_FUZZ_SPLIT_PROGRAMS=N, KILN_FUZZ_SPLIT_LOOPS=N   how many of each
// (a failing seed reproduces under Fuzz.JitMatchesInterpreter only with this test's split).
TEST(Fuzz, SplitKernelsMatchInterpreter) {
  uint32_t split = kernel_split();
  bool disk = flag(Flag::DiskCache);
  set_flag(Flag::DiskCache, false);  // kernels compiled whole elsewhere must not stand in
  flush_kernel_cache();
  set_kernel_split(3);
  for (uint64_t seed = 400001; seed <= 400000 + env_number("KILN_FUZZ_SPLIT_PROGRAMS", 100); ++seed) {
    check_seed(seed);
    if (HasFailure()) break;
  }
  for (uint64_t seed = 300001; seed <= 300000 + env_number("KILN_FUZZ_SPLIT_LOOPS", 30) && !HasFailure(); ++seed)
    check_loop_seed(seed);
  set_kernel_split(split);
  set_flag(Flag::DiskCache, disk);
  flush_kernel_cache();
}
