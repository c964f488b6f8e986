// Control-flow errors: evaluating inside a symbolic body, leaked body values, bodies and
// branches that return the wrong structure, sizes, and captured per-lane arrays.
#include "control_test_support.h"

using namespace kiln;

// ---- errors -------------------------------------------------------------------------------

namespace {

/// A symbolic loop still works after an error (the region was abandoned, masks popped).
void expect_loops_still_work() {
  for (ControlMode mode : kModes) {
    UInt32 lane = lanes_of(10);
    UInt32 hist = zeros<UInt32>(1);
    auto [i] = while_loop(
        std::tuple(lane * 0u), [&](const UInt32& i) { return i < lane; },
        [&](const UInt32& i) {
          scatter_add(hist, i * 0u + 1u, i * 0u);
          return std::tuple(i + 1u);
        },
        mode);
    EXPECT_EQ(i.read(9), 9u) << mode_name(mode);
    EXPECT_EQ(hist.read(0), 45u) << mode_name(mode);
  }
  // And evaluation outside loops works too (no stale mask).
  UInt32 plain = lanes_of(4) + 1u;
  EXPECT_EQ(sum(plain).item(), 10u);
}

template <typename Exception> std::string message_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Exception& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("WRONG EXCEPTION TYPE: ") + e.what();
  }
  return "NO EXCEPTION";
}

}  // namespace

TEST(ControlErrors, EvaluatingInsideSymbolicBody) {
  const std::vector<std::pair<const char*, std::function<void(const UInt32&, const Float&)>>> reads = {
      {"read", [](const UInt32&, const Float& v) { (void)v.read(0); }},
      {"read of the state", [](const UInt32& i, const Float&) { (void)i.read(0); }},
      {"data", [](const UInt32&, const Float& v) { (void)v.data(); }},
      {"eval", [](const UInt32&, const Float& v) { eval(v); }},
      {"sum", [](const UInt32&, const Float& v) { (void)sum(v); }},
      {"compress", [](const UInt32& i, const Float&) { (void)compress(i < 2u); }},
      {"to_vector", [](const UInt32& i, const Float&) { (void)(i * 2u).to_vector(); }},
  };
  for (const auto& [what, fn] : reads) {
    SCOPED_TRACE(what);
    std::string message = message_of<ValueError>([&] {
      UInt32 lane = lanes_of(16);
      auto result = while_loop(
          std::tuple(lane * 0u, cast<float>(lane)), [](const UInt32& i, const Float&) { return i < 3u; },
          [&](const UInt32& i, const Float& x) {
            Float v = x * 2.f + 1.f;
            fn(i, v);
            return std::tuple(i + 1u, v);
          },
          ControlMode::Symbolic, "reader");
      eval(std::get<0>(result));
    });
    EXPECT_NE(message.find("loop"), std::string::npos) << message;
    EXPECT_NE(message.find("reader"), std::string::npos) << "the message should name the loop: " << message;
    EXPECT_NE(message.find("symbolic"), std::string::npos) << message;
  }
  expect_loops_still_work();
}

TEST(ControlErrors, BodyValueUsedAfterTheLoop) {
  UInt32 lane = lanes_of(16);
  Float leaked;
  auto [i, x] = while_loop(
      std::tuple(lane * 0u, cast<float>(lane)), [](const UInt32& i, const Float&) { return i < 3u; },
      [&](const UInt32& i, const Float& x) {
        leaked = x * 2.f;
        return std::tuple(i + 1u, leaked);
      },
      ControlMode::Symbolic, "leaky");
  EXPECT_EQ(x.read(1), 8.f);
  std::string m1 = message_of<ValueError>([&] { (void)leaked.read(0); });
  EXPECT_NE(m1.find("loop"), std::string::npos) << m1;
  std::string m2 = message_of<ValueError>([&] {
    Float y = leaked + 1.f;
    eval(y);
  });
  EXPECT_NE(m2.find("loop"), std::string::npos) << m2;
  std::string m3 = message_of<ValueError>([&] { eval(leaked); });
  EXPECT_NE(m3.find("loop"), std::string::npos) << m3;
  leaked = Float();
  expect_loops_still_work();
}

TEST(ControlErrors, BodyReturnsDifferentStructure) {
  using detail::Handle;
  using detail::Values;
  for (ControlMode mode : kModes) {
    SCOPED_TRACE(mode_name(mode));
    UInt32 lane = lanes_of(16);
    Float x = cast<float>(lane);
    Values state = detail::flatten_values(std::tuple(lane * 0u, x));
    detail::ConditionFn cond = [](const Values& v) {
      return Handle::steal(detail::trace(Op::Lt, v[0].index(), UInt32(3u).index()));
    };
    detail::BodyFn fewer = [](const Values& v) {
      return Values{Handle::steal(detail::trace(Op::Add, v[0].index(), UInt32(1u).index()))};
    };
    detail::BodyFn more = [](const Values& v) {
      Values out = v;
      out[0] = Handle::steal(detail::trace(Op::Add, v[0].index(), UInt32(1u).index()));
      out.push_back(v[1]);
      return out;
    };
    detail::BodyFn wrong_type = [](const Values& v) {
      Values out = v;
      out[0] = Handle::steal(detail::trace(Op::Add, v[0].index(), UInt32(1u).index()));
      out[1] = Handle::steal(detail::trace(Op::Cast, v[1].index(), 0, 0, VarType::Float64));
      return out;
    };
    detail::BodyFn wrong_size = [](const Values& v) {
      Values out = v;
      out[0] = Handle::steal(detail::trace(Op::Add, v[0].index(), UInt32(1u).index()));
      out[1] = Handle::borrow(zeros<Float>(3).index());
      return out;
    };
    EXPECT_THROW(detail::while_loop(state, cond, fewer, mode, "fewer"), TypeError);
    EXPECT_THROW(detail::while_loop(state, cond, more, mode, "more"), TypeError);
    EXPECT_THROW(detail::while_loop(state, cond, wrong_type, mode, "type"), TypeError);
    EXPECT_THROW(detail::while_loop(state, cond, wrong_size, mode, "size"), SizeError);
    // Conditions that are not Bool, or not of the loop's size.
    detail::ConditionFn not_bool = [](const Values& v) { return v[0]; };
    detail::ConditionFn wrong_lanes = [](const Values&) { return Handle::borrow((zeros<UInt32>(3) < 1u).index()); };
    detail::BodyFn ok = [](const Values& v) {
      Values out = v;
      out[0] = Handle::steal(detail::trace(Op::Add, v[0].index(), UInt32(1u).index()));
      return out;
    };
    EXPECT_THROW(detail::while_loop(state, not_bool, ok, mode, "cond"), TypeError);
    EXPECT_THROW(detail::while_loop(state, wrong_lanes, ok, mode, "cond"), SizeError);
    // Branches and instances that disagree on their results.
    detail::BodyFn as_uint = [](const Values& v) { return Values{v[0]}; };
    detail::BodyFn as_float = [](const Values& v) { return Values{v[1]}; };
    detail::BodyFn two = [](const Values& v) { return v; };
    Bool c = lane < 5u;
    EXPECT_THROW(detail::if_stmt(c.index(), as_uint, as_float, state, mode, "if"), TypeError);
    EXPECT_THROW(detail::if_stmt(c.index(), as_uint, two, state, mode, "if"), TypeError);
    detail::InstanceFn by_id = [](uint32_t id, const Values& v) { return Values{id == 1 ? v[0] : v[1]}; };
    UInt32 ids = lane % 3u;
    EXPECT_THROW(detail::dispatch(ids.index(), {1, 2}, by_id, state, mode, "call"), TypeError);
  }
  expect_loops_still_work();
}

TEST(ControlErrors, ConditionOfTheWrongSize) {
  for (ControlMode mode : kModes) {
    SCOPED_TRACE(mode_name(mode));
    UInt32 lane = lanes_of(10);
    UInt32 other = lanes_of(3);
    EXPECT_THROW(while_loop(
                     std::tuple(lane * 0u), [&](const UInt32&) { return other < 2u; },
                     [](const UInt32& i) { return std::tuple(i + 1u); }, mode),
                 SizeError);
  }
  expect_loops_still_work();
}

TEST(ControlErrors, EvaluatedBranchCapturingPerLaneArray) {
  UInt32 lane = lanes_of(100);
  Float x = cast<float>(lane);
  auto capture = [&](ControlMode mode) {
    return if_stmt(
        lane < 30u, [&](const UInt32& l) { return cast<float>(l) + x; }, [](const UInt32& l) { return cast<float>(l); },
        std::tuple(lane), mode, "capturing");
  };
  Float ok = capture(ControlMode::Symbolic);  // symbolic branches see every lane
  EXPECT_EQ(ok.read(10), 20.f);
  EXPECT_EQ(ok.read(50), 50.f);
  std::string message = message_of<SizeError>([&] { eval(capture(ControlMode::Evaluated)); });
  EXPECT_EQ(message.rfind("WRONG", 0), std::string::npos) << message;
  EXPECT_EQ(message.rfind("NO EXCEPTION", 0), std::string::npos) << message;
  // The same for dispatch.
  Scaled one, two;
  Registry<Material> registry;
  registry.add(&one), registry.add(&two);
  auto call = [&] {
    auto [a, b] = dispatch(
        registry, lane % 3u, [&](Material& m, const UInt32& l) { return m.shade(x, l); }, std::tuple(lane),
        ControlMode::Evaluated);
    eval(a, b);
  };
  EXPECT_THROW(call(), SizeError);
  expect_loops_still_work();
}

TEST(ControlErrors, ErrorInsideNestedSymbolicBody) {
  UInt32 lane = lanes_of(8);
  auto nested = [&] {
    auto r = while_loop(
        std::tuple(lane * 0u), [](const UInt32& i) { return i < 3u; },
        [](const UInt32& i) {
          auto inner = while_loop(
              std::tuple(i * 0u), [](const UInt32& j) { return j < 2u; },
              [](const UInt32& j) {
                (void)j.read(0);
                return std::tuple(j + 1u);
              },
              ControlMode::Symbolic, "inner");
          return std::tuple(std::get<0>(inner) + i + 1u);
        },
        ControlMode::Symbolic, "outer");
    eval(std::get<0>(r));
  };
  EXPECT_THROW(nested(), ValueError);
  expect_loops_still_work();
}

TEST(ControlErrors, StatementsInsideASymbolicOneAreSymbolic) {
  // With evaluated mode the default, a statement without mode= inside a symbolic loop is
  // symbolic (it cannot launch kernels from inside one); mode=evaluated there is an error
  // that says so, naming both statements.
  bool saved = flag(Flag::Symbolic);
  set_flag(Flag::Symbolic, false);
  UInt32 lane = lanes_of(8);
  auto [i, x] = while_loop(
      std::tuple(lane * 0u, cast<float>(lane)), [](const UInt32& i, const Float&) { return i < 3u; },
      [](const UInt32& i, const Float& x) {
        EXPECT_EQ(default_mode(), ControlMode::Symbolic);
        Float y = if_stmt(
            x > 3.0f, [](const Float& v) { return v * 2.0f; }, [](const Float& v) { return v + 1.0f; }, std::tuple(x));
        return std::tuple(i + 1u, y);
      },
      ControlMode::Symbolic, "outer");
  EXPECT_EQ(x.read(0), 3.0f);   // 0 -> 1 -> 2 -> 3
  EXPECT_EQ(x.read(5), 40.0f);  // 5 -> 10 -> 20 -> 40
  std::string message = message_of<ValueError>([&] {
    (void)while_loop(
        std::tuple(lane * 0u), [](const UInt32& i) { return i < 2u; },
        [](const UInt32& i) {
          UInt32 j = if_stmt(
              i > 0u, [](const UInt32& v) { return v; }, [](const UInt32& v) { return v + 1u; }, std::tuple(i),
              ControlMode::Evaluated, "inner");
          return std::tuple(j + 1u);
        },
        ControlMode::Symbolic, "outer");
  });
  set_flag(Flag::Symbolic, saved);
  for (const char* word : {"if_stmt('inner')", "mode=evaluated", "while_loop('outer')", "symbolic"})
    EXPECT_NE(message.find(word), std::string::npos) << message;
  expect_loops_still_work();
}
