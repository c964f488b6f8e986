// Host calls (include/kiln/host_call.h): C++ functions registered once and called from
// kernels on a packet of lanes. Results on the JIT and the interpreter against host
// references; masks (inactive lanes are never passed as active, and read 0 whatever the
// function leaves there); loops, branches and dispatch in both modes; the function's address
// and the context as launch parameters (no recompilation when they change, and a second
// process loads the kernel from disk and calls its own function); dead and merged calls;
// bad inputs; long kernels split into pieces around a call; no derivatives; printers.
// Own main(): `test_host_call --disk-cache-child <variant>` is the second process.
#include <kiln/host_call.h>
#include <kiln/kiln.h>

#include <gtest/gtest.h>

#include "backend/kernel_split.h"
#include "cache/kernel_cache.h"
#include "control_test_support.h"
#include "ir/op_info.h"
#include "ir/verify.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

namespace {

using detail::Index;

/// What the functions below write on lanes they must skip: kernels read 0 there.
constexpr float kJunk = -777.f;

/// (a f32, b u32, c Bool) -> (a * b + 1 f32, a > b Bool, c ? b : b + 3 u32).
void mix(void*, uint32_t width, const int32_t* active, const void* const* in, void* const* out) {
  auto a = static_cast<const float*>(in[0]);
  auto b = static_cast<const uint32_t*>(in[1]);
  auto c = static_cast<const uint8_t*>(in[2]);
  auto product = static_cast<float*>(out[0]);
  auto greater = static_cast<uint8_t*>(out[1]);
  auto picked = static_cast<uint32_t*>(out[2]);
  for (uint32_t i = 0; i < width; ++i) {
    product[i] = active[i] ? a[i] * float(b[i]) + 1.f : kJunk;
    greater[i] = active[i] ? a[i] > float(b[i]) : 0xAB;
    picked[i] = active[i] ? (c[i] ? b[i] : b[i] + 3) : 0xDEAD;
  }
}
const HostFunction kMix("test_mix", {VarType::Float32, VarType::UInt32, VarType::Bool},
                        {VarType::Float32, VarType::Bool, VarType::UInt32}, mix);

/// A hit of the plane z = 0: what kRay computes per lane.
struct PlaneHit {
  float t = 0, u = 0, v = 0;
  uint32_t primitive = 0;
  bool hit = false;
};
/// A ray (origin, direction, t_max, flags: bit 0 enables it, the rest is its primitive).
PlaneHit plane_hit(const float o[3], const float d[3], float t_max, uint32_t flags) {
  PlaneHit h;
  h.t = d[2] != 0 ? -o[2] / d[2] : 0;
  h.hit = (flags & 1) && d[2] != 0 && h.t > 0 && h.t < t_max;
  if (!h.hit) return {};
  h.u = o[0] + h.t * d[0];
  h.v = o[1] + h.t * d[1];
  h.primitive = flags >> 1;
  return h;
}

/// Eight inputs like a ray, five outputs like a hit (more than the pointer arrays' first
/// few entries, and every type of staging).
void ray(void*, uint32_t width, const int32_t* active, const void* const* in, void* const* out) {
  for (uint32_t i = 0; i < width; ++i) {
    if (!active[i]) continue;
    float o[3], d[3];
    for (int k = 0; k < 3; ++k) {
      o[k] = static_cast<const float*>(in[k])[i];
      d[k] = static_cast<const float*>(in[3 + k])[i];
    }
    PlaneHit h = plane_hit(o, d, static_cast<const float*>(in[6])[i], static_cast<const uint32_t*>(in[7])[i]);
    static_cast<float*>(out[0])[i] = h.t;
    static_cast<float*>(out[1])[i] = h.u;
    static_cast<float*>(out[2])[i] = h.v;
    static_cast<uint32_t*>(out[3])[i] = h.primitive;
    static_cast<uint8_t*>(out[4])[i] = h.hit;
  }
}
const HostFunction kRay("test_ray",
                        {VarType::Float32, VarType::Float32, VarType::Float32, VarType::Float32, VarType::Float32,
                         VarType::Float32, VarType::Float32, VarType::UInt32},
                        {VarType::Float32, VarType::Float32, VarType::Float32, VarType::UInt32, VarType::Bool}, ray);

/// What kCounted sees, through its context.
struct LaneCounter {
  std::atomic<uint32_t> calls{0}, lanes{0}, wrong{0}, min_width{~0u}, max_width{0};
};

/// (lane u32, allowed Bool) -> lane * 10 + 1; counts calls and active lanes, and lanes that
/// are active though not allowed (or whose flag is neither -1 nor 0) as wrong.
void counted(void* context, uint32_t width, const int32_t* active, const void* const* in, void* const* out) {
  auto& counter = *static_cast<LaneCounter*>(context);
  auto lane = static_cast<const uint32_t*>(in[0]);
  auto allowed = static_cast<const uint8_t*>(in[1]);
  counter.calls++;
  counter.min_width = std::min(counter.min_width.load(), width);
  counter.max_width = std::max(counter.max_width.load(), width);
  for (uint32_t i = 0; i < width; ++i) {
    if (active[i] != 0 && active[i] != -1) counter.wrong++;
    if (active[i] == 0) continue;
    counter.lanes++;
    if (!allowed[i]) counter.wrong++;
    static_cast<uint32_t*>(out[0])[i] = lane[i] * 10 + 1;
  }
}
const HostFunction kCounted("test_counted", {VarType::UInt32, VarType::Bool}, {VarType::UInt32}, counted);

/// (x f32) -> x * *context, and the same plus one: one name and signature, two addresses.
void scaled(void* context, uint32_t width, const int32_t* active, const void* const* in, void* const* out) {
  for (uint32_t i = 0; i < width; ++i)
    if (active[i])
      static_cast<float*>(out[0])[i] = static_cast<const float*>(in[0])[i] * *static_cast<const float*>(context);
}
void scaled_plus_one(void* context, uint32_t width, const int32_t* active, const void* const* in, void* const* out) {
  scaled(context, width, active, in, out);
  for (uint32_t i = 0; i < width; ++i)
    if (active[i]) static_cast<float*>(out[0])[i] += 1.f;
}

template <typename T> std::vector<uint64_t> lane_bits(const std::vector<T>& values) {
  std::vector<uint64_t> bits;
  for (const T& v : values) bits.push_back(test::bits_of(v));
  return bits;
}

/// Checks the interpreter and the JIT agree with `expected`, lane for lane.
void expect_both_backends(const std::function<Snapshot()>& program, const Snapshot& expected) {
  for (bool interpreter : {false, true}) {
    SCOPED_TRACE(interpreter ? "interpreter" : "jit");
    std::string diff = differences(test::run_on(interpreter, program), expected);
    EXPECT_TRUE(diff.empty()) << diff;
  }
}

class HostCall : public ::testing::Test {
 protected:
  void TearDown() override { EXPECT_EQ(detail::verify_ir(), ""); }
};

}  // namespace

TEST_F(HostCall, MixedTypesMatchTheHostOnActiveLanesAndAreZeroElsewhere) {
  const size_t n = 37;  // not a multiple of any packet width: the tail is masked too
  std::vector<float> product(n);
  std::vector<bool> greater(n);
  std::vector<uint32_t> picked(n);
  for (size_t i = 0; i < n; ++i) {
    if (i % 3 == 0) continue;  // inactive
    float a = float(i % 7) - 2.f;
    uint32_t b = uint32_t(i % 5);
    product[i] = a * float(b) + 1.f;
    greater[i] = a > float(b);
    picked[i] = i % 2 ? b : b + 3;
  }
  Snapshot expected = {column(product), column(greater), column(picked)};
  expect_both_backends(
      [&] {
        UInt32 lane = arange<UInt32>(n);
        Float a = cast<float>(lane % 7u) - 2.f;
        auto [p, g, c] =
            host_call<Float, Bool, UInt32>(kMix, nullptr, std::tuple(a, lane % 5u, (lane & 1u) == 1u), lane % 3u != 0u);
        return snap(p, g, c);
      },
      expected);
}

TEST_F(HostCall, EightInputsAndFiveOutputs) {
  const size_t n = 50;
  std::vector<float> t(n), u(n), v(n);
  std::vector<uint32_t> primitive(n);
  std::vector<bool> hit(n);
  for (size_t i = 0; i < n; ++i) {
    float o[3] = {float(i % 4), float(i % 3), -float(i % 5)}, d[3] = {0.5f, -1.f, i % 6 == 0 ? 0.f : 0.5f};
    PlaneHit h = plane_hit(o, d, float(i % 9), uint32_t(i % 4 == 3 ? 0 : 2 * i + 1));
    t[i] = h.t, u[i] = h.u, v[i] = h.v, primitive[i] = h.primitive, hit[i] = h.hit;
  }
  Snapshot expected = {column(t), column(u), column(v), column(primitive), column(hit)};
  expect_both_backends(
      [&] {
        UInt32 lane = arange<UInt32>(n);
        Float zero = zeros<Float>(n), dz = select(lane % 6u == 0u, zero, zero + 0.5f);
        UInt32 flags = select(lane % 4u == 3u, UInt32(0u), lane * 2u + 1u);
        auto [ht, hu, hv, hp, hh] = host_call<Float, Float, Float, UInt32, Bool>(
            kRay, nullptr,
            std::tuple(cast<float>(lane % 4u), cast<float>(lane % 3u), -cast<float>(lane % 5u), Float(0.5f),
                       Float(-1.f), dz, cast<float>(lane % 9u), flags));
        return snap(ht, hu, hv, hp, hh);
      },
      expected);
}

TEST_F(HostCall, RunsOnlyTheActiveLanesInPacketsOfTheBackendsWidth) {
  const size_t n = 100;
  for (bool interpreter : {false, true}) {
    SCOPED_TRACE(interpreter ? "interpreter" : "jit");
    LaneCounter counter;
    std::vector<uint32_t> tags = test::run_on(interpreter, [&] {
      UInt32 lane = arange<UInt32>(n);
      Bool allowed = lane % 4u == 1u;
      auto [tag] = host_call<UInt32>(kCounted, &counter, std::tuple(lane, allowed), allowed);
      return tag.to_vector();
    });
    for (size_t i = 0; i < n; ++i) EXPECT_EQ(tags[i], i % 4 == 1 ? 10 * i + 1 : 0) << "lane " << i;
    EXPECT_EQ(counter.wrong, 0u);
    EXPECT_EQ(counter.lanes, 25u);
    uint32_t width = interpreter ? 1 : uint32_t(packet_width());
    EXPECT_EQ(counter.min_width, width);
    EXPECT_EQ(counter.max_width, width);
    EXPECT_EQ(counter.calls, interpreter ? 25u : (n + width - 1) / width);

    // Packets without an active lane make no call.
    LaneCounter first_packet;
    test::run_on(interpreter, [&] {
      UInt32 lane = arange<UInt32>(n);
      Bool allowed = lane < uint32_t(width);
      auto [tag] = host_call<UInt32>(kCounted, &first_packet, std::tuple(lane, allowed), allowed);
      eval(tag);
    });
    EXPECT_EQ(first_packet.calls, 1u);
    EXPECT_EQ(first_packet.wrong, 0u);
  }
}

TEST_F(HostCall, UnusedResultsAreDeadCodeAndIdenticalCallsMerge) {
  LaneCounter counter;
  UInt32 lane = arange<UInt32>(16);
  { auto [tag] = host_call<UInt32>(kCounted, &counter, std::tuple(lane, Bool(true))); }
  Float other = cast<float>(lane) * 2.f;
  eval(other);
  EXPECT_EQ(counter.calls, 0u);

  // Like other ops, calls on the same nodes merge (two literals are two nodes).
  Bool all = Bool(true);
  auto [first] = host_call<UInt32>(kCounted, &counter, std::tuple(lane, all), all);
  auto [second] = host_call<UInt32>(kCounted, &counter, std::tuple(lane, all), all);
  EXPECT_EQ(first.index(), second.index());
  LaneCounter other_counter;  // another context is another call
  auto [third] = host_call<UInt32>(kCounted, &other_counter, std::tuple(lane, all), all);
  EXPECT_NE(first.index(), third.index());
  eval(first, second, third);
  EXPECT_EQ(counter.lanes, 16u);
  EXPECT_EQ(other_counter.lanes, 16u);
}

TEST_F(HostCall, EmptyArraysCallNothing) {
  // One-lane arguments broadcast to none (an evaluated branch that no lane takes).
  LaneCounter counter;
  auto [tag] = host_call<UInt32>(kCounted, &counter, std::tuple(zeros<UInt32>(0), Bool(true)));
  EXPECT_EQ(tag.size(), 0u);
  EXPECT_EQ(detail::verify_ir(), "");
  eval(tag);
  EXPECT_EQ(counter.calls, 0u);
}

// ---- control flow ---------------------------------------------------------------------

namespace {
/// The lanes the host calls of a control-flow case ran on, as one more snapshot column: the
/// same in every mode and on every backend.
Column lane_count(const LaneCounter& counter) { return Column{VarType::UInt32, {counter.lanes.load()}}; }
}  // namespace

TEST_F(HostCall, InsideWhileLoopsInBothModes) {
  const size_t n = 29;
  std::vector<uint32_t> steps(n), tags(n);
  std::vector<float> values(n);
  uint32_t lanes = 0;
  for (size_t i = 0; i < n; ++i) {
    float x = float(i % 3);
    uint32_t k = 0, tag = 0;
    for (; k < i % 5; ++k, ++lanes) {
      x = (x * float(k) + 1.f) * 0.5f + (x > float(k) ? 1.f : 0.f);
      tag += k * 10 + 1;
    }
    steps[i] = k, values[i] = x, tags[i] = tag;
  }
  LaneCounter counter;
  check_runs(
      [&](ControlMode mode) {
        counter.lanes = 0;
        UInt32 lane = arange<UInt32>(n);
        // The body reads only its state: evaluated loops compact the lanes still running.
        auto [k, x, tag, trips] = while_loop(
            std::tuple(zeros<UInt32>(n), cast<float>(lane % 3u), zeros<UInt32>(n), lane % 5u),
            [&](const UInt32& k, const Float&, const UInt32&, const UInt32& trips) { return k < trips; },
            [&](const UInt32& k, const Float& x, const UInt32& tag, const UInt32& trips) {
              auto [product, greater, picked] =
                  host_call<Float, Bool, UInt32>(kMix, nullptr, std::tuple(x, k, Bool(true)));
              auto [t] = host_call<UInt32>(kCounted, &counter, std::tuple(k, Bool(true)));
              return std::tuple(k + 1u, product * 0.5f + select(greater, Float(1.f), Float(0.f)), tag + t + picked - k,
                                trips);
            },
            mode, "host-call loop");
        Snapshot s = snap(k, x, tag);
        s.push_back(lane_count(counter));
        return s;
      },
      [&] { return Snapshot{column(steps), column(values), column(tags), Column{VarType::UInt32, {lanes}}}; });
}

// Staging memory is allocated once per kernel call, not per iteration: a long symbolic
// loop would otherwise run out of stack.
TEST_F(HostCall, LongSymbolicLoopsReuseTheirStaging) {
  LaneCounter counter;
  auto [k, total] = while_loop(
      std::tuple(zeros<UInt32>(3), zeros<UInt32>(3)), [](const UInt32& k, const UInt32&) { return k < 300000u; },
      [&](const UInt32& k, const UInt32& total) {
        auto [t] = host_call<UInt32>(kCounted, &counter, std::tuple(k, Bool(true)));
        return std::tuple(k + 1u, total + (t & 1u));
      },
      ControlMode::Symbolic, "long");
  EXPECT_EQ(total.to_vector(), std::vector<uint32_t>(3, 300000u));
  EXPECT_EQ(counter.lanes, 900000u);
}

TEST_F(HostCall, InsideIfStmtAndDispatchInBothModes) {
  const size_t n = 23;
  std::vector<float> branch(n), shaded(n);
  uint32_t branch_lanes = 0, shaded_lanes = 0;
  for (size_t i = 0; i < n; ++i) {
    float a = float(i % 4);
    branch[i] = i % 3 == 0 ? a * float(i) + 1.f : a - 1.f;
    branch_lanes += i % 3 == 0;
    uint32_t id = i % 3;
    shaded[i] = id == 1 ? a * 2.f + 1.f + float(i * 10 + 1) : id == 2 ? a * 3.f : 0.f;
    shaded_lanes += id == 1;
  }

  struct Shader {
    virtual ~Shader() = default;
    virtual Float shade(const Float& a, const UInt32& lane) = 0;
  };
  struct Called : Shader {  // a host call inside an instance
    LaneCounter* counter = nullptr;
    Float shade(const Float& a, const UInt32& lane) override {
      auto [p, g, c] = host_call<Float, Bool, UInt32>(kMix, nullptr, std::tuple(a, UInt32(2u), Bool(false)));
      auto [t] = host_call<UInt32>(kCounted, counter, std::tuple(lane, Bool(true)));
      return p + cast<float>(t);
    }
  };
  struct Tripled : Shader {
    Float shade(const Float& a, const UInt32&) override { return a * 3.f; }
  };

  LaneCounter branch_counter, shaded_counter;
  Called called;
  called.counter = &shaded_counter;
  Tripled tripled;
  Registry<Shader> shaders;
  shaders.add(&called);
  shaders.add(&tripled);
  check_runs(
      [&](ControlMode mode) {
        branch_counter.lanes = shaded_counter.lanes = 0;
        UInt32 lane = arange<UInt32>(n);
        Float a = cast<float>(lane % 4u);
        Float b = if_stmt(
            lane % 3u == 0u,
            [&](const Float& a, const UInt32& lane) {
              auto [p, g, c] = host_call<Float, Bool, UInt32>(kMix, nullptr, std::tuple(a, lane, Bool(true)));
              auto [t] = host_call<UInt32>(kCounted, &branch_counter, std::tuple(lane, Bool(true)));
              return p + cast<float>(t * 0u);
            },
            [](const Float& a, const UInt32&) { return a - 1.f; }, std::tuple(a, lane), mode);
        Float s = dispatch(
            shaders, lane % 3u,
            [](Shader& shader, const Float& a, const UInt32& lane) { return shader.shade(a, lane); },
            std::tuple(a, lane), mode);
        Snapshot result = snap(b, s);
        result.push_back(lane_count(branch_counter));
        result.push_back(lane_count(shaded_counter));
        return result;
      },
      [&] {
        return Snapshot{column(branch), column(shaded), Column{VarType::UInt32, {branch_lanes}},
                        Column{VarType::UInt32, {shaded_lanes}}};
      });
}

// ---- kernel identity: the address and the context are launch parameters -------------

TEST_F(HostCall, AddressAndContextChangeWithoutRecompiling) {
  const HostFunction times("test_scaled", {VarType::Float32}, {VarType::Float32}, scaled);
  const HostFunction times_plus_one("test_scaled", {VarType::Float32}, {VarType::Float32}, scaled_plus_one);
  EXPECT_EQ(times.id(), times_plus_one.id());
  auto run = [](const HostFunction& f, float* scale) {
    auto [y] = host_call<Float>(f, scale, std::tuple(arange<Float>(20)));
    return y.to_vector();
  };
  float two = 2.f, five = 5.f;
  EXPECT_EQ(run(times, &two)[3], 6.f);
  size_t compiles = cache_stats().compiles;
  kernel_history(true);
  EXPECT_EQ(run(times_plus_one, &two)[3], 7.f);
  EXPECT_EQ(run(times, &five)[3], 15.f);
  EXPECT_EQ(run(times_plus_one, &five)[3], 16.f);
  EXPECT_EQ(cache_stats().compiles, compiles);
  for (const KernelLaunch& launch : kernel_history()) {
    EXPECT_EQ(launch.source, KernelSource::Memory) << launch.reason;
    EXPECT_EQ(launch.parameters, 2u);  // the address and the context
  }
}

TEST_F(HostCall, TheFunctionIsPartOfTheKernelsShape) {
  const HostFunction times("test_shape_a", {VarType::Float32}, {VarType::Float32}, scaled);
  const HostFunction renamed("test_shape_b", {VarType::Float32}, {VarType::Float32}, scaled);
  float two = 2.f;
  set_generalization_threshold(1);  // every literal slot a parameter: the function's id is not one
  kernel_history(true);
  for (const HostFunction* f : {&times, &renamed}) {
    auto [y] = host_call<Float>(*f, &two, std::tuple(arange<Float>(8)));
    eval(y);
  }
  set_generalization_threshold(2);
  std::vector<KernelLaunch> history = kernel_history();
  ASSERT_EQ(history.size(), 2u);
  EXPECT_NE(history[0].shape_hash, history[1].shape_hash);
  EXPECT_NE(history[1].ir().find("host_call \"test_shape_b\""), std::string::npos) << history[1].ir();
}

// ---- a second process: the kernel from disk, the function at that process's address ----

namespace {

/// The second process: one host call (with the function's variant 0 or 1, at this
/// process's address), then its cache statistics and a result.
int disk_cache_child(int variant) {
  const HostFunction f("test_disk_scaled", {VarType::Float32}, {VarType::Float32}, variant ? scaled_plus_one : scaled);
  float three = 3.f;
  auto [y] = host_call<Float>(f, &three, std::tuple(arange<Float>(16)));
  std::vector<float> values = y.to_vector();
  CacheStats stats = cache_stats();
  std::printf("compiles=%zu disk_hits=%zu y3=%g\n", stats.compiles, stats.disk_hits, double(values[3]));
  return 0;
}

struct ChildReport {
  size_t compiles = 99, disk_hits = 99;
  double y3 = 0;
};

ChildReport run_child(const std::string& cache_dir, int variant) {
  std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  std::string command = "KILN_CACHE_DIR='" + cache_dir + "' KILN_DISK_CACHE=1 '" + self + "' --disk-cache-child " +
                        std::to_string(variant);
  ChildReport report;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return report;
  char line[256] = {};
  if (!std::fgets(line, sizeof(line), pipe) ||
      std::sscanf(line, "compiles=%zu disk_hits=%zu y3=%lf", &report.compiles, &report.disk_hits, &report.y3) != 3)
    ADD_FAILURE() << "the child printed: " << line;
  EXPECT_EQ(pclose(pipe), 0);
  return report;
}

}  // namespace

TEST_F(HostCall, ASecondProcessLoadsTheKernelAndCallsItsOwnFunction) {
  char pattern[] = "/tmp/kiln-host-call-XXXXXX";
  ASSERT_NE(mkdtemp(pattern), nullptr);
  std::string cache_dir = pattern;
  ChildReport first = run_child(cache_dir, 0);
  EXPECT_GE(first.compiles, 1u);
  EXPECT_EQ(first.disk_hits, 0u);
  EXPECT_EQ(first.y3, 9.0);
  ChildReport second = run_child(cache_dir, 1);  // the same kernel, another function behind the name
  EXPECT_EQ(second.compiles, 0u);
  EXPECT_GE(second.disk_hits, 1u);
  EXPECT_EQ(second.y3, 10.0);
  std::filesystem::remove_all(cache_dir);
}

// ---- errors ---------------------------------------------------------------------------

namespace {
template <typename Error, typename Fn> void expect_error(Fn&& fn, const std::vector<std::string>& parts) {
  try {
    fn();
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    for (const std::string& part : parts)
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what() << "\nlacks: " << part;
  }
}
}  // namespace

TEST_F(HostCall, BadInputsRaiseNamingTheFunction) {
  Float x = arange<Float>(10);
  UInt32 u = arange<UInt32>(10);
  Bool b = u > 4u;
  expect_error<TypeError>([&] { host_call<Float>(kMix, nullptr, std::tuple(x, u)); },
                          {"host_call('test_mix')", "2 input arrays given", "takes 3 (f32, u32, bool)"});
  expect_error<TypeError>([&] { host_call<Float>(kMix, nullptr, std::tuple(x, x, b)); },
                          {"host_call('test_mix')", "input 1 is f32[10]", "takes u32 there"});
  expect_error<SizeError>([&] { host_call<Float>(kMix, nullptr, std::tuple(x, arange<UInt32>(7), b)); },
                          {"host_call('test_mix')", "incompatible array sizes 10 and 7"});
  expect_error<SizeError>([&] { host_call<Float>(kMix, nullptr, std::tuple(x, u, b), full<Bool>(true, 3)); },
                          {"host_call('test_mix')", "sizes"});
  expect_error<ValueError>(
      [&] {
        detail::Values inputs = detail::flatten_values(std::tuple(x, u, b));
        inputs[0] = detail::Handle();
        detail::host_call(kMix, nullptr, inputs, b.index());
      },
      {"host_call", "empty"});
  expect_error<TypeError>(
      [&] {
        detail::Values inputs = detail::flatten_values(std::tuple(x, u, b));
        detail::host_call(kMix, nullptr, inputs, x.index());
      },
      {"host_call('test_mix')", "mask must be Bool", "f32[10]"});
}

TEST_F(HostCall, BadRegistrationsRaise) {
  expect_error<ValueError>([] { HostFunction("test_mix", {VarType::Float32}, {VarType::Float32}, mix); },
                           {"HostFunction('test_mix')", "(f32, u32, bool) -> (f32, bool, u32)", "not (f32) -> (f32)"});
  expect_error<ValueError>([] { HostFunction("", {VarType::Float32}, {VarType::Float32}, mix); }, {"name is empty"});
  expect_error<ValueError>([] { HostFunction("test_null", {VarType::Float32}, {VarType::Float32}, nullptr); },
                           {"HostFunction('test_null')", "null"});
  expect_error<ValueError>([] { HostFunction("test_no_outputs", {VarType::Float32}, {}, mix); },
                           {"HostFunction('test_no_outputs')", "no outputs"});
  // The same name and signature again is the same function.
  EXPECT_EQ(HostFunction("test_mix", kMix.inputs(), kMix.outputs(), counted).id(), kMix.id());
}

// ---- long kernels split into pieces ---------------------------------------------------

namespace {

/// Restores the kernel split and the disk cache: a kernel compiled whole (or on disk) must
/// not stand in for the split one.
class HostCallSplit : public HostCall {
 protected:
  void SetUp() override {
    set_flag(Flag::DiskCache, false);
    flush_kernel_cache();
  }
  void TearDown() override {
    set_kernel_split(split_);
    set_flag(Flag::DiskCache, disk_);
    flush_kernel_cache();
    HostCall::TearDown();
  }

 private:
  uint32_t split_ = kernel_split();
  bool disk_ = flag(Flag::DiskCache);
};

/// A long float chain with host calls in it: their arguments are computed over many
/// statements, and one output is read long after the call.
std::vector<std::vector<uint64_t>> long_program_with_calls() {
  const size_t n = 70;
  UInt32 lane = arange<UInt32>(n);
  Float f = cast<float>(lane) * 0.01f;
  Float late;
  for (int r = 0; r < 60; ++r) {
    f = fma(f, Float(0.75f), Float(0.5f)) + cast<float>(lane % 3u);
    if (r % 20 == 10) {
      UInt32 k = lane % 7u + uint32_t(r);
      auto [p, g, c] = host_call<Float, Bool, UInt32>(kMix, nullptr, std::tuple(f * 0.5f, k, f > 1.f), lane % 5u != 0u);
      f = f + p * 0.001f;
      late = select(g, cast<float>(c), Float(-1.f));
    }
  }
  Float out = f + late;
  eval(out);
  return {lane_bits(out.to_vector())};
}

}  // namespace

TEST_F(HostCallSplit, CallsStayInOnePieceAndMatchTheInterpreter) {
  auto reference = test::run_on(true, long_program_with_calls);
  for (uint32_t split : {3u, 7u, 40u}) {
    SCOPED_TRACE("pieces of " + std::to_string(split));
    flush_kernel_cache();
    kernel_history(true);
    set_kernel_split(split);
    EXPECT_EQ(long_program_with_calls(), reference);
    // No piece starts between a call's first argument cell and its last result.
    std::shared_ptr<const detail::KernelForm> form;
    for (const KernelLaunch& launch : kernel_history())
      if (launch.listing && (!form || launch.listing->form->statements.size() > form->statements.size()))
        form = launch.listing->form;
    ASSERT_TRUE(form);
    detail::KernelSplit plan = detail::plan_kernel_split(*form, split, 1u << 20);
    EXPECT_GT(plan.pieces(), 2u);
    size_t calls = 0, longest = 0;
    for (uint32_t c = 0; c < form->statements.size(); ++c) {
      if (form->statements[c].op != Op::HostCall) continue;
      ++calls;
      uint32_t first = detail::host_argument_cells(*form, c).front(), last = c;
      for (uint32_t i = c; i < form->statements.size(); ++i)
        if (form->statements[i].op == Op::HostResult && form->statements[i].operands[0] == c) last = i;
      longest = std::max<size_t>(longest, last - first);
      for (uint32_t start : plan.starts) EXPECT_FALSE(start > first && start <= last) << "piece starts at " << start;
    }
    EXPECT_EQ(calls, 3u);
    EXPECT_GT(longest, 40u) << "the last call's output is read long after it";
  }
}

// ---- derivatives and printers ---------------------------------------------------------

TEST_F(HostCall, ResultsCarryNoDerivatives) {
  Float x = arange<Float>(8);
  enable_grad(x);
  auto [p, g, c] = host_call<Float, Bool, UInt32>(kMix, nullptr, std::tuple(x, UInt32(2u), Bool(true)));
  EXPECT_EQ(p.ad_index(), 0u);
  Float y = x * 3.f + p;
  backward(sum(y));
  EXPECT_EQ(grad(x).to_vector(), std::vector<float>(8, 3.f));

  Float z = arange<Float>(8);
  enable_grad(z);
  auto [q, h, d] = host_call<Float, Bool, UInt32>(kMix, nullptr, std::tuple(z * 2.f, UInt32(1u), Bool(true)));
  Float w = z + q;
  forward(z);
  EXPECT_EQ(grad(w).to_vector(), std::vector<float>(8, 1.f));
}

TEST_F(HostCall, SymbolicLoopsAroundCallsDifferentiate) {
  // x <- 2 x + f(x) three times: d/dx0 = 8 (the call's result is a constant).
  for (bool reverse : {true, false}) {
    SCOPED_TRACE(reverse ? "reverse" : "forward");
    Float x = arange<Float>(6);
    enable_grad(x);
    auto [k, y] = while_loop(
        std::tuple(zeros<UInt32>(6), x), [](const UInt32& k, const Float&) { return k < 3u; },
        [](const UInt32& k, const Float& y) {
          auto [p, g, c] = host_call<Float, Bool, UInt32>(kMix, nullptr, std::tuple(y, k, Bool(true)));
          return std::tuple(k + 1u, y * 2.f + p);
        },
        ControlMode::Symbolic, "doubling", LoopDerivative{4, false});
    if (reverse) {
      backward(sum(y));
      EXPECT_EQ(grad(x).to_vector(), std::vector<float>(6, 8.f));
    } else {
      forward(x);
      EXPECT_EQ(grad(y).to_vector(), std::vector<float>(6, 8.f));
    }
  }
}

TEST_F(HostCall, PrintersNameTheFunction) {
  UInt32 lane = arange<UInt32>(4);
  auto [p, g, c] = host_call<Float, Bool, UInt32>(kMix, nullptr, std::tuple(Float(1.f), lane, Bool(true)));
  std::string listing = ir_listing();
  EXPECT_NE(listing.find("host_call \"test_mix\""), std::string::npos) << listing;
  EXPECT_NE(listing.find("HostResult %"), std::string::npos) << listing;
  EXPECT_NE(listing.find("output 2"), std::string::npos) << listing;
  std::string dot = graphviz(g);
  EXPECT_NE(dot.find("host_call \\\"test_mix\\\""), std::string::npos) << dot;
  kernel_history(true);
  eval(c);
  std::string ir = kernel_history().back().ir();
  EXPECT_NE(ir.find("host_call \"test_mix\""), std::string::npos) << ir;
  EXPECT_NE(ir.find("u32 HostResult %"), std::string::npos) << ir;
}

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], "--disk-cache-child") == 0) return disk_cache_child(std::atoi(argv[2]));
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
