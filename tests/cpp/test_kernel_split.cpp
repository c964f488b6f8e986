// Long kernels compiled as pieces (src/backend/kernel_split.h): the plan (where pieces
// start, what crosses between them, frame slots), the LLVM backend's functions per piece,
// and results bit-identical to the reference interpreter for kernels long enough to split.
#include <kiln/kiln.h>

#include <gtest/gtest.h>

#include "backend/backend.h"
#include "backend/kernel_split.h"
#include "cache/kernel_cache.h"
#include "ir/op_info.h"
#include "op_test_support.h"

#include <algorithm>
#include <cstring>
#include <map>

using namespace kiln;
using namespace kiln::detail;

namespace {

/// Restores the kernel split and the disk cache flag, and starts from an empty kernel
/// cache: a kernel compiled under another split (or found on disk) must not stand in.
class KernelSplitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    set_flag(Flag::DiskCache, false);
    flush_kernel_cache();
    kernel_history(true);
  }
  void TearDown() override {
    set_kernel_split(split_);
    set_flag(Flag::DiskCache, disk_);
    flush_kernel_cache();
  }

 private:
  uint32_t split_ = kernel_split();
  bool disk_ = flag(Flag::DiskCache);
};

/// A long kernel touching what a piece boundary can cut: a float chain that feeds integer
/// division by a launch parameter, gathers, Bool selects, symbolic loops, a scatter_add
/// and a scatter_inc. Returns the bits of every result.
std::vector<std::vector<uint32_t>> long_program(int rounds) {
  const size_t n = 300;
  Float x = arange<Float>(n) * 0.01f - 1.f;
  UInt32 u = arange<UInt32>(n);
  Float table = arange<Float>(64) * 0.25f;
  eval(table);
  UInt32 divisor = opaque<UInt32>(7), histogram = zeros<UInt32>(16), counter = zeros<UInt32>(1);
  Float f = x;
  for (int r = 0; r < rounds; ++r) {
    f = fma(f, Float(0.75f), x);
    u = u * 3u + u / divisor;
    Bool big = f > 0.5f;
    f = select(big, f - 1.f, f + gather(table, u % 64u));
    if (r % 50 == 25) {
      auto [halved] = while_loop(
          std::make_tuple(f), [](const Float& v) { return v > 1.f; },
          [](const Float& v) { return std::make_tuple(v * 0.5f); });
      f = halved;
    }
    if (r % 40 == 0) scatter_add(histogram, UInt32(1u) + (u & 3u), u % 16u);
  }
  scatter_inc(counter, UInt32(0u), f > 0.f);
  eval(f, u, histogram, counter);
  auto bits = [](const auto& array) {
    std::vector<uint32_t> out(array.size());
    std::memcpy(out.data(), array.data(), out.size() * 4);
    return out;
  };
  return {bits(f), bits(u), bits(histogram), bits(counter)};
}

/// The form of the largest kernel launched since the history was last cleared.
std::shared_ptr<const KernelForm> largest_kernel() {
  std::shared_ptr<const KernelForm> largest;
  for (const KernelLaunch& l : kernel_history(true))
    if (l.listing && (!largest || l.listing->form->statements.size() > largest->statements.size()))
      largest = l.listing->form;
  return largest;
}

/// Checks what running piece after piece relies on: pieces start at top level; every value
/// a piece (or the kernel, for its outputs) reads from another piece is imported, defined
/// earlier, and, unless recomputed, still in its frame slot when read.
void expect_consistent(const KernelForm& form, const KernelSplit& split) {
  const auto& statements = form.statements;
  const uint32_t pieces = uint32_t(split.pieces());
  ASSERT_GT(pieces, 1u);
  ASSERT_EQ(split.starts[0], 0u);
  std::vector<uint32_t> piece_of(statements.size());
  int depth = 0;
  for (uint32_t i = 0, k = 0; i < statements.size(); ++i) {
    if (k + 1 < pieces && split.starts[k + 1] == i) {
      ++k;
      EXPECT_EQ(depth, 0) << "piece " << k << " starts inside a loop";
    }
    piece_of[i] = k;
    depth += statements[i].op == Op::LoopBegin;
    depth -= statements[i].op == Op::LoopEnd;
  }
  auto imported = [&](uint32_t k, uint32_t p) {
    return std::binary_search(split.imports[k].begin(), split.imports[k].end(), p);
  };
  for (uint32_t i = 0; i < statements.size(); ++i) {
    const KernelStatement& s = statements[i];
    for (int k = op_has_buffer_operand(s.op) ? 1 : 0; k < op_arity(s.op); ++k)
      if (piece_of[s.operands[k]] != piece_of[i]) EXPECT_TRUE(imported(piece_of[i], s.operands[k]));
    if (s.output_slot != kNoSlot) EXPECT_TRUE(imported(pieces, i));
  }
  std::vector<int64_t> frame(split.frame_slots, -1);  // which statement each slot holds
  for (uint32_t k = 0; k <= pieces; ++k) {
    for (uint32_t p : split.imports[k]) {
      EXPECT_LT(piece_of[p], k);
      if (is_leaf(statements[p].op)) continue;
      ASSERT_NE(split.frame_slot[p], kNoSlot);
      EXPECT_EQ(frame[split.frame_slot[p]], int64_t(p)) << "statement " << p << " was overwritten before piece " << k;
    }
    if (k < pieces)
      for (uint32_t p : split.exports[k]) frame[split.frame_slot[p]] = p;
  }
}

size_t exported_values(const KernelSplit& split) {
  size_t count = 0;
  for (const auto& list : split.exports) count += list.size();
  return count;
}

}  // namespace

TEST_F(KernelSplitTest, LongKernelsMatchTheInterpreter) {
  auto reference = test::run_on(true, [] { return long_program(300); });
  set_kernel_split(1000);
  EXPECT_EQ(long_program(300), reference);
  EXPECT_GT(largest_kernel()->statements.size(), 3000u);  // at least three pieces
}

TEST_F(KernelSplitTest, TinyPiecesMatchTheInterpreter) {
  auto reference = test::run_on(true, [] { return long_program(60); });
  set_kernel_split(7);  // nearly every value crosses a piece boundary
  EXPECT_EQ(long_program(60), reference);
}

TEST_F(KernelSplitTest, PlanOfARealKernelIsConsistent) {
  long_program(120);
  std::shared_ptr<const KernelForm> form = largest_kernel();
  for (uint32_t max : {7u, 50u, 300u}) {
    SCOPED_TRACE("pieces of " + std::to_string(max) + " statements");
    KernelSplit split = plan_kernel_split(*form, max, 1u << 20);
    EXPECT_GE(split.pieces(), form->statements.size() / max / 2);
    expect_consistent(*form, split);
    EXPECT_LT(split.frame_slots, exported_values(split));  // slots are reused
  }
}

TEST_F(KernelSplitTest, OnePieceWhenShortOrWhenTheFrameWouldBeTooLarge) {
  long_program(120);
  std::shared_ptr<const KernelForm> form = largest_kernel();
  uint32_t size = uint32_t(form->statements.size());
  EXPECT_EQ(plan_kernel_split(*form, 0, 1u << 20).pieces(), 1u);
  EXPECT_EQ(plan_kernel_split(*form, size, 1u << 20).pieces(), 1u);
  EXPECT_GT(plan_kernel_split(*form, size - 1, 1u << 20).pieces(), 1u);
  uint32_t needed = plan_kernel_split(*form, 7, 1u << 20).frame_slots;
  EXPECT_GT(plan_kernel_split(*form, 7, needed).pieces(), 1u);
  EXPECT_EQ(plan_kernel_split(*form, 7, needed - 1).pieces(), 1u);
}

// The LLVM backend follows kernel_split(): one function per piece in the object code.
TEST_F(KernelSplitTest, BackendCompilesOneFunctionPerPiece) {
  long_program(60);
  std::shared_ptr<const KernelForm> form = largest_kernel();
  auto object_of = [&](uint32_t split, const std::string& symbol) {
    set_kernel_split(split);
    CompileTimes times;
    std::vector<uint8_t> object;
    llvm_backend().compile(*form, symbol, times, object);
    return std::string(object.begin(), object.end());
  };
  std::string split = object_of(50, "kiln_split_test_on"), whole = object_of(0, "kiln_split_test_off");
  EXPECT_NE(split.find("kiln_split_test_on.p1"), std::string::npos);
  EXPECT_EQ(whole.find("kiln_split_test_off.p"), std::string::npos);
}
