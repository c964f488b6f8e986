// Loops, branches and calls that index arrays. A buffer the body reads with gathers or
// writes with scatters is used from the enclosing scope (captured): then every mode gives
// the host reference, whatever lanes are active or compacted. Loop state and function
// arguments are per lane (carried lane by lane symbolically, compacted when evaluated), so
// indexing one raises the same error in every mode and on both backends, naming the
// statement and the position; it used to read and write the wrong memory when evaluated.
#include "control_test_support.h"

using namespace kiln;

namespace {

constexpr size_t kLanes = 37;  // not a multiple of any packet width
constexpr uint32_t kTrips = 11;

/// Lane l runs max(0, kTrips - l) iterations; each scatters one count into slot (5 l) % 16.
Snapshot scatter_into_captured(ControlMode mode) {
  UInt32 slots = zeros<UInt32>(16);
  UInt32 lane = lanes_of(kLanes);
  auto [i] = while_loop(
      std::tuple(lane), [](const UInt32& i) { return i < kTrips; },
      [&](const UInt32& i) {
        scatter_add(slots, UInt32(1u), (lane * 5u) % 16u);
        return std::tuple(i + 1u);
      },
      mode, "counts");
  return snap(slots, i);
}

Snapshot scatter_into_captured_expected() {
  std::vector<uint32_t> slots(16), i(kLanes);
  for (uint32_t l = 0; l < kLanes; ++l) {
    for (uint32_t it = l; it < kTrips; ++it) slots[(l * 5) % 16]++;
    i[l] = std::max(l, kTrips);
  }
  return {column(slots), column(i)};
}

/// Each lane sums the captured table at indices other lanes own, while lanes finish at
/// different iterations (so the evaluated loop compacts).
Snapshot gather_from_captured(ControlMode mode) {
  UInt32 table = lanes_of(kLanes) * 3u + 1u;
  UInt32 lane = lanes_of(kLanes);
  auto [i, acc] = while_loop(
      std::tuple(lane * 0u, lane * 0u), [&](const UInt32& i, const UInt32&) { return i < lane % 7u; },
      [&](const UInt32& i, const UInt32& acc) {
        return std::tuple(i + 1u, acc + gather(table, (lane * 11u + i) % uint32_t(kLanes)));
      },
      mode, "sums");
  return snap(acc, i);
}

Snapshot gather_from_captured_expected() {
  std::vector<uint32_t> acc(kLanes), i(kLanes);
  for (uint32_t l = 0; l < kLanes; ++l) {
    for (uint32_t it = 0; it < l % 7; ++it) acc[l] += ((l * 11 + it) % kLanes) * 3 + 1;
    i[l] = l % 7;
  }
  return {column(acc), column(i)};
}

/// A branch taken by a few lanes reads a captured table at other lanes' indices.
Snapshot branch_gathers_captured(ControlMode mode) {
  Float table = cast<float>(lanes_of(kLanes)) * 10.f;
  UInt32 lane = lanes_of(kLanes);
  Float r = if_stmt(
      lane % 5u == 1u, [&](const UInt32& l) { return gather(table, uint32_t(kLanes) - 1u - l); },
      [](const UInt32& l) { return cast<float>(l) * 0.f - 1.f; }, std::tuple(lane), mode, "mirror");
  return snap(r);
}

Snapshot branch_gathers_captured_expected() {
  std::vector<float> r(kLanes);
  for (uint32_t l = 0; l < kLanes; ++l) r[l] = l % 5 == 1 ? float(kLanes - 1 - l) * 10.f : -1.f;
  return {column(r)};
}

/// Captured buffers that are also inputs (a one-lane argument passes to an evaluated branch
/// as it is): indexing the captured array is not indexing the input.
Snapshot captured_equal_to_inputs(ControlMode mode) {
  UInt32 hist = zeros<UInt32>(kLanes), counter = zeros<UInt32>(1);
  UInt32 lane = lanes_of(kLanes);
  auto [i] = while_loop(
      std::tuple(zeros<UInt32>(kLanes)), [&](const UInt32& i) { return i < lane % 5u; },
      [&](const UInt32& i) {
        scatter_add(hist, UInt32(1u), (lane + i) % uint32_t(kLanes));
        return std::tuple(i + 1u);
      },
      mode, "equal");
  UInt32 r = if_stmt(
      lane < 7u,
      [&](const UInt32& l, const UInt32& start) {
        scatter_inc(counter, UInt32(0u));
        return l + start;
      },
      [](const UInt32& l, const UInt32&) { return l * 2u; }, std::tuple(lane, counter), mode);
  return snap(hist, i, counter, r);
}

Snapshot captured_equal_to_inputs_expected() {
  std::vector<uint32_t> hist(kLanes), i(kLanes), r(kLanes);
  for (uint32_t l = 0; l < kLanes; ++l) {
    for (uint32_t it = 0; it < l % 5; ++it) hist[(l + it) % kLanes]++;
    i[l] = l % 5;
    r[l] = l < 7 ? l : 2 * l;
  }
  return {column(hist), column(i), column(std::vector<uint32_t>{7}), column(r)};
}

struct BufferCase {
  std::string name;
  std::function<Snapshot(ControlMode)> run;
  std::function<Snapshot()> expected;
};

void PrintTo(const BufferCase& c, std::ostream* out) { *out << c.name; }

class CapturedBuffers : public testing::TestWithParam<BufferCase> {};

TEST_P(CapturedBuffers, AllModesAndBackendsMatchTheHost) { check_runs(GetParam().run, GetParam().expected); }

INSTANTIATE_TEST_SUITE_P(
    Control, CapturedBuffers,
    testing::Values(BufferCase{"ScatterFromALoop", scatter_into_captured, scatter_into_captured_expected},
                    BufferCase{"GatherInACompactingLoop", gather_from_captured, gather_from_captured_expected},
                    BufferCase{"GatherInABranch", branch_gathers_captured, branch_gathers_captured_expected},
                    BufferCase{"CapturedArraysEqualToInputs", captured_equal_to_inputs,
                               captured_equal_to_inputs_expected}),
    [](const auto& info) { return info.param.name; });

// ---- indexing per-lane state or arguments -------------------------------------------------

struct Misuse {
  std::string name;
  std::function<void(ControlMode)> run;
  std::vector<std::string> expected;  ///< parts of the message
};

std::vector<Misuse> misuses() {
  const char* state_hint = "instead of passing it as state";
  const char* argument_hint = "instead of passing it as an argument";
  return {
      {"ScatterIntoLoopState",
       [](ControlMode mode) {
         UInt32 lane = lanes_of(kLanes);
         while_loop(
             std::tuple(lane, zeros<UInt32>(kLanes)), [](const UInt32& i, const UInt32&) { return i < kTrips; },
             [](const UInt32& i, const UInt32& buf) {
               UInt32 b = buf;
               scatter_add(b, UInt32(1u), (i * 5u) % 16u);
               return std::tuple(i + 1u, b);
             },
             mode, "counts");
       },
       {"while_loop('counts')", "scatters into state[1]", state_hint}},
      {"GatherFromLoopStateInTheCondition",
       [](ControlMode mode) {
         UInt32 lane = lanes_of(kLanes);
         while_loop(
             std::tuple(lane * 0u, lane), [](const UInt32& i, const UInt32& t) { return i < gather(t, i); },
             [](const UInt32& i, const UInt32& t) { return std::tuple(i + 1u, t); }, mode);
       },
       {"while_loop()", "gathers from state[1]", state_hint}},
      {"CounterInLoopState",
       [](ControlMode mode) {
         UInt32 lane = lanes_of(kLanes);
         while_loop(
             std::tuple(lane, UInt32(0u)), [](const UInt32& i, const UInt32&) { return i < kTrips; },
             [](const UInt32& i, const UInt32& counter) {
               UInt32 c = counter;
               scatter_inc(c, UInt32(0u));
               return std::tuple(i + 1u, c);
             },
             mode, "queue");
       },
       {"while_loop('queue')", "scatters into state[1]", state_hint}},
      {"GatherFromLoopStateInANestedBranch",
       [](ControlMode mode) {
         UInt32 lane = lanes_of(kLanes);
         while_loop(
             std::tuple(lane * 0u, lane), [](const UInt32& i, const UInt32&) { return i < 3u; },
             [mode](const UInt32& i, const UInt32& t) {
               UInt32 r = if_stmt((i & 1u) == 0u, [&](const UInt32& i) { return gather(t, i); },
                                  [](const UInt32& i) { return i; }, std::tuple(i), mode);
               return std::tuple(i + 1u, r);
             },
             mode, "outer");
       },
       {"while_loop('outer')", "gathers from state[1]", state_hint}},
      {"GatherFromABranchArgument",
       [](ControlMode mode) {
         Float table = cast<float>(lanes_of(kLanes)) * 10.f;
         UInt32 lane = lanes_of(kLanes);
         if_stmt(
             lane % 5u == 1u, [](const Float& t, const UInt32& l) { return gather(t, uint32_t(kLanes) - 1u - l); },
             [](const Float& t, const UInt32&) { return t; }, std::tuple(table, lane), mode, "mirror");
       },
       {"if_stmt('mirror')", "a function gathers from args[0]", argument_hint}},
      {"ScatterIntoADispatchArgument",
       [](ControlMode mode) {
         Scaled one;
         Registry<Material> registry;
         registry.add(&one);
         UInt32 lane = lanes_of(kLanes);
         dispatch(
             registry, lane % 2u,
             [](Material&, const UInt32& l, const UInt32& counts) {
               UInt32 c = counts;
               scatter_add(c, UInt32(1u), l % 4u);
               return l;
             },
             std::tuple(lane, zeros<UInt32>(kLanes)), mode, "shade");
       },
       {"dispatch('shade')", "a function scatters into args[1]", argument_hint}},
  };
}

void PrintTo(const Misuse& m, std::ostream* out) { *out << m.name; }

class IndexedInputs : public testing::TestWithParam<Misuse> {};

TEST_P(IndexedInputs, RaiseTheSameErrorInEveryModeAndBackend) {
  const Misuse& misuse = GetParam();
  std::string first;
  for (const ModeRun& run : kModeRuns) {
    SCOPED_TRACE(run.name);
    std::string message = "NO EXCEPTION";
    try {
      run_on(run.interpreter, [&] {
        misuse.run(run.mode);
        return 0;
      });
    } catch (const ValueError& e) {
      message = e.what();
    } catch (const std::exception& e) {
      message = std::string("WRONG EXCEPTION TYPE: ") + e.what();
    }
    for (const std::string& part : misuse.expected) EXPECT_NE(message.find(part), std::string::npos) << message;
    if (first.empty()) first = message;
    EXPECT_EQ(message, first) << "the modes disagree";
  }
  // Nothing was left behind: loops with side effects still run in both modes.
  for (ControlMode mode : kModes)
    EXPECT_EQ(scatter_into_captured(mode)[0].lanes, scatter_into_captured_expected()[0].lanes);
}

INSTANTIATE_TEST_SUITE_P(Control, IndexedInputs, testing::ValuesIn(misuses()),
                         [](const auto& info) { return info.param.name; });

// A buffer of another size passed as state or as an argument: the size error says to use it
// from the enclosing scope (in every mode: the sizes are checked before anything runs).
TEST(Control, BufferOfAnotherSizeAsInputNamesTheFix) {
  for (const ModeRun& run : kModeRuns) {
    SCOPED_TRACE(run.name);
    UInt32 lane = lanes_of(kLanes);
    auto loop = [&] {
      while_loop(
          std::tuple(lane, zeros<UInt32>(16)), [](const UInt32& i, const UInt32&) { return i < kTrips; },
          [](const UInt32& i, const UInt32& buf) { return std::tuple(i + 1u, buf); }, run.mode, "fill");
    };
    auto branch = [&] {
      if_stmt(
          lane < 3u, [](const UInt32& l, const Float&) { return l; }, [](const UInt32& l, const Float&) { return l; },
          std::tuple(lane, zeros<Float>(5)), run.mode);
    };
    for (const auto& statement : {std::function<void()>(loop), std::function<void()>(branch)}) {
      std::string message = "NO EXCEPTION";
      try {
        run_on(run.interpreter, [&] {
          statement();
          return 0;
        });
      } catch (const SizeError& e) {
        message = e.what();
      }
      EXPECT_NE(message.find("used from the enclosing scope"), std::string::npos) << message;
    }
  }
}

}  // namespace
