// Recorder and print_async: exact records out of loops, branches and calls in both modes,
// the overflow error, zero-copy fields, and per-lane printing order.
#include "control_test_support.h"

using namespace kiln;

// ---- Recorder -----------------------------------------------------------------------------

namespace {

struct Triple {
  uint32_t lane, iteration;
  float value;
  bool operator<(const Triple& o) const { return std::tie(lane, iteration) < std::tie(o.lane, o.iteration); }
  bool operator==(const Triple& o) const {
    return lane == o.lane && iteration == o.iteration && test::bits_of(value) == test::bits_of(o.value);
  }
};

std::vector<Triple> sorted_records(const Recorder<UInt32, UInt32, Float>& rec) {
  UInt32 lane = rec.field<0>(), it = rec.field<1>();
  Float value = rec.field<2>();
  std::vector<Triple> out;
  for (size_t r = 0; r < rec.count(); ++r) out.push_back({lane.read(r), it.read(r), value.read(r)});
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST(Control, RecorderRecordsEveryIterationOfEveryLane) {
  const size_t size = 300;
  std::vector<Triple> expected, expected_even;
  for (uint32_t l = 0; l < size; ++l)
    for (uint32_t it = 0; it < l % 5; ++it) {
      Triple t{l, it, float(l * 10 + it) * 0.5f};
      expected.push_back(t);
      if (it % 2 == 0) expected_even.push_back(t);
    }
  for (const ModeRun& run : kModeRuns) {
    SCOPED_TRACE(run.name);
    run_on(run.interpreter, [&] {
      Recorder<UInt32, UInt32, Float> rec(2000), even(2000);
      UInt32 lane0 = lanes_of(size);
      auto [lane, i] = while_loop(
          std::tuple(lane0, lane0 * 0u), [](const UInt32& lane, const UInt32& i) { return i < lane % 5u; },
          [&](const UInt32& lane, const UInt32& i) {
            Float value = cast<float>(lane * 10u + i) * 0.5f;
            rec.append(Bool(true), lane, i, value);
            even.append(i % 2u == 0u, lane, i, value);
            return std::tuple(lane, i + 1u);
          },
          run.mode, "recording");
      eval(lane, i);
      EXPECT_EQ(rec.count(), expected.size());
      EXPECT_EQ(even.count(), expected_even.size());
      EXPECT_EQ(rec.field<0>().size(), expected.size());
      EXPECT_TRUE(sorted_records(rec) == expected);
      EXPECT_TRUE(sorted_records(even) == expected_even);
    });
  }
}

TEST(Control, RecorderTopLevelAndVectorFields) {
  Recorder<UInt32, Array3f> rec(100);
  UInt32 lane = lanes_of(50);
  Float f = cast<float>(lane);
  rec.append(lane % 5u == 0u, lane, Array3f(f, f * 2.f, -f));
  rec.append(lane == 7u, lane, Array3f(f, f, f));
  ASSERT_EQ(rec.count(), 11u);
  UInt32 lanes = rec.field<0>();
  Array3f v = rec.field<1>();
  std::map<uint32_t, std::vector<float>> got;
  for (size_t r = 0; r < 11; ++r) got[lanes.read(r)] = {v.x.read(r), v.y.read(r), v.z.read(r)};
  ASSERT_EQ(got.size(), 11u);
  EXPECT_EQ(got[7], (std::vector<float>{7.f, 7.f, 7.f}));
  EXPECT_EQ(got[45], (std::vector<float>{45.f, 90.f, -45.f}));
  rec.clear();
  EXPECT_EQ(rec.count(), 0u);
  EXPECT_EQ(rec.field<0>().size(), 0u);
}

TEST(Control, RecorderInBranchesAndCalls) {
  for (ControlMode mode : kModes) {
    SCOPED_TRACE(mode_name(mode));
    Recorder<UInt32> taken(100), called(100);
    UInt32 lane = lanes_of(30);
    UInt32 r = if_stmt(
        lane % 4u == 1u,
        [&](const UInt32& l) {
          taken.append(Bool(true), l);
          return l;
        },
        [](const UInt32& l) { return l * 2u; }, std::tuple(lane), mode);
    Scaled one;
    Registry<Material> registry;
    registry.add(&one);
    auto [y, z] = dispatch(
        registry, lane % 3u,
        [&](Material& m, const Float& x, const UInt32& l) {
          called.append(l > 10u, l);
          return m.shade(x, l);
        },
        std::tuple(cast<float>(lane), lane), mode);
    eval(r, y, z);
    std::vector<uint32_t> got = taken.field<0>().to_vector(), got_calls = called.field<0>().to_vector();
    std::sort(got.begin(), got.end());
    std::sort(got_calls.begin(), got_calls.end());
    EXPECT_EQ(got, (std::vector<uint32_t>{1, 5, 9, 13, 17, 21, 25, 29}));
    EXPECT_EQ(got_calls, (std::vector<uint32_t>{13, 16, 19, 22, 25, 28}));
  }
}

TEST(Control, RecorderOverflowNamesTheNeededCapacity) {
  for (ControlMode mode : kModes) {
    SCOPED_TRACE(mode_name(mode));
    Recorder<UInt32, UInt32, Float> rec(50);
    UInt32 lane0 = lanes_of(300);
    auto [lane, i] = while_loop(
        std::tuple(lane0, lane0 * 0u), [](const UInt32& lane, const UInt32& i) { return i < lane % 5u; },
        [&](const UInt32& lane, const UInt32& i) {
          rec.append(Bool(true), lane, i, cast<float>(i));
          return std::tuple(lane, i + 1u);
        },
        mode);
    eval(lane, i);
    EXPECT_EQ(rec.count(), 600u);  // 60 lanes each of 0..4 iterations
    EXPECT_EQ(rec.capacity(), 50u);
    try {
      (void)rec.field<0>();
      ADD_FAILURE() << "field<0>() of an overflowing recorder did not throw";
    } catch (const SizeError& e) {
      EXPECT_NE(std::string(e.what()).find("600"), std::string::npos) << e.what();
    }
    EXPECT_THROW((void)rec.field<2>(), SizeError);
  }
  // Exactly full is fine.
  Recorder<UInt32> full(10);
  full.append(Bool(true), lanes_of(10));
  EXPECT_EQ(full.count(), 10u);
  EXPECT_NO_THROW(EXPECT_EQ(full.field<0>().size(), 10u));
}

TEST(Control, RecorderFieldsShareItsMemory) {
  Recorder<UInt32, Float> rec(1000);
  UInt32 lane = lanes_of(100);
  rec.append(lane < 30u, lane, cast<float>(lane));
  const uint32_t* first = rec.field<0>().data();
  EXPECT_EQ(rec.field<0>().data(), first) << "field<0>() copied";
  EXPECT_NE(static_cast<const void*>(rec.field<1>().data()), static_cast<const void*>(first));
  // More records: the fields are longer prefixes of the same memory.
  rec.append(lane >= 90u, lane, cast<float>(lane));
  UInt32 again = rec.field<0>();
  EXPECT_EQ(again.size(), 40u);
  EXPECT_EQ(again.data(), first) << "the recorder's memory moved";
  std::set<uint32_t> lanes(again.data(), again.data() + again.size());
  EXPECT_EQ(lanes.size(), 40u);
  EXPECT_EQ(*lanes.begin(), 0u);
  EXPECT_EQ(*lanes.rbegin(), 99u);
}

// ---- print_async --------------------------------------------------------------------------

namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::vector<std::string> sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

}  // namespace

TEST(Control, PrintAsyncTopLevel) {
  UInt32 lane = lanes_of(7);
  Int32 neg = cast<int32_t>(lane) - 3;
  Float f = cast<float>(lane) + 0.5f;
  testing::internal::CaptureStdout();
  print_async("lane {} neg {} f {}", std::tuple(lane, neg, f), lane % 2u == 0u);
  std::string before = testing::internal::GetCapturedStdout();
  EXPECT_EQ(before, "") << "printed before its kernel ran";
  testing::internal::CaptureStdout();
  eval();
  std::string out = testing::internal::GetCapturedStdout();
  EXPECT_EQ(out, "lane 0 neg -3 f 0.5\nlane 2 neg -1 f 2.5\nlane 4 neg 1 f 4.5\nlane 6 neg 3 f 6.5\n");
  // Without a mask every lane prints.
  testing::internal::CaptureStdout();
  print_async("x{}", std::tuple(lane * 2u));
  eval();
  EXPECT_EQ(testing::internal::GetCapturedStdout(), "x0\nx2\nx4\nx6\nx8\nx10\nx12\n");
}

TEST(Control, PrintAsyncFormatSpecifications) {
  Float f = Float{3.14159f, -0.5f};
  Int32 i = Int32{42, -7};
  UInt32 u = UInt32{255, 10};
  Bool b = Bool{true, false};
  testing::internal::CaptureStdout();
  print_async("{:.3f}|{:>6}|{:+d}|{:#x}|{:08.2e}|{:<6}|{{{}}}|{:^7.1%}", std::tuple(f, i, i, u, f, b, u, f));
  eval();
  EXPECT_EQ(testing::internal::GetCapturedStdout(),
            "3.142|    42|+42|0xff|3.14e+00|True  |{255}|314.2% \n"
            "-0.500|    -7|-7|0xa|-5.00e-01|False |{10}|-50.0% \n");
  testing::internal::CaptureStdout();
  print_async("{:X} {:o} {:b} {:5.1f} {:*<5}", std::tuple(u, u, u, i, i));
  eval();
  EXPECT_EQ(testing::internal::GetCapturedStdout(), "FF 377 11111111  42.0 42***\nA 12 1010  -7.0 -7***\n");
}

TEST(Control, PrintAsyncFormatErrors) {
  Float f = Float{1.f};
  Int32 i = Int32{1};
  auto fails = [](const std::string& format, const auto& values, const std::string& needle) {
    try {
      print_async(format, values);
      ADD_FAILURE() << format << ": no error";
    } catch (const ValueError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  fails("{:d}", std::tuple(f), "'d' is an integer type");
  fails("{:.2}", std::tuple(i), "integers take a precision only with a float type");
  fails("{:q}", std::tuple(f), "unknown type 'q'");
  fails("{:.3fx}", std::tuple(f), "unexpected 'x'");
  fails("{0}", std::tuple(f), "fields are {} or {:spec}");
  fails("{} {", std::tuple(f), "'{' without a '}'");
  fails("} {}", std::tuple(f), "'}' without a '{'");
  fails("{:.3f} {}", std::tuple(f), "2 fields but 1 values");
  fails("{:5d}", std::tuple(Bool{true}), "Bool values take only fill, alignment and width");
  eval();
}

TEST(Control, PrintAsyncInLoops) {
  const size_t size = 5;
  std::map<ControlMode, std::vector<std::string>> outputs;
  for (const ModeRun& run : kModeRuns) {
    SCOPED_TRACE(run.name);
    testing::internal::CaptureStdout();
    run_on(run.interpreter, [&] {
      UInt32 lane0 = lanes_of(size);
      auto [lane, i] = while_loop(
          std::tuple(lane0, lane0 * 0u), [](const UInt32& lane, const UInt32& i) { return i < lane % 4u; },
          [&](const UInt32& lane, const UInt32& i) {
            print_async("lane {} it {}", std::tuple(lane, i));
            return std::tuple(lane, i + 1u);
          },
          run.mode, "printing");
      eval(lane, i);
    });
    std::vector<std::string> lines = lines_of(testing::internal::GetCapturedStdout());
    std::vector<std::string> expected;
    if (run.mode == ControlMode::Symbolic) {
      // One kernel: grouped by lane, iterations in order.
      for (uint32_t l = 0; l < size; ++l)
        for (uint32_t it = 0; it < l % 4; ++it)
          expected.push_back("lane " + std::to_string(l) + " it " + std::to_string(it));
    } else {
      // One kernel per iteration: each iteration's lines, in lane order.
      for (uint32_t it = 0; it < 3; ++it)
        for (uint32_t l = 0; l < size; ++l)
          if (it < l % 4) expected.push_back("lane " + std::to_string(l) + " it " + std::to_string(it));
    }
    EXPECT_EQ(lines, expected);
    if (!run.interpreter) outputs[run.mode] = sorted(lines);
  }
  EXPECT_EQ(outputs[ControlMode::Symbolic], outputs[ControlMode::Evaluated]);
}

// Two prints in one symbolic loop body: lines are grouped by lane, and within a lane they
// come in program order (a0 b0 a1 b1 ...), not print call by print call.
TEST(Control, PrintAsyncProgramOrderWithinLane) {
  const size_t size = 3;
  testing::internal::CaptureStdout();
  UInt32 lane0 = lanes_of(size);
  auto [lane, i] = while_loop(
      std::tuple(lane0, lane0 * 0u), [](const UInt32& lane, const UInt32& i) { return i < lane; },
      [&](const UInt32& lane, const UInt32& i) {
        print_async("a {} {}", std::tuple(lane, i));
        print_async("b {} {}", std::tuple(lane, i));
        return std::tuple(lane, i + 1u);
      },
      ControlMode::Symbolic);
  eval(lane, i);
  std::vector<std::string> lines = lines_of(testing::internal::GetCapturedStdout());
  std::vector<std::string> expected = {"a 1 0", "b 1 0", "a 2 0", "b 2 0", "a 2 1", "b 2 1"};
  EXPECT_EQ(lines, expected);
}

TEST(Control, PrintAsyncInConditionalsAndCalls) {
  std::map<ControlMode, std::vector<std::string>> outputs;
  for (ControlMode mode : kModes) {
    SCOPED_TRACE(mode_name(mode));
    testing::internal::CaptureStdout();
    UInt32 lane = lanes_of(12);
    UInt32 r = if_stmt(
        lane % 3u == 0u,
        [](const UInt32& l) {
          print_async("true {}", std::tuple(l));
          return l + 1u;
        },
        [](const UInt32& l) {
          print_async("false {}", std::tuple(l), l > 8u);
          return l;
        },
        std::tuple(lane), mode);
    Scaled one, two;
    one.k = 1, two.k = 2;
    Registry<Material> registry;
    registry.add(&one), registry.add(&two);
    auto [y, z] = dispatch(
        registry, lane % 3u,
        [](Material& m, const Float& x, const UInt32& l) {
          print_async("call {} {}", std::tuple(l, x));
          return m.shade(x, l);
        },
        std::tuple(cast<float>(lane), lane), mode);
    eval(r, y, z);
    std::vector<std::string> lines = sorted(lines_of(testing::internal::GetCapturedStdout()));
    std::vector<std::string> expected;
    for (uint32_t l = 0; l < 12; ++l) {
      if (l % 3 == 0)
        expected.push_back("true " + std::to_string(l));
      else if (l > 8)
        expected.push_back("false " + std::to_string(l));
      if (l % 3 != 0) expected.push_back("call " + std::to_string(l) + " " + std::to_string(l));
    }
    EXPECT_EQ(lines, sorted(expected));
    EXPECT_EQ(r.read(3), 4u);
    outputs[mode] = lines;
  }
  EXPECT_EQ(outputs[ControlMode::Symbolic], outputs[ControlMode::Evaluated]);
}
