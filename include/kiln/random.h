// PCG32, the PCG-XSH-RR 64/32 generator of M. E. O'Neill (pcg-random.org), with one
// independent generator per lane. Each lane produces exactly the stream of the reference
// C implementation (pcg32_srandom_r / pcg32_random_r / pcg32_boundedrand_r) for the same
// initstate and initseq. Written on the public Array API: drawing a number only traces the
// state update, so the draws fuse into the kernel that uses them.
#pragma once

#include <kiln/array.h>

#include <cstdint>

namespace kiln {

// The names of the reference implementation (pcg32.h), kept so that seeds read the same.
inline constexpr uint64_t PCG32_DEFAULT_STATE = 0x853c49e6748fea9bULL;
inline constexpr uint64_t PCG32_DEFAULT_STREAM = 0xda3e39cb94b95bdbULL;
inline constexpr uint64_t PCG32_MULT = 0x5851f42d4c957f2dULL;

/// `size` PCG32 generators, one per lane. By default lane i uses stream
/// PCG32_DEFAULT_STREAM + i, so lanes are independent.
class PCG32 {
 public:
  /// Lane i seeded with (PCG32_DEFAULT_STATE, PCG32_DEFAULT_STREAM + i).
  explicit PCG32(size_t size = 1) : PCG32(size, UInt64(PCG32_DEFAULT_STATE)) {}
  /// Lane i seeded with (initstate, PCG32_DEFAULT_STREAM + i).
  PCG32(size_t size, const UInt64& initstate) : PCG32(size, initstate, arange<UInt64>(size) + PCG32_DEFAULT_STREAM) {}
  /// Seeds as pcg32_srandom_r(initstate, initseq), per lane (size-1 arguments broadcast).
  PCG32(size_t size, const UInt64& initstate, const UInt64& initseq) { seed(size, initstate, initseq); }

  /// Generators with exactly this LCG state and stream increment per lane (no seeding).
  static PCG32 from_state(UInt64 state, UInt64 inc) {
    PCG32 result(Unseeded{});
    result.state = std::move(state);
    result.inc = std::move(inc);
    return result;
  }

  /// Reseeds as pcg32_srandom_r(initstate, initseq), per lane.
  void seed(size_t size, const UInt64& initstate, const UInt64& initseq) {
    state = zeros<UInt64>(size);
    inc = (initseq << 1u) | 1u;
    next_uint32();
    state += initstate;
    next_uint32();
  }

  /// Uniform 32-bit integers (pcg32_random_r).
  UInt32 next_uint32() {
    UInt64 old = state;
    state = old * PCG32_MULT + inc;
    return output(old);
  }
  /// As next_uint32(), advancing only the active lanes (inactive lanes return their
  /// current output and keep their state).
  UInt32 next_uint32(const Bool& active) {
    UInt64 old = state;
    state = select(active, old * PCG32_MULT + inc, old);
    return output(old);
  }

  /// Uniform floats in [0, 1): 23 random mantissa bits.
  Float next_float32() { return to_float32(next_uint32()); }
  Float next_float32(const Bool& active) { return to_float32(next_uint32(active)); }
  /// Uniform doubles in [0, 1) from one 32-bit draw (the low 20 mantissa bits are zero).
  Float64 next_float64() { return to_float64(next_uint32()); }
  Float64 next_float64(const Bool& active) { return to_float64(next_uint32(active)); }

  /// Uniform integers in [0, bound) without modulo bias, as pcg32_boundedrand_r: draws
  /// below 2^32 mod bound are rejected and redrawn. Each round evaluates the state and
  /// asks whether any lane was rejected, which is rare (probability < bound / 2^32).
  /// A zero bound in any lane raises ValueError ([0, 0) holds no integer); the first
  /// round's question finds it, so the generators have advanced once when it is raised.
  UInt32 next_uint32_bounded(const UInt32& bound) {
    UInt32 threshold = (0u - bound) % bound;
    UInt32 result = next_uint32();
    Bool rejected = result < threshold;
    Bool unfinished = rejected | (bound == 0u);
    for (bool first_round = true;; first_round = false) {
      eval(state, result, rejected, unfinished);
      if (!any(unfinished).item()) break;
      if (first_round && any(bound == 0u).item())
        throw ValueError(
            "kiln: PCG32.next_uint32_bounded(): a bound is 0, and [0, 0) holds no integer; "
            "every bound must be positive");
      UInt32 retry = next_uint32(rejected);
      result = select(rejected, retry, result);
      rejected = rejected & (retry < threshold);
      unfinished = rejected;
    }
    return result % bound;
  }

  /// Number of lanes.
  size_t size() const { return state.size(); }

  UInt64 state;  ///< the LCG state of each lane
  UInt64 inc;    ///< the stream of each lane: (initseq << 1) | 1, always odd

 private:
  struct Unseeded {};
  explicit PCG32(Unseeded) {}
  /// The XSH-RR output function: xorshift high bits, then a random rotation.
  static UInt32 output(const UInt64& old) {
    UInt32 xorshifted = cast<uint32_t>(((old >> 18u) ^ old) >> 27u);
    UInt32 rotation = cast<uint32_t>(old >> 59u);
    return (xorshifted >> rotation) | (xorshifted << ((0u - rotation) & 31u));
  }
  static Float to_float32(const UInt32& bits) { return reinterpret<float>((bits >> 9u) | 0x3f800000u) - 1.f; }
  static Float64 to_float64(const UInt32& bits) {
    return reinterpret<double>((cast<uint64_t>(bits) << 20u) | 0x3ff0000000000000ull) - 1.0;
  }
};

}  // namespace kiln
