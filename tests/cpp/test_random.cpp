// PCG32 (random.h) must reproduce the reference PCG32 stream exactly, lane by lane. The
// reference here is a scalar transcription of O'Neill's pcg32_srandom_r, pcg32_random_r
// and pcg32_boundedrand_r, checked itself against the published demo outputs.
#include <kiln/kiln.h>
#include <kiln/random.h>

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

using namespace kiln;

namespace {

/// The reference generator, one lane, straight from the algorithm's definition.
struct ReferencePcg32 {
  uint64_t state = 0, inc = 0;

  ReferencePcg32(uint64_t initstate, uint64_t initseq) {
    inc = (initseq << 1u) | 1u;
    next();
    state += initstate;
    next();
  }
  uint32_t next() {
    uint64_t old = state;
    state = old * 6364136223846793005ULL + inc;
    uint32_t xorshifted = uint32_t(((old >> 18u) ^ old) >> 27u);
    uint32_t rot = uint32_t(old >> 59u);
    return (xorshifted >> rot) | (xorshifted << ((-rot) & 31));
  }
  uint32_t bounded(uint32_t bound) {
    uint32_t threshold = -bound % bound;
    for (;;) {
      uint32_t r = next();
      if (r >= threshold) return r % bound;
    }
  }
  float next_float() {
    uint32_t bits = (next() >> 9) | 0x3f800000u;
    float f;
    std::memcpy(&f, &bits, 4);
    return f - 1.f;
  }
  double next_double() {
    uint64_t bits = (uint64_t(next()) << 20) | 0x3ff0000000000000ULL;
    double d;
    std::memcpy(&d, &bits, 8);
    return d - 1.0;
  }
};

const uint32_t kDemoOutputs[] = {0xa15c02b7, 0x7b47f409, 0xba1d3330, 0x83d2f293, 0xbfa4784b, 0xcbed606e};

/// Reference generators seeded as PCG32(size) seeds its lanes by default.
std::vector<ReferencePcg32> default_references(size_t lanes) {
  std::vector<ReferencePcg32> refs;
  for (size_t i = 0; i < lanes; ++i) refs.emplace_back(PCG32_DEFAULT_STATE, PCG32_DEFAULT_STREAM + i);
  return refs;
}

/// Runs `body` once on the LLVM backend and once on the reference interpreter.
template <typename F> void on_both_backends(F&& body) {
  for (bool interpreter : {false, true}) {
    SCOPED_TRACE(interpreter ? "interpreter" : "LLVM");
    bool saved = flag(Flag::Interpreter);
    set_flag(Flag::Interpreter, interpreter);
    body();
    set_flag(Flag::Interpreter, saved);
  }
}

}  // namespace

TEST(PCG32, ReferenceMatchesThePublishedDemo) {
  ReferencePcg32 ref(42, 54);
  for (uint32_t expected : kDemoOutputs) EXPECT_EQ(ref.next(), expected);
  // And the multiplier named in random.h is the reference's.
  EXPECT_EQ(PCG32_MULT, 6364136223846793005ULL);
}

TEST(PCG32, DemoSeed) {
  on_both_backends([] {
    PCG32 rng(1, 42, 54);
    for (uint32_t expected : kDemoOutputs) EXPECT_EQ(rng.next_uint32().item(), expected);
  });
}

TEST(PCG32, DemoSeedBroadcastToManyLanes) {
  PCG32 rng(37, 42, 54);  // every lane on the same seed gives the same stream
  for (uint32_t expected : kDemoOutputs) {
    std::vector<uint32_t> got = rng.next_uint32().to_vector();
    ASSERT_EQ(got.size(), 37u);
    for (uint32_t x : got) ASSERT_EQ(x, expected);
  }
}

TEST(PCG32, DefaultSeedingGivesOneStreamPerLane) {
  on_both_backends([] {
    const size_t lanes = 37, steps = 300;
    PCG32 rng(lanes);
    std::vector<ReferencePcg32> refs = default_references(lanes);
    for (size_t step = 0; step < steps; ++step) {
      UInt32 x = rng.next_uint32();
      eval(x, rng.state);
      std::vector<uint32_t> got = x.to_vector();
      for (size_t i = 0; i < lanes; ++i) ASSERT_EQ(got[i], refs[i].next()) << "step " << step << " lane " << i;
    }
    std::vector<uint64_t> state = rng.state.to_vector();
    for (size_t i = 0; i < lanes; ++i) ASSERT_EQ(state[i], refs[i].state);
  });
}

TEST(PCG32, ExplicitSeedsPerLane) {
  const size_t lanes = 19, steps = 200;
  std::vector<uint64_t> initstate(lanes), initseq(lanes);
  for (size_t i = 0; i < lanes; ++i) {
    initstate[i] = 0x9e3779b97f4a7c15ULL * (i + 1);
    initseq[i] = (i % 3 == 0) ? ~uint64_t(i) : uint64_t(i) << 58;  // top bits are dropped by <<1
  }
  PCG32 rng(lanes, UInt64::from(initstate), UInt64::from(initseq));
  std::vector<ReferencePcg32> refs;
  for (size_t i = 0; i < lanes; ++i) refs.emplace_back(initstate[i], initseq[i]);
  EXPECT_EQ(rng.size(), lanes);
  for (size_t step = 0; step < steps; ++step) {
    UInt32 x = rng.next_uint32();
    eval(x, rng.state);
    for (size_t i = 0; i < lanes; ++i) ASSERT_EQ(x.read(i), refs[i].next()) << "step " << step;
  }
}

TEST(PCG32, UnevaluatedDrawsFuse) {
  // Several draws traced before one evaluation give the same values as evaluating each.
  PCG32 rng(16);
  std::vector<ReferencePcg32> refs = default_references(16);
  UInt32 a = rng.next_uint32(), b = rng.next_uint32(), c = rng.next_uint32();
  eval(a, b, c, rng.state);
  for (size_t i = 0; i < 16; ++i) {
    ASSERT_EQ(a.read(i), refs[i].next());
    ASSERT_EQ(b.read(i), refs[i].next());
    ASSERT_EQ(c.read(i), refs[i].next());
  }
}

TEST(PCG32, FloatsAreExactAndInTheUnitInterval) {
  const size_t lanes = 29, steps = 100;
  PCG32 rng(lanes);
  std::vector<ReferencePcg32> refs = default_references(lanes);
  for (size_t step = 0; step < steps; ++step) {
    Float f = rng.next_float32();
    Float64 d = rng.next_float64();
    eval(f, d, rng.state);
    for (size_t i = 0; i < lanes; ++i) {
      float expected_f = refs[i].next_float();
      double expected_d = refs[i].next_double();
      ASSERT_EQ(f.read(i), expected_f);
      ASSERT_EQ(d.read(i), expected_d);
      ASSERT_TRUE(expected_f >= 0.f && expected_f < 1.f);
      ASSERT_TRUE(expected_d >= 0.0 && expected_d < 1.0);
    }
  }
}

TEST(PCG32, BoundedMatchesTheReferenceRejection) {
  // 0x80000001 rejects almost half the draws, so the redraw loop runs many rounds.
  for (uint32_t bound : {1u, 6u, 1000u, 0x80000001u, 0xfffffff0u}) {
    const size_t lanes = 23;
    PCG32 rng(lanes);
    std::vector<ReferencePcg32> refs = default_references(lanes);
    for (size_t step = 0; step < 40; ++step) {
      UInt32 x = rng.next_uint32_bounded(bound);
      eval(x, rng.state);
      for (size_t i = 0; i < lanes; ++i) {
        uint32_t expected = refs[i].bounded(bound);
        ASSERT_EQ(x.read(i), expected) << "bound " << bound << " step " << step << " lane " << i;
        ASSERT_LT(expected, bound);
      }
    }
    std::vector<uint64_t> state = rng.state.to_vector();
    for (size_t i = 0; i < lanes; ++i) ASSERT_EQ(state[i], refs[i].state) << "bound " << bound;
  }
}

TEST(PCG32, BoundedWithOneBoundPerLane) {
  const size_t lanes = 12;
  std::vector<uint32_t> bounds(lanes);
  for (size_t i = 0; i < lanes; ++i) bounds[i] = i % 2 ? uint32_t(i + 1) : 0x80000000u + uint32_t(i + 1);
  PCG32 rng(lanes);
  std::vector<ReferencePcg32> refs = default_references(lanes);
  UInt32 bound = UInt32::from(bounds);
  for (size_t step = 0; step < 30; ++step) {
    UInt32 x = rng.next_uint32_bounded(bound);
    for (size_t i = 0; i < lanes; ++i) ASSERT_EQ(x.read(i), refs[i].bounded(bounds[i]));
  }
}

TEST(PCG32, ZeroBoundRaises) {
  // [0, 0) holds no integer; the reference's (-0) % 0 would divide by zero, Kiln's x % 0 == x
  // used to return unbounded draws.
  PCG32 rng(5);
  EXPECT_THROW(rng.next_uint32_bounded(0u), ValueError);
  EXPECT_THROW(rng.next_uint32_bounded(UInt32::from({3u, 7u, 0u, 1u, 9u})), ValueError);
  UInt32 x = rng.next_uint32_bounded(UInt32::from({3u, 7u, 2u, 1u, 9u}));  // still usable
  for (size_t i = 0; i < 5; ++i) EXPECT_LT(x.read(i), std::vector<uint32_t>({3u, 7u, 2u, 1u, 9u})[i]);
}

TEST(PCG32, MaskedDrawsAdvanceOnlyActiveLanes) {
  const size_t lanes = 10;
  PCG32 rng(lanes);
  std::vector<ReferencePcg32> refs = default_references(lanes);
  Bool even = (arange<UInt32>(lanes) & 1u) == 0u;
  rng.next_uint32(even);
  for (size_t i = 0; i < lanes; i += 2) refs[i].next();
  UInt32 x = rng.next_uint32();
  for (size_t i = 0; i < lanes; ++i) ASSERT_EQ(x.read(i), refs[i].next()) << "lane " << i;
}

TEST(PCG32, FromStateContinuesTheSameStreams) {
  const size_t lanes = 7;
  PCG32 rng(lanes);
  rng.next_uint32();
  PCG32 copy = PCG32::from_state(rng.state, rng.inc);
  std::vector<ReferencePcg32> refs = default_references(lanes);
  for (ReferencePcg32& r : refs) r.next();
  UInt32 x = copy.next_uint32();
  for (size_t i = 0; i < lanes; ++i) ASSERT_EQ(x.read(i), refs[i].next()) << "lane " << i;
}
