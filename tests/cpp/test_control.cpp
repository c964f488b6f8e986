// Control flow: while_loop, if_stmt and dispatch in both modes, nested in each other.
//
// Most tests are table-driven: a case traces one construct for a given ControlMode and
// returns every array it produced as lane bits (a Snapshot). Each case runs four times —
// symbolic and evaluated, on the LLVM JIT and on the reference interpreter — and all four
// must be bit-identical (and equal to a host reference where the case has one).
#include "control_test_support.h"

using namespace kiln;

namespace {

// ---- the table of constructs ----------------------------------------------------------------

struct ControlCase {
  std::string name;
  std::function<Snapshot(ControlMode)> run;
  std::function<Snapshot()> expected;  ///< host reference (optional)
};

// Outer i < n (per lane), inner j < i; the state is passed through the loops (so the
// evaluated loops may compact). `inner_symbolic` forces the inner loop symbolic.
Snapshot nested_loops(ControlMode mode, bool inner_symbolic, size_t size) {
  ControlMode inner_mode = inner_symbolic ? ControlMode::Symbolic : mode;
  UInt32 lane = lanes_of(size);
  UInt32 n = lane % 13u;
  auto [n_out, i, total, acc] = while_loop(
      std::tuple(n, n * 0u, n * 0u, cast<float>(n) * 0.f),
      [](const UInt32& n, const UInt32& i, const UInt32&, const Float&) { return i < n; },
      [&](const UInt32& n, const UInt32& i, const UInt32& total, const Float& acc) {
        auto [i2, j, total2, acc2] = while_loop(
            std::tuple(i, i * 0u, total, acc),
            [](const UInt32& i, const UInt32& j, const UInt32&, const Float&) { return j < i; },
            [](const UInt32& i, const UInt32& j, const UInt32& total, const Float& acc) {
              return std::tuple(i, j + 1u, total + 1u, acc + cast<float>(i * j) * 0.25f);
            },
            inner_mode, "inner");
        return std::tuple(n, i2 + 1u, total2, acc2 + 1.f);
      },
      mode, "outer");
  return snap(n_out, i, total, acc);
}

Snapshot nested_loops_expected(size_t size) {
  std::vector<uint32_t> n(size), total(size);
  std::vector<float> acc(size);
  for (size_t l = 0; l < size; ++l) {
    n[l] = uint32_t(l % 13);
    double a = 0;
    for (uint32_t i = 0; i < n[l]; ++i) {
      for (uint32_t j = 0; j < i; ++j) a += 0.25 * i * j, ++total[l];
      a += 1;
    }
    acc[l] = float(a);  // exact: small multiples of 0.25
  }
  return {column(n), column(n), column(total), column(acc)};
}

// The same, but the loops read the bounds from outside their state (captured per-lane
// arrays: evaluated loops must not compact).
Snapshot nested_loops_capturing(ControlMode mode) {
  const size_t size = 1003;
  UInt32 n = lanes_of(size) % 13u;
  auto [i, total, acc] = while_loop(
      std::tuple(n * 0u, n * 0u, zeros<Float>(size)),
      [&](const UInt32& i, const UInt32&, const Float&) { return i < n; },
      [&](const UInt32& i, const UInt32& total, const Float& acc) {
        auto [j, total2, acc2] = while_loop(
            std::tuple(i * 0u, total, acc), [&](const UInt32& j, const UInt32&, const Float&) { return j < i; },
            [&](const UInt32& j, const UInt32& total, const Float& acc) {
              return std::tuple(j + 1u, total + 1u, acc + cast<float>(i * j) * 0.25f);
            },
            mode, "inner");
        return std::tuple(i + 1u, total2, acc2 + 1.f);
      },
      mode, "outer");
  return snap(n, i, total, acc);
}

// Side effects in a loop body are masked to the lanes active in the iteration.
enum class Lane { InState, Captured, CapturedInitialState };
Snapshot histogram_loop(ControlMode mode, Lane how) {
  const size_t size = 1000;
  bool capture_lane = how != Lane::InState;
  UInt32 lane_initial = lanes_of(size);
  // Captured: an array the body reads from outside its state (a distinct node, so that
  // the evaluated loop's capture watch sees it); CapturedInitialState: the very node that
  // is also the initial state (a common pattern: reading the loop's input inside it).
  UInt32 lane_outside = how == Lane::Captured ? UInt32::from(host_range(size)) : lane_initial;
  UInt32 hist = zeros<UInt32>(16);
  Int64 weighted = Int64::from(std::vector<int64_t>(4, 5));
  auto [lane, i] = while_loop(
      std::tuple(lane_initial, lane_initial * 0u),
      [&](const UInt32& lane, const UInt32& i) { return i < (capture_lane ? lane_outside : lane) % 7u; },
      [&](const UInt32& lane_state, const UInt32& i) {
        const UInt32& lane = capture_lane ? lane_outside : lane_state;
        scatter_add(hist, UInt32(1u), (lane * 3u + i) % 16u);
        // An explicit mask on top of the loop's own: only even iterations.
        scatter_add(weighted, cast<int64_t>(lane) - 100, i % 4u, (i & 1u) == 0u);
        return std::tuple(lane_state, i + 1u);
      },
      mode, "histogram");
  return snap(hist, weighted, lane, i);
}

Snapshot histogram_expected() {
  const size_t size = 1000;
  std::vector<uint32_t> hist(16), i(size);
  std::vector<int64_t> weighted(4, 5);
  for (uint32_t l = 0; l < size; ++l) {
    for (uint32_t it = 0; it < l % 7; ++it) {
      hist[(l * 3 + it) % 16]++;
      if ((it & 1) == 0) weighted[it % 4] += int64_t(l) - 100;
    }
    i[l] = l % 7;
  }
  return {column(hist), column(weighted), column(host_range(size)), column(i)};
}

// Loops inside calls inside loops: each iteration dispatches to one of three instances,
// each of which runs a loop of its own.
Snapshot call_in_loop(ControlMode mode) {
  const size_t size = 700;
  static ControlMode current;
  current = mode;
  Affine a, b, c;
  a.mul = 3, a.add = 1, a.mode = &current;
  b.mul = 5, b.add = 7, b.mode = &current;
  c.mul = 1, c.add = 11, c.mode = &current;
  Registry<Stepper> registry;
  registry.add(&a), registry.add(&b), registry.add(&c);
  UInt32 lane0 = lanes_of(size);
  auto [lane, i, x] = while_loop(
      std::tuple(lane0, lane0 * 0u, lane0 + 1u),
      [](const UInt32& lane, const UInt32& i, const UInt32&) { return i < lane % 5u; },
      [&](const UInt32& lane, const UInt32& i, const UInt32& x) {
        UInt32 id = 1u + (lane + i) % 3u;
        UInt32 steps = (lane + i) % 4u;
        UInt32 next = dispatch(
            registry, id, [](Stepper& s, const UInt32& x, const UInt32& steps) { return s.advance(x, steps); },
            std::tuple(x, steps), mode, "step");
        return std::tuple(lane, i + 1u, next);
      },
      mode, "outer");
  return snap(lane, i, x);
}

Snapshot call_in_loop_expected() {
  const size_t size = 700;
  const uint32_t mul[] = {3, 5, 1}, add[] = {1, 7, 11};
  std::vector<uint32_t> i(size), x(size);
  for (uint32_t l = 0; l < size; ++l) {
    uint32_t v = l + 1;
    for (uint32_t it = 0; it < l % 5; ++it) {
      uint32_t k = (l + it) % 3, steps = (l + it) % 4;
      for (uint32_t s = 0; s < steps; ++s) v = v * mul[k] + add[k];
    }
    i[l] = l % 5;
    x[l] = v;
  }
  return {column(host_range(size)), column(i), column(x)};
}

// if_stmt in a loop body, with a side effect on one side only.
Snapshot if_in_loop(ControlMode mode) {
  const size_t size = 513;
  UInt32 lane0 = lanes_of(size);
  UInt32 hist = zeros<UInt32>(8);
  auto [lane, i, x] = while_loop(
      std::tuple(lane0, lane0 * 0u, cast<float>(lane0)),
      [](const UInt32& lane, const UInt32& i, const Float&) { return i < lane % 6u; },
      [&](const UInt32& lane, const UInt32& i, const Float& x) {
        Float y = if_stmt(((lane + i) & 1u) == 0u,
                          [&](const Float& x, const UInt32& lane) {
                            scatter_add(hist, lane * 0u + 1u, lane % 8u);
                            return x * 3.f;
                          },
                          [](const Float& x, const UInt32&) { return x + 7.f; }, std::tuple(x, lane), mode, "parity");
        return std::tuple(lane, i + 1u, y);
      },
      mode, "loop");
  return snap(lane, i, x, hist);
}

Snapshot if_in_loop_expected() {
  const size_t size = 513;
  std::vector<uint32_t> i(size), hist(8);
  std::vector<float> x(size);
  for (uint32_t l = 0; l < size; ++l) {
    float v = float(l);
    for (uint32_t it = 0; it < l % 6; ++it) {
      if (((l + it) & 1) == 0)
        v = v * 3.f, hist[l % 8]++;
      else
        v = v + 7.f;
    }
    i[l] = l % 6, x[l] = v;
  }
  return {column(host_range(size)), column(i), column(x), column(hist)};
}

// Conditionals at the top level with side effects on one side (and a tuple result).
Snapshot one_sided(ControlMode mode) {
  const size_t size = 777;
  UInt32 lane = lanes_of(size);
  Float x = cast<float>(lane) * 0.5f;
  UInt32 hist_true = zeros<UInt32>(8), hist_false = UInt32::from(std::vector<uint32_t>(8, 100));
  auto [y, z] = if_stmt(
      lane % 3u == 0u,
      [&](const Float& x, const UInt32& lane) {
        scatter_add(hist_true, lane * 0u + 1u, lane % 8u);
        return std::tuple(x * 2.f, lane + 100u);
      },
      [](const Float& x, const UInt32& lane) { return std::tuple(x + 1.f, lane * 2u); }, std::tuple(x, lane), mode,
      "one-sided");
  // The second one writes on the false side only, and under an extra mask.
  Float w = if_stmt(
      lane < 400u, [](const Float& x) { return -x; },
      [&](const Float& x) {
        UInt32 l = cast<uint32_t>(x * 2.f);
        scatter_add(hist_false, l * 0u + 1u, l % 8u, (l & 1u) == 1u);
        return x;
      },
      std::tuple(x), mode, "false-side");
  return snap(y, z, w, hist_true, hist_false);
}

Snapshot one_sided_expected() {
  const size_t size = 777;
  std::vector<float> y(size), w(size);
  std::vector<uint32_t> z(size), hist_true(8), hist_false(8, 100);
  for (uint32_t l = 0; l < size; ++l) {
    float x = float(l) * 0.5f;
    if (l % 3 == 0)
      y[l] = x * 2.f, z[l] = l + 100, hist_true[l % 8]++;
    else
      y[l] = x + 1.f, z[l] = l * 2;
    if (l < 400)
      w[l] = -x;
    else {
      w[l] = x;
      if (l & 1) hist_false[l % 8]++;
    }
  }
  return {column(y), column(z), column(w), column(hist_true), column(hist_false)};
}

// Branches that no lane (or every lane) takes.
Snapshot empty_branches(ControlMode mode) {
  const size_t size = 100;
  UInt32 lane = lanes_of(size);
  UInt32 hist = zeros<UInt32>(4);
  UInt32 all_true = if_stmt(
      lane < 1000u, [](const UInt32& l) { return l + 1u; },
      [&](const UInt32& l) {
        scatter_add(hist, l * 0u + 1u, l % 4u);
        return l * 0u + 77u;
      },
      std::tuple(lane), mode);
  UInt32 all_false = if_stmt(
      lane > 1000u,
      [&](const UInt32& l) {
        scatter_add(hist, l * 0u + 1u, l % 4u);
        return l * 0u + 77u;
      },
      [](const UInt32& l) { return l * 2u; }, std::tuple(lane), mode);
  return snap(all_true, all_false, hist);
}

Snapshot empty_branches_expected() {
  std::vector<uint32_t> a(100), b(100);
  for (uint32_t l = 0; l < 100; ++l) a[l] = l + 1, b[l] = 2 * l;
  return {column(a), column(b), column(std::vector<uint32_t>(4, 0))};
}

// A state variable the body never changes, next to ones it does.
Snapshot unchanged_state(ControlMode mode) {
  const size_t size = 300;
  UInt32 lane = lanes_of(size);
  Float k = cast<float>(lane) * 1.5f;
  auto [i, k_out, acc] = while_loop(
      std::tuple(lane * 0u, k, zeros<Float>(size)), [&](const UInt32& i, const Float&, const Float&) { return i < 4u; },
      [](const UInt32& i, const Float& k, const Float& acc) { return std::tuple(i + 1u, k, acc + k); }, mode,
      "unchanged");
  return snap(i, k_out, acc);
}

Snapshot unchanged_state_expected() {
  const size_t size = 300;
  std::vector<uint32_t> i(size, 4);
  std::vector<float> k(size), acc(size);
  for (uint32_t l = 0; l < size; ++l) {
    k[l] = float(l) * 1.5f;
    for (int it = 0; it < 4; ++it) acc[l] += k[l];
  }
  return {column(i), column(k), column(acc)};
}

// The condition is false for every lane from the start: state unchanged, no side effect.
Snapshot false_from_start(ControlMode mode) {
  const size_t size = 64;
  UInt32 lane0 = lanes_of(size);
  UInt32 hist = zeros<UInt32>(4);
  auto [lane, x] = while_loop(
      std::tuple(lane0, cast<float>(lane0)), [](const UInt32& lane, const Float&) { return lane > 5000u; },
      [&](const UInt32& lane, const Float& x) {
        scatter_add(hist, lane * 0u + 1u, lane % 4u);
        return std::tuple(lane + 1u, x * 2.f);
      },
      mode, "never");
  return snap(lane, x, hist);
}

Snapshot false_from_start_expected() {
  std::vector<float> x(64);
  for (uint32_t l = 0; l < 64; ++l) x[l] = float(l);
  return {column(host_range(64)), column(x), column(std::vector<uint32_t>(4, 0))};
}

// Zero-size arrays through every construct.
Snapshot zero_size(ControlMode mode) {
  UInt32 lane = lanes_of(0);
  Float x = zeros<Float>(0);
  auto [i, acc] = while_loop(
      std::tuple(lane, x), [](const UInt32& i, const Float&) { return i < 3u; },
      [](const UInt32& i, const Float& acc) { return std::tuple(i + 1u, acc + 1.f); }, mode, "empty");
  Float y = if_stmt(
      lane < 1u, [](const Float& x) { return x + 1.f; }, [](const Float& x) { return x - 1.f; }, std::tuple(x), mode);
  Scaled one;
  Registry<Material> registry;
  registry.add(&one);
  auto [d, e] = dispatch(
      registry, lane, [](Material& m, const Float& x, const UInt32& l) { return m.shade(x, l); }, std::tuple(x, lane),
      mode);
  Recorder<UInt32> rec(4);
  rec.append(Bool(true), lane);
  EXPECT_EQ(rec.count(), 0u);
  return snap(i, acc, y, d, e, rec.field<0>());
}

// Vectors and a PCG32 in the loop state; reference: the same draws unrolled with masks.
Snapshot vector_rng(ControlMode mode) {
  const size_t size = 500;
  UInt32 lane = lanes_of(size);
  Array3f p(cast<float>(lane), zeros<Float>(size), Float(1.f) + zeros<Float>(size));
  PCG32 rng(size);
  auto [p_out, rng_out, i, t] = while_loop(
      std::tuple(p, rng, lane * 0u, lane % 6u),
      [](const Array3f&, const PCG32&, const UInt32& i, const UInt32& t) { return i < t; },
      [](const Array3f& p, const PCG32& rng_in, const UInt32& i, const UInt32& t) {
        PCG32 rng = rng_in;
        Float dx = rng.next_float32();
        Float dy = rng.next_float32();
        Float dz = rng.next_float32();
        Array3f q(p.y + dx, p.z * dy, p.x - dz);
        return std::tuple(q, rng, i + 1u, t);
      },
      mode, "walk");
  return snap(p_out, rng_out, i, t);
}

Snapshot vector_rng_expected() {
  const size_t size = 500;
  UInt32 lane = lanes_of(size);
  Array3f p(cast<float>(lane), zeros<Float>(size), Float(1.f) + zeros<Float>(size));
  PCG32 rng(size);
  UInt32 t = lane % 6u, i = lane * 0u;
  for (uint32_t it = 0; it < 6; ++it) {
    Bool active = i < t;
    Float dx = rng.next_float32(active);
    Float dy = rng.next_float32(active);
    Float dz = rng.next_float32(active);
    Array3f q(p.y + dx, p.z * dy, p.x - dz);
    p = Array3f(select(active, q.x, p.x), select(active, q.y, p.y), select(active, q.z, p.z));
    i = select(active, i + 1u, i);
  }
  return snap(p, rng, i, t);
}

// Dispatch over `count` instances, with null ids: 0, a removed instance, ids beyond the
// registry and 0xffffffff. Null lanes get zeros and no side effects.
Snapshot dispatch_case(ControlMode mode, uint32_t count) {
  const size_t size = 1000;
  UInt32 counts = zeros<UInt32>(count);
  std::vector<Scaled> instances(count);
  Registry<Material> registry;
  for (uint32_t k = 0; k < count; ++k) {
    instances[k].k = k + 1;
    instances[k].counts = &counts;
    EXPECT_EQ(registry.add(&instances[k]), k + 1);
  }
  if (count >= 3) registry.remove(2);
  UInt32 lane = lanes_of(size);
  UInt32 ids = select(lane % 97u == 96u, UInt32(0xffffffffu), lane % (count + 3u));
  Float x = cast<float>(lane);
  auto [y, z] = dispatch(
      registry, ids, [](Material& m, const Float& x, const UInt32& lane) { return m.shade(x, lane); },
      std::tuple(x, lane), mode, "materials");
  return snap(y, z, counts);
}

Snapshot dispatch_expected(uint32_t count) {
  const size_t size = 1000;
  std::vector<float> y(size);
  std::vector<uint32_t> z(size), counts(count);
  for (uint32_t l = 0; l < size; ++l) {
    uint32_t id = l % 97 == 96 ? 0xffffffffu : l % (count + 3);
    bool valid = id >= 1 && id <= count && !(count >= 3 && id == 2);
    if (!valid) continue;
    y[l] = float(l) * float(id) + 0.5f;
    z[l] = l * id;
    counts[id - 1]++;
  }
  return {column(y), column(z), column(counts)};
}

// Float work of many iterations on many lanes (symbolic vs evaluated, bit for bit).
Snapshot many_lanes(ControlMode mode) {
  const size_t size = 100000;
  UInt32 lane = lanes_of(size);
  auto [i, x, y] = while_loop(
      std::tuple(lane * 0u, cast<float>(lane) * 1e-3f, Float64(0.5) + zeros<Float64>(size)),
      [&](const UInt32& i, const Float& x, const Float64&) { return (i < lane % 37u) & (x < 1e6f); },
      [](const UInt32& i, const Float& x, const Float64& y) {
        return std::tuple(i + 1u, fma(x, Float(1.37f), Float(0.25f)) / (1.f + cast<float>(i)), y * 1.5 + sqrt(y));
      },
      mode, "many");
  return snap(i, x, y);
}

// Every id null: zeros, no side effects.
Snapshot dispatch_all_null(ControlMode mode) {
  UInt32 counts = zeros<UInt32>(2);
  Scaled one, two;
  one.k = 1, two.k = 2, one.counts = two.counts = &counts;
  Registry<Material> registry;
  registry.add(&one), registry.add(&two);
  registry.remove(2);
  UInt32 lane = lanes_of(40);
  UInt32 ids = select(lane < 20u, UInt32(0u), select(lane < 30u, UInt32(2u), UInt32(3u) + lane));
  auto [y, z] = dispatch(
      registry, ids, [](Material& m, const Float& x, const UInt32& l) { return m.shade(x, l); },
      std::tuple(cast<float>(lane) + 1.f, lane + 1u), mode);
  return snap(y, z, counts);
}

// The loop's results are evaluated one at a time, or not at all: the loop (and its side
// effects) runs exactly once.
Snapshot loop_runs_once(ControlMode mode) {
  const size_t size = 90;
  UInt32 lane0 = lanes_of(size);
  UInt32 hist = zeros<UInt32>(3), only_effects = zeros<UInt32>(3);
  auto [lane, i, acc] = while_loop(
      std::tuple(lane0, lane0 * 0u, lane0 * 2u),
      [](const UInt32& l, const UInt32& i, const UInt32&) { return i < l % 4u; },
      [&](const UInt32& l, const UInt32& i, const UInt32& acc) {
        scatter_add(hist, l * 0u + 1u, l % 3u);
        return std::tuple(l, i + 1u, acc + i);
      },
      mode, "once");
  Snapshot a = snap(i);
  Snapshot b = snap(acc);
  // A loop whose results are dropped at once: only its side effect remains.
  while_loop(
      std::tuple(lane0, lane0 * 0u), [](const UInt32& l, const UInt32& i) { return i < l % 4u; },
      [&](const UInt32& l, const UInt32& i) {
        scatter_add(only_effects, l * 0u + 1u, l % 3u);
        return std::tuple(l, i + 1u);
      },
      mode, "effects only");
  Snapshot c = snap(hist, only_effects);
  a.insert(a.end(), b.begin(), b.end());
  a.insert(a.end(), c.begin(), c.end());
  return a;
}

Snapshot loop_runs_once_expected() {
  std::vector<uint32_t> i(90), acc(90), hist(3);
  for (uint32_t l = 0; l < 90; ++l) {
    i[l] = l % 4, acc[l] = 2 * l;
    for (uint32_t it = 0; it < l % 4; ++it) acc[l] += it, hist[l % 3]++;
  }
  return {column(i), column(acc), column(hist), column(hist)};
}

std::vector<ControlCase> control_cases() {
  std::vector<ControlCase> cases = {
      {"NestedLoopsPerLaneTripCounts", [](ControlMode m) { return nested_loops(m, false, 1003); },
       [] { return nested_loops_expected(1003); }},
      {"NestedLoopsOneLane", [](ControlMode m) { return nested_loops(m, false, 1); },
       [] { return nested_loops_expected(1); }},
      {"NestedLoopsInnerSymbolic", [](ControlMode m) { return nested_loops(m, true, 1003); },
       [] { return nested_loops_expected(1003); }},
      {"NestedLoopsCapturingBounds", nested_loops_capturing,
       [] {
         Snapshot e = nested_loops_expected(1003);
         return Snapshot{e[0], e[1], e[2], e[3]};
       }},
      {"ScatterAddHistogramInLoop", [](ControlMode m) { return histogram_loop(m, Lane::InState); }, histogram_expected},
      {"ScatterAddHistogramInLoopCapturing", [](ControlMode m) { return histogram_loop(m, Lane::Captured); },
       histogram_expected},
      {"LoopBodyCapturesItsInitialState", [](ControlMode m) { return histogram_loop(m, Lane::CapturedInitialState); },
       histogram_expected},
      {"LoopsInsideCallsInsideLoops", call_in_loop, call_in_loop_expected},
      {"ConditionalInLoopOneSidedScatter", if_in_loop, if_in_loop_expected},
      {"ConditionalsOneSidedSideEffects", one_sided, one_sided_expected},
      {"ConditionalsEmptyBranches", empty_branches, empty_branches_expected},
      {"UnchangedStateVariable", unchanged_state, unchanged_state_expected},
      {"ConditionFalseFromStart", false_from_start, false_from_start_expected},
      {"ZeroSizeArrays", zero_size,
       [] {
         Snapshot e;
         for (VarType t :
              {VarType::UInt32, VarType::Float32, VarType::Float32, VarType::Float32, VarType::UInt32, VarType::UInt32})
           e.push_back({t, {}});
         return e;
       }},
      {"VectorAndRngState", vector_rng, vector_rng_expected},
      {"Dispatch1Instance", [](ControlMode m) { return dispatch_case(m, 1); }, [] { return dispatch_expected(1); }},
      {"Dispatch3Instances", [](ControlMode m) { return dispatch_case(m, 3); }, [] { return dispatch_expected(3); }},
      {"Dispatch50Instances", [](ControlMode m) { return dispatch_case(m, 50); }, [] { return dispatch_expected(50); }},
      {"DispatchAllIdsNull", dispatch_all_null,
       [] {
         return Snapshot{column(std::vector<float>(40, 0.f)), column(std::vector<uint32_t>(40, 0)),
                         column(std::vector<uint32_t>(2, 0))};
       }},
      {"LoopRunsOnce", loop_runs_once, loop_runs_once_expected},
  };
  return cases;
}

void PrintTo(const ControlCase& c, std::ostream* out) { *out << c.name; }

class ControlCases : public testing::TestWithParam<ControlCase> {};

}  // namespace

TEST_P(ControlCases, AllModesAndBackendsAgree) { check_runs(GetParam().run, GetParam().expected); }

INSTANTIATE_TEST_SUITE_P(Control, ControlCases, testing::ValuesIn(control_cases()),
                         [](const testing::TestParamInfo<ControlCase>& info) { return info.param.name; });

TEST(Control, SmokeLoop) {
  for (ControlMode mode : kModes) {
    UInt32 n = arange<UInt32>(10);
    auto [i, acc] = while_loop(
        std::tuple(UInt32(0u) + zeros<UInt32>(10), Float(0.f) + zeros<Float>(10)),
        [&](const UInt32& i, const Float&) { return i < n; },
        [](const UInt32& i, const Float& acc) { return std::tuple(i + 1u, acc + cast<float>(i)); }, mode);
    for (uint32_t k = 0; k < 10; ++k) {
      EXPECT_EQ(i.read(k), k);
      EXPECT_EQ(acc.read(k), float(k * (k - 1) / 2)) << k;
    }
  }
}

// A struct that lists its members with fields() is loop state member by member (nested
// structs, vectors and pairs included), in both modes.
struct Particle {
  Array2f position;
  struct Tag {
    UInt32 bounces;
    auto fields() { return std::tie(bounces); }
    auto fields() const { return std::tie(bounces); }
  } tag;
  std::pair<Float, UInt32> history;
  auto fields() { return std::tie(position, tag, history); }
  auto fields() const { return std::tie(position, tag, history); }
};

TEST(Control, StructsWithFieldsAreState) {
  for (ControlMode mode : kModes) {
    Particle start;
    start.position = Array2f(cast<float>(lanes_of(4)), zeros<Float>(4));
    start.tag.bounces = zeros<UInt32>(4);
    start.history = {zeros<Float>(4), lanes_of(4)};
    auto [end] = while_loop(
        std::tuple(start), [](const Particle& p) { return p.tag.bounces < 3u; },
        [](const Particle& p) {
          Particle next = p;
          next.position.y = p.position.y + p.position.x;
          next.tag.bounces = p.tag.bounces + 1u;
          next.history = {p.history.first + 0.5f, p.history.second * 2u};
          return std::tuple(next);
        },
        mode);
    for (uint32_t k = 0; k < 4; ++k) {
      EXPECT_EQ(end.tag.bounces.read(k), 3u);
      EXPECT_EQ(end.position.y.read(k), 3.0f * float(k));
      EXPECT_EQ(end.position.x.read(k), float(k));
      EXPECT_EQ(end.history.first.read(k), 1.5f);
      EXPECT_EQ(end.history.second.read(k), 8u * k);
    }
  }
}

// Many lanes, long float chains: the JIT in both modes, bit for bit (no interpreter: slow).
TEST(Control, ManyLanesSymbolicMatchesEvaluated) {
  Snapshot symbolic = many_lanes(ControlMode::Symbolic), evaluated = many_lanes(ControlMode::Evaluated);
  std::string diff = differences(evaluated, symbolic);
  EXPECT_TRUE(diff.empty()) << diff;
}

// The result of a state variable the body does not change is the initial value itself
// (not carried through the loop).
TEST(Control, UnchangedStateIsNotCarried) {
  UInt32 lane = lanes_of(50);
  Float k = cast<float>(lane) + 0.5f;
  eval(k);
  auto [i, k_out] = while_loop(
      std::tuple(lane * 0u, k), [](const UInt32& i, const Float&) { return i < 3u; },
      [](const UInt32& i, const Float& k) { return std::tuple(i + 1u, k); }, ControlMode::Symbolic);
  EXPECT_EQ(k_out.index(), k.index());
  EXPECT_EQ(i.read(7), 3u);
}

// With a null mode, Flag::Symbolic decides (default on): symbolic bodies cannot be read,
// evaluated ones can.
TEST(Control, GlobalDefaultMode) {
  if (!std::getenv("KILN_SYMBOLIC")) EXPECT_TRUE(flag(Flag::Symbolic));
  bool before = flag(Flag::Symbolic);
  auto run = [] {
    UInt32 lane = lanes_of(20);
    uint32_t seen = 0;
    auto [i] = while_loop(
        std::tuple(lane * 0u), [](const UInt32& i) { return i < 5u; },
        [&](const UInt32& i) {
          seen = i.read(0);  // allowed only in evaluated mode
          return std::tuple(i + 1u);
        });
    EXPECT_EQ(i.read(3), 5u);
    return seen;
  };
  set_flag(Flag::Symbolic, false);
  kernel_history(true);
  EXPECT_NO_THROW(EXPECT_EQ(run(), 4u));
  EXPECT_GE(kernel_history().size(), 5u) << "evaluated: one kernel per iteration";
  set_flag(Flag::Symbolic, true);
  EXPECT_THROW(run(), ValueError);
  // A symbolic loop without reads is a single kernel.
  kernel_history(true);
  UInt32 lane = lanes_of(20);
  auto [j] = while_loop(
      std::tuple(lane * 0u), [](const UInt32& j) { return j < 5u; },
      [](const UInt32& j) { return std::tuple(j + 1u); });
  EXPECT_EQ(j.read(19), 5u);
  EXPECT_EQ(kernel_history().size(), 1u);
  set_flag(Flag::Symbolic, before);
}

// Evaluated bodies are ordinary host code: they may evaluate and read their values.
TEST(Control, EvaluatedBodyMayEvaluate) {
  UInt32 lane = lanes_of(40);
  std::vector<uint32_t> sums;
  auto [i] = while_loop(
      std::tuple(lane * 0u), [&](const UInt32& i) { return i < lane % 4u; },
      [&](const UInt32& i) {
        sums.push_back(sum(i + 1u).item());
        return std::tuple(i + 1u);
      },
      ControlMode::Evaluated);
  EXPECT_EQ(i.read(39), 3u);
  ASSERT_EQ(sums.size(), 3u);  // three iterations, each could evaluate (lanes seen: unspecified)
}

// A scatter whose operands are all size 1 inside a loop body or a branch: like every
// statement there it runs once per active lane (as symbolic loops do), the same in both
// modes.
TEST(Control, ScalarScatterRunsPerActiveLane) {
  for (ControlMode mode : kModes) {
    SCOPED_TRACE(mode_name(mode));
    UInt64 in_loop = zeros<UInt64>(1), in_if = zeros<UInt64>(1), in_call = zeros<UInt64>(1);
    UInt32 lane = lanes_of(10);
    UInt32 trip = lane % 4u;  // 13 iterations in all
    auto [i] = while_loop(
        std::tuple(trip * 0u), [&](const UInt32& i) { return i < trip; },
        [&](const UInt32& i) {
          scatter_add(in_loop, UInt64(1ull), UInt32(0u));
          return std::tuple(i + 1u);
        },
        mode);
    eval(i);
    EXPECT_EQ(in_loop.read(0), 13u) << "in a loop body";
    UInt32 r = if_stmt(
        lane < 4u,
        [&](const UInt32& x) {
          scatter_add(in_if, UInt64(1ull), UInt32(0u));
          return x;
        },
        [](const UInt32& x) { return x; }, std::tuple(lane), mode);
    eval(r);
    EXPECT_EQ(in_if.read(0), 4u) << "in a branch";
    struct Counter : Material {
      UInt64* target;
      std::tuple<Float, UInt32> shade(const Float& x, const UInt32& l) override {
        scatter_add(*target, UInt64(1ull), UInt32(0u));
        return {x, l};
      }
    } counter;
    counter.target = &in_call;
    Registry<Material> registry;
    registry.add(&counter);
    auto [y, z] = dispatch(
        registry, lane % 2u, [](Material& m, const Float& x, const UInt32& l) { return m.shade(x, l); },
        std::tuple(cast<float>(lane), lane), mode);
    eval(y, z);
    EXPECT_EQ(in_call.read(0), 5u) << "in a call";
  }
}

// A body that makes a new per-lane array of the loop's size (not captured from outside,
// not in the state) works in both modes alike.
TEST(Control, BodyCreatesFullSizeArray) {
  const size_t size = 64;
  std::map<ControlMode, std::vector<float>> results;
  for (ControlMode mode : kModes) {
    SCOPED_TRACE(mode_name(mode));
    UInt32 lane = lanes_of(size);
    try {
      auto [i, acc] = while_loop(
          std::tuple(lane % 8u, zeros<Float>(size)), [](const UInt32& i, const Float&) { return i < 7u; },
          [&](const UInt32& i, const Float& acc) {
            return std::tuple(i + 1u, acc + cast<float>(arange<UInt32>(size)) * 0.f + 1.f);
          },
          mode, "fresh");
      results[mode] = acc.to_vector();
    } catch (const std::exception& e) {
      ADD_FAILURE() << "threw: " << e.what();
    }
  }
  EXPECT_EQ(results[ControlMode::Symbolic], results[ControlMode::Evaluated]);
  if (!results[ControlMode::Symbolic].empty()) EXPECT_EQ(results[ControlMode::Symbolic][1], 6.f);
}

// ---- names and literals never change a kernel's identity ------------------------------------

namespace {

Snapshot named_program(ControlMode mode, const std::string& name, float scale, uint32_t bound) {
  std::vector<uint32_t> host(333);
  for (uint32_t l = 0; l < host.size(); ++l) host[l] = l * 7 % 11;
  UInt32 n = UInt32::from(host);
  Float x = cast<float>(n);
  auto [i, acc] = while_loop(
      std::tuple(n * 0u, x), [&](const UInt32& i, const Float&) { return i < n % bound; },
      [&](const UInt32& i, const Float& acc) { return std::tuple(i + 1u, acc * scale + 1.f); }, mode, name);
  Float y = if_stmt(
      acc > 3.f, [&](const Float& a) { return a * scale; }, [](const Float& a) { return a - 1.f; }, std::tuple(acc),
      mode, name + "-if");
  Scaled one, two;
  one.k = 1, two.k = 2;
  Registry<Material> registry;
  registry.add(&one), registry.add(&two);
  auto [d, e] = dispatch(
      registry, n % 3u, [](Material& m, const Float& x, const UInt32& l) { return m.shade(x, l); }, std::tuple(y, n),
      mode, name + "-call");
  return snap(i, acc, y, d, e);
}

}  // namespace

TEST(Control, NamesNeverChangeKernelIdentity) {
  for (ControlMode mode : kModes) {
    SCOPED_TRACE(mode_name(mode));
    Snapshot first = named_program(mode, "first", 2.f, 5);
    size_t compiles = cache_stats().compiles, hits = cache_stats().memory_hits;
    kernel_history(true);
    Snapshot second = named_program(mode, "renamed", 2.f, 5);
    EXPECT_EQ(cache_stats().compiles, compiles) << "renaming compiled a kernel";
    EXPECT_GT(cache_stats().memory_hits, hits);
    for (const KernelLaunch& launch : kernel_history()) EXPECT_EQ(launch.source, KernelSource::Memory) << launch.reason;
    EXPECT_TRUE(differences(second, first).empty());
  }
}

TEST(Control, LiteralsInBodiesGeneralize) {
  // In memory only: kernels and shape records another process stored (or evicted, under
  // the disk cache's size limit) while this test ran made its compile count flaky.
  test::FlagScope memory_only(Flag::DiskCache, false);
  for (ControlMode mode : kModes) {
    SCOPED_TRACE(mode_name(mode));
    flush_kernel_cache();
    named_program(mode, "loop", 2.f, 5);
    named_program(mode, "loop", 3.f, 6);
    size_t compiles = cache_stats().compiles;
    kernel_history(true);
    Snapshot third = named_program(mode, "loop", 4.f, 7);
    EXPECT_EQ(cache_stats().compiles, compiles) << "the third variant compiled a kernel";
    for (const KernelLaunch& launch : kernel_history())
      EXPECT_NE(launch.source, KernelSource::Compiled) << launch.reason;
    // The generic kernels compute the right thing.
    Snapshot reference = run_on(true, [&] { return named_program(mode, "loop", 4.f, 7); });
    EXPECT_TRUE(differences(third, reference).empty()) << differences(third, reference);
  }
}
