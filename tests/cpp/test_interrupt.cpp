// Ctrl-C (SIGINT) stops kernels that would never finish: infinite loops in symbolic and
// evaluated mode, on the JIT and the interpreter. Kiln raises Interrupted, hands the
// signal to the handler installed before it, and stays usable. Its own test binary: a
// signal that is not caught kills only this test.
#include <kiln/kiln.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <thread>

using namespace kiln;

namespace {

std::atomic<int> forwarded{0};
void count_sigint(int) { forwarded++; }

/// Sends SIGINT to the process every 50 ms until destroyed.
class CtrlC {
 public:
  CtrlC()
      : sender_([this] {
          while (!done_) {
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
            if (!done_) std::raise(SIGINT);
          }
        }) {}
  ~CtrlC() {
    done_ = true;
    sender_.join();
  }

 private:
  std::atomic<bool> done_{false};
  std::thread sender_;
};

/// A loop whose condition always holds, on `lanes` lanes.
UInt32 endless(ControlMode mode, size_t lanes) {
  auto [i] = while_loop(
      std::tuple(zeros<UInt32>(lanes)), [](const UInt32& i) { return i >= 0u; },
      [](const UInt32& i) { return std::tuple(i + 1u); }, mode, "endless");
  return i;
}

class Interrupt : public ::testing::TestWithParam<std::tuple<ControlMode, bool, size_t>> {
 protected:
  void SetUp() override {
    previous_ = std::signal(SIGINT, count_sigint);  // stands in for Python's handler
    set_flag(Flag::Interpreter, std::get<1>(GetParam()));
  }
  void TearDown() override {
    set_flag(Flag::Interpreter, false);
    std::signal(SIGINT, previous_);
  }
  void (*previous_)(int) = nullptr;
};

}  // namespace

TEST_P(Interrupt, EndlessLoopStopsAndKilnStaysUsable) {
  auto [mode, interpreter, lanes] = GetParam();
  forwarded = 0;
  {
    CtrlC ctrl_c;
    // An evaluated loop runs when it is called, a symbolic one when it is evaluated.
    EXPECT_THROW(eval(endless(mode, lanes)), Interrupted);
  }
  EXPECT_GE(forwarded.load(), 1) << "the signal was not handed to the previous handler";
  Float x = arange<Float>(lanes) * 2.f;
  EXPECT_EQ(x.read(lanes - 1), float(2 * (lanes - 1)));
  auto [n] = while_loop(
      std::tuple(zeros<UInt32>(lanes)), [](const UInt32& n) { return n < 5u; },
      [](const UInt32& n) { return std::tuple(n + 1u); }, mode);
  EXPECT_EQ(n.read(0), 5u);
}

INSTANTIATE_TEST_SUITE_P(ModesBackendsSizes, Interrupt,
                         testing::Combine(testing::Values(ControlMode::Symbolic, ControlMode::Evaluated),
                                          testing::Bool(), testing::Values(size_t(1), size_t(100000))),
                         [](const auto& info) {
                           return std::string(std::get<0>(info.param) == ControlMode::Symbolic ? "Symbolic"
                                                                                               : "Evaluated") +
                                  (std::get<1>(info.param) ? "Interpreter" : "Llvm") +
                                  std::to_string(std::get<2>(info.param));
                         });

TEST(InterruptScope, IgnoredSigintStaysIgnored) {
  auto previous = std::signal(SIGINT, SIG_IGN);
  Float x = arange<Float>(10) + 1.f;
  {
    CtrlC ctrl_c;
    eval(x);
  }
  EXPECT_EQ(std::signal(SIGINT, previous), SIG_IGN);
  EXPECT_EQ(x.read(9), 10.f);
}
