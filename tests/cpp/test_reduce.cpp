// Reductions and search with Dr.Jit's names (reduce.h, search.h): scatter_reduce with Mul,
// And and Or under heavy conflicts on both backends, block_reduce for every ReduceOp against
// a host loop (and its derivatives), count, mean, and binary_search against std::lower_bound.
#include <kiln/kiln.h>

#include <gtest/gtest.h>

#include "autodiff_test_support.h"

#include <algorithm>
#include <limits>
#include <random>
#include <type_traits>
#include <vector>

using namespace kiln;
using kiln::test::AutodiffTest;
using kiln::test::expect_error;
using kiln::test::run_on;

namespace {

TEST(Reduce, ScatterReduceMulAndOrUnderConflicts) {
  const size_t n = 1 << 16;
  for (bool interpreter : {false, true}) {
    SCOPED_TRACE(interpreter ? "interpreter" : "llvm");
    run_on(interpreter, [&] {
      UInt32 lane = arange<UInt32>(n);
      UInt32 bin = lane % 5u;
      UInt32 bits = UInt32(1u) << (lane % 32u);
      UInt32 any_bits = zeros<UInt32>(5), all_bits = full<UInt32>(~0u, 5);
      scatter_reduce(ReduceOp::Or, any_bits, bits, bin);
      scatter_reduce(ReduceOp::And, all_bits, ~bits, bin);  // every bit cleared by some lane
      // Products of powers of two are exact whatever the order: 2^(+1) and 2^(-1) alternate.
      Float products = ones<Float>(5);
      scatter_reduce(ReduceOp::Mul, products, select(lane % 10u < 5u, Float(2.f), Float(0.5f)), bin);
      Int64 signs = ones<Int64>(5);
      scatter_reduce(ReduceOp::Mul, signs, Int64(-1), bin, lane < 13u);  // 3, 3, 3, 2, 2 factors
      eval(any_bits, all_bits, products, signs);
      for (uint32_t b = 0; b < 5; ++b) {
        EXPECT_EQ(any_bits.read(b), ~0u);
        EXPECT_EQ(all_bits.read(b), 0u);
        size_t ups = 0, downs = 0;
        for (size_t i = b; i < n; i += 5) (i % 10 < 5 ? ups : downs)++;
        EXPECT_EQ(products.read(b), std::ldexp(1.f, int(ups) - int(downs)));
        EXPECT_EQ(signs.read(b), b < 3 ? -1 : 1);
      }
      return 0;
    });
  }
}

TEST(Reduce, BitwiseScatterNeedsIntegers) {
  Float target = zeros<Float>(2);
  expect_error<TypeError>([&] { scatter_reduce(ReduceOp::And, target, Float(1.f), UInt32(0u)); },
                          "bitwise reductions need integer arrays");
  expect_error<TypeError>([&] { block_reduce(ReduceOp::Or, Float{1, 2}, 2); }, "bitwise reductions need integer");
}

/// block_reduce on the host: `op` over groups of `block`.
template <typename T> std::vector<T> host_block_reduce(ReduceOp op, const std::vector<T>& a, size_t block) {
  std::vector<T> out;
  for (size_t start = 0; start < a.size(); start += block) {
    T acc = a[start];
    for (size_t i = start + 1; i < std::min(a.size(), start + block); ++i) {
      switch (op) {
        case ReduceOp::None: break;
        case ReduceOp::Add: acc = T(acc + a[i]); break;
        case ReduceOp::Mul:  // integers wrap, as in Kiln (and without signed overflow here)
          if constexpr (std::is_integral_v<T>)
            acc = T(std::make_unsigned_t<T>(acc) * std::make_unsigned_t<T>(a[i]));
          else
            acc = T(acc * a[i]);
          break;
        case ReduceOp::Min: acc = std::min(acc, a[i]); break;
        case ReduceOp::Max: acc = std::max(acc, a[i]); break;
        case ReduceOp::And:
          if constexpr (std::is_integral_v<T>) acc = T(acc & a[i]);
          break;
        case ReduceOp::Or:
          if constexpr (std::is_integral_v<T>) acc = T(acc | a[i]);
          break;
      }
    }
    out.push_back(acc);
  }
  return out;
}

TEST(Reduce, BlockReduceEveryOpAgainstTheHost) {
  std::mt19937 rng(3);
  std::vector<int32_t> ints(103);
  for (int32_t& v : ints) v = int32_t(rng() % 2001) - 1000;
  std::vector<float> floats(103);
  for (float& v : floats) v = (rng() % 2 ? 2.f : 0.5f) * (rng() % 3 ? 1.f : -1.f);  // exact products
  for (size_t block : {1u, 4u, 7u, 103u, 200u}) {
    SCOPED_TRACE("block " + std::to_string(block));
    for (ReduceOp op : {ReduceOp::Add, ReduceOp::Mul, ReduceOp::Min, ReduceOp::Max, ReduceOp::And, ReduceOp::Or})
      EXPECT_EQ(block_reduce(op, Int32::from(ints), block).to_vector(), host_block_reduce(op, ints, block))
          << reduce_op_name(op);
    for (ReduceOp op : {ReduceOp::Add, ReduceOp::Mul, ReduceOp::Min, ReduceOp::Max})
      EXPECT_EQ(block_reduce(op, Float::from(floats), block).to_vector(), host_block_reduce(op, floats, block))
          << reduce_op_name(op);
  }
  Bool mask = Bool{true, true, false, true, false, false, true};
  EXPECT_EQ(cast<uint32_t>(block_reduce(ReduceOp::And, mask, 2)).to_vector(), (std::vector<uint32_t>{1, 0, 0, 1}));
  EXPECT_EQ(cast<uint32_t>(block_reduce(ReduceOp::Or, mask, 3)).to_vector(), (std::vector<uint32_t>{1, 1, 1}));
  expect_error<TypeError>([&] { block_reduce(ReduceOp::Add, mask, 2); }, "Bool arrays reduce with And (all) or Or");
  expect_error<ValueError>([] { block_reduce(ReduceOp::Add, Float{1}, 0); }, "block size must be positive");
  expect_error<ValueError>([] { block_reduce(ReduceOp::None, Float{1}, 1); }, "does not reduce");
}

class ReduceGrads : public AutodiffTest {};

TEST_F(ReduceGrads, BlockReduceMatchesFiniteDifferences) {
  Float64 x = test::domain_array(23, {0.5, 2.0, true}, 0.0);  // distinct: no ties
  test::for_each_run([&] {
    for (ReduceOp op : {ReduceOp::Add, ReduceOp::Mul, ReduceOp::Min, ReduceOp::Max}) {
      SCOPED_TRACE(reduce_op_name(op));
      KILN_EXPECT_GRADS(check_grads([op](const Float64& a) { return block_reduce(op, a * a, 4); }, std::tuple(x)));
    }
    // The values with derivatives (a tree of products) are those without (atomic products).
    std::vector<double> plain = block_reduce(ReduceOp::Mul, x, 5).to_vector();
    Float64 xg = x;
    enable_grad(xg);
    std::vector<double> traced = block_reduce(ReduceOp::Mul, xg, 5).to_vector();
    ASSERT_EQ(traced.size(), plain.size());
    for (size_t i = 0; i < plain.size(); ++i) EXPECT_NEAR(traced[i], plain[i], 1e-14 * std::fabs(plain[i]));
  });
}

TEST(Reduce, CountAndMean) {
  EXPECT_EQ(count(Bool{true, false, true, true}).item(), 3u);
  EXPECT_EQ(count(arange<UInt32>(1000) % 7u == 0u).item(), 143u);
  EXPECT_EQ(mean(Float{1, 2, 3, 6}).item(), 3.f);
  EXPECT_TRUE(std::isnan(mean(Float64::from(std::vector<double>{})).item()));
}

TEST(Search, BinarySearchIsLowerBound) {
  std::vector<float> data = {-3, -1, -1, 0, 2, 2, 2, 5, 9, 12, 12, 40};
  std::vector<float> queries = {-5, -3, -1, -0.5f, 0, 1, 2, 3, 12, 39, 40, 100};
  Float sorted = Float::from(data), values = Float::from(queries);
  for (bool interpreter : {false, true}) {
    std::vector<uint32_t> got = run_on(interpreter, [&] {
      return binary_search(0, uint32_t(data.size()), [&](const UInt32& i) { return gather(sorted, i) < values; })
          .to_vector();
    });
    for (size_t q = 0; q < queries.size(); ++q)
      EXPECT_EQ(got[q], uint32_t(std::lower_bound(data.begin(), data.end(), queries[q]) - data.begin()))
          << "query " << queries[q];
  }
  // The predicate runs floor(log2(end - start)) + 1 times, on indices inside [start, end).
  int calls = 0;
  UInt32 found = binary_search(5, 17, [&](const UInt32& i) {
    ++calls;
    return i < 9u;
  });
  EXPECT_EQ(calls, 4);
  EXPECT_EQ(found.item(), 9u);
  EXPECT_EQ(binary_search(3, 3, [](const UInt32&) -> Bool { throw std::logic_error("not called"); }).item(), 3u);
  expect_error<ValueError>([] { binary_search(4, 2, [](const UInt32& i) { return i < 3u; }); },
                           "start (4) is after end");
}

}  // namespace
