// The control-flow group of kiln_bench (see control_bench.h).
//
// Each lane traces one path: while_loop over the bounces, and at each bounce dispatch()
// calls the virtual bounce() of the lane's material (a Registry of three C++ objects whose
// scalar parameter, a plain float member, becomes a literal in the kernel). The same code
// runs in ControlMode::Symbolic (one kernel holding a real loop) and ControlMode::Evaluated
// (kernels per bounce and per material over the compacted active lanes); the radiance of
// the two must agree bit for bit, and with the hand-written loop of bench/baselines.cpp.
//
// What is measured, per mode: a render (tracing + eval of the radiance, median after
// warm-up); the peak of memory_stats() during a warm render minus what was in use before
// it (the evaluated start state, which both modes share); codegen + LLVM time of the first
// render from empty caches (kernel_history()); and the kernels compiled when the diffuse
// albedo changes three times (the second variant generalizes the literal into a parameter,
// so the second and third changes should compile nothing). The disk cache is off.
#include "control_bench.h"

#include "baselines.h"
#include "cache_bench.h"
#include "harness.h"
#include "path_workload.h"

#include <kiln/kiln.h>

#include <array>
#include <bit>
#include <cstdio>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

namespace bench {
namespace {

using kiln::Array3f;
using kiln::Bool;
using kiln::ControlMode;
using kiln::Float;
using kiln::PCG32;
using kiln::UInt32;

/// A host scalar as a labelled literal (the label names it in compilation reasons).
Float labelled(float value, const char* label) {
  Float literal(value);
  kiln::set_label(literal, label);
  return literal;
}

/// A surface as a user of a renderer writes one: a class with a virtual method.
class Material {
 public:
  /// The generator, throughput, radiance and direction after the bounce, and whether the
  /// path goes on.
  using Bounce = std::tuple<PCG32, Array3f, Array3f, Array3f, Bool>;
  virtual ~Material() = default;
  virtual Bounce bounce(PCG32 rng, Array3f throughput, Array3f radiance, Array3f direction) const = 0;
};

class Diffuse final : public Material {
 public:
  explicit Diffuse(float albedo) : albedo(albedo) {}
  Bounce bounce(PCG32 rng, Array3f throughput, Array3f radiance, Array3f direction) const override {
    Float u1 = rng.next_float32();
    Float u2 = rng.next_float32();
    path::diffuse_bounce(direction, throughput, labelled(albedo, "diffuse.albedo"), u1, u2);
    return {rng, throughput, radiance, direction, Bool(true)};
  }
  float albedo;
};

class Glossy final : public Material {
 public:
  explicit Glossy(float roughness) : roughness(roughness) {}
  Bounce bounce(PCG32 rng, Array3f throughput, Array3f radiance, Array3f direction) const override {
    Float u1 = rng.next_float32();
    Float u2 = rng.next_float32();
    Float u3 = rng.next_float32();
    path::glossy_bounce(direction, throughput, labelled(roughness, "glossy.roughness"), u1, u2, u3);
    return {rng, throughput, radiance, direction, Bool(true)};
  }
  float roughness;
};

class Emitter final : public Material {
 public:
  explicit Emitter(float strength) : strength(strength) {}
  Bounce bounce(PCG32 rng, Array3f throughput, Array3f radiance, Array3f direction) const override {
    path::emit<Float>(radiance, throughput, labelled(strength, "emitter.strength"));
    return {rng, throughput, radiance, direction, Bool(false)};
  }
  float strength;
};

/// The three materials and the registry that dispatch() calls them through.
struct Scene {
  explicit Scene(const path::Parameters& p) : diffuse(p.albedo), glossy(p.roughness), emitter(p.strength) {
    if (registry.add(&diffuse) != path::kDiffuse || registry.add(&glossy) != path::kGlossy ||
        registry.add(&emitter) != path::kEmitter)
      throw std::logic_error("control benchmark: the registry's ids are not those of path_workload.h");
  }
  Scene(const Scene&) = delete;
  Scene& operator=(const Scene&) = delete;
  Diffuse diffuse;
  Glossy glossy;
  Emitter emitter;
  kiln::Registry<Material> registry;
};

/// The evaluated start of every path, shared by both modes (as path_trace_loop starts).
struct Start {
  PCG32 rng;  ///< after the first material's draw
  Array3f direction;
  UInt32 material;
  size_t size() const { return material.size(); }
};

Float pixel_coordinate(const UInt32& p) { return (kiln::cast<float>(p) + 0.5f) * 0.001953125f - 1.f; }

Start make_start(size_t n) {
  Start s{PCG32(n), Array3f(), UInt32()};
  UInt32 lane = kiln::arange<UInt32>(n);
  s.direction =
      path::normalize3<Float>(Array3f{pixel_coordinate(lane % 1024u), pixel_coordinate(lane / 1024u), Float(1.f)});
  s.material = path::draw_material<Float, UInt32>(s.rng.next_float32());
  kiln::eval(s.rng.state, s.rng.inc, s.direction, s.material);
  return s;
}

/// generator, throughput, radiance, direction, material id, depth, active
using State = std::tuple<PCG32, Array3f, Array3f, Array3f, UInt32, UInt32, Bool>;

/// Traces every path in `mode` and returns the radiance (not evaluated yet in symbolic mode).
Array3f render(const Scene& scene, const Start& start, ControlMode mode) {
  size_t n = start.size();
  State initial{start.rng,
                Array3f(kiln::full<Float>(1.f, n)),
                Array3f(kiln::full<Float>(0.f, n)),
                start.direction,
                start.material,
                kiln::zeros<UInt32>(n),
                kiln::full<Bool>(true, n)};
  auto running = [](const PCG32&, const Array3f&, const Array3f&, const Array3f&, const UInt32&, const UInt32&,
                    const Bool& active) { return active; };
  auto bounce = [&](const PCG32& rng, const Array3f& throughput, const Array3f& radiance, const Array3f& direction,
                    const UInt32& material, const UInt32& depth, const Bool&) {
    auto [next_rng, next_throughput, next_radiance, next_direction, alive] = kiln::dispatch(
        scene.registry, material,
        [](Material& m, const PCG32& r, const Array3f& t, const Array3f& l, const Array3f& d) {
          return m.bounce(r, t, l, d);
        },
        std::make_tuple(rng, throughput, radiance, direction), mode, "material");
    Bool survive = path::roulette<Float>(next_throughput, next_rng.next_float32(), depth);
    UInt32 next_depth = depth + 1u;
    UInt32 next_material = path::draw_material<Float, UInt32>(next_rng.next_float32());
    Bool active = alive && survive && next_depth < path::kMaxBounces;
    return State{next_rng, next_throughput, next_radiance, next_direction, next_material, next_depth, active};
  };
  State final = kiln::while_loop(initial, running, bounce, mode, "bounce");
  return std::get<2>(final);
}

/// One channel per component.
using Image = std::array<std::vector<float>, 3>;

Image to_image(const Array3f& radiance) {
  return {radiance.x.to_vector(), radiance.y.to_vector(), radiance.z.to_vector()};
}

/// "bit-exact", or how many lanes differ and the first of them.
std::string compare(const Image& a, const Image& b, const char* a_name, const char* b_name) {
  size_t lanes = a[0].size(), differing = 0, first = 0;
  if (b[0].size() != lanes) return "sizes differ";
  for (size_t i = 0; i < lanes; ++i) {
    bool same = true;
    for (int c = 0; c < 3; ++c) same = same && std::memcmp(&a[c][i], &b[c][i], sizeof(float)) == 0;
    if (!same && differing++ == 0) first = i;
  }
  if (differing == 0) return "bit-exact";
  char text[256];
  std::snprintf(text, sizeof(text),
                "%zu/%zu lanes DIFFER, first lane %zu: %s (%.9g, %.9g, %.9g) vs %s (%.9g, %.9g, %.9g)", differing,
                lanes, first, a_name, a[0][first], a[1][first], a[2][first], b_name, b[0][first], b[1][first],
                b[2][first]);
  return text;
}

/// The compilations kernel_history() recorded since it was last cleared (it is cleared).
struct Compilations {
  size_t kernels = 0;   ///< compiled or generalized
  double seconds = 0;   ///< their codegen + LLVM time
  size_t launches = 0;  ///< all launches, cache hits included
};

bool compiled(const kiln::KernelLaunch& l) {
  return l.source == kiln::KernelSource::Compiled || l.source == kiln::KernelSource::Generalized;
}

Compilations take_compilations() {
  Compilations c;
  for (const kiln::KernelLaunch& l : kiln::kernel_history(true)) {
    c.launches++;
    if (compiled(l)) {
      c.kernels++;
      c.seconds += (l.codegen_ms + l.compile_ms) / 1e3;
    }
  }
  return c;
}

/// What one mode did, apart from its timing.
struct ModeResult {
  Compilations first;      ///< the first render from empty caches
  double first_s = 0;      ///< its wall time (trace, compile, run)
  Compilations warm;       ///< a render after that (should compile nothing)
  size_t peak_bytes = 0;   ///< above what was in use before the warm render
  size_t start_bytes = 0;  ///< in use before it: the start state
  Image image;             ///< the warm render's radiance
  std::array<size_t, 3> change_compiles{};
  std::string late_compile;  ///< the first kernel the second or third change compiled, and why
  Image changed_image;       ///< after the last change
};

const char* mode_name(ControlMode mode) { return mode == ControlMode::Symbolic ? "symbolic" : "evaluated"; }

constexpr std::array<float, 3> kAlbedoChanges = {0.65f, 0.6f, 0.55f};

/// First render from empty caches, then a warm render whose peak memory is measured.
ModeResult first_renders(Scene& scene, const Start& start, ControlMode mode) {
  ModeResult r;
  kiln::flush_kernel_cache();
  kiln::kernel_history(true);
  r.first_s = time_once([&] { kiln::eval(render(scene, start, mode)); });
  r.first = take_compilations();

  r.start_bytes = kiln::memory_stats().current_bytes;
  kiln::reset_peak_memory();
  Array3f radiance = render(scene, start, mode);
  kiln::eval(radiance);
  r.peak_bytes = kiln::memory_stats().peak_bytes - r.start_bytes;
  r.warm = take_compilations();
  r.image = to_image(radiance);
  return r;
}

/// Renders once at the base albedo from empty caches, then once per changed albedo,
/// counting the kernels each change compiles.
void albedo_changes(Scene& scene, const Start& start, ControlMode mode, ModeResult& r) {
  float base = scene.diffuse.albedo;
  kiln::flush_kernel_cache();
  kiln::eval(render(scene, start, mode));
  kiln::kernel_history(true);
  for (size_t k = 0; k < kAlbedoChanges.size(); ++k) {
    scene.diffuse.albedo = kAlbedoChanges[k];
    Array3f radiance = render(scene, start, mode);
    kiln::eval(radiance);
    if (k > 0 && r.late_compile.empty())
      for (const kiln::KernelLaunch& l : kiln::kernel_history())
        if (compiled(l)) {
          r.late_compile = std::to_string(l.size) + "-lane launch of " + std::to_string(l.ops) + " ops: " + l.reason;
          break;
        }
    r.change_compiles[k] = take_compilations().kernels;
    if (k + 1 == kAlbedoChanges.size()) r.changed_image = to_image(radiance);
  }
  scene.diffuse.albedo = base;
}

/// The C++ loop's radiance, and its number of bounces.
struct Baseline {
  Image image;
  uint64_t bounces = 0;
};

Baseline baseline_render(const path::Parameters& params, size_t n) {
  Baseline b;
  for (auto& channel : b.image) channel.resize(n);
  b.bounces = path_trace_loop(params, n, b.image[0].data(), b.image[1].data(), b.image[2].data(), kiln::block_size());
  return b;
}

std::string megabytes(size_t bytes) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f MB", double(bytes) / 1e6);
  return text;
}

}  // namespace

void run_control(bool quick, std::vector<Row>& rows, std::vector<std::string>& failures) {
  ScopedFlag no_disk(kiln::Flag::DiskCache, false);  // every compilation is real
  const size_t n = quick ? size_t(1) << 16 : size_t(1) << 20;
  const int reps = quick ? 3 : 7;
  const path::Parameters params;
  Scene scene(params);
  const ControlMode modes[] = {ControlMode::Symbolic, ControlMode::Evaluated};

  // Warm-up on a few lanes: starts LLVM, so neither mode's first compile pays for that.
  {
    Start small = make_start(4096);
    for (ControlMode mode : modes) kiln::eval(render(scene, small, mode));
  }

  Start start = make_start(n);
  ModeResult result[2];
  for (int m = 0; m < 2; ++m) result[m] = first_renders(scene, start, modes[m]);
  ModeResult& symbolic = result[0];
  ModeResult& evaluated = result[1];

  Baseline baseline = baseline_render(params, n);
  std::string modes_agree = compare(symbolic.image, evaluated.image, "symbolic", "evaluated");
  if (modes_agree != "bit-exact") failures.push_back("control: radiance of symbolic vs evaluated mode: " + modes_agree);
  std::string baseline_agrees = compare(symbolic.image, baseline.image, "kiln", "C++");

  auto kiln_rep = [&](ControlMode mode) {
    return [&, mode] { return time_once([&] { kiln::eval(render(scene, start, mode)); }); };
  };
  auto baseline_rep = [&] { return time_once([&] { baseline_render(params, n); }); };
  std::vector<double> t =
      alternate(1, reps, {kiln_rep(ControlMode::Symbolic), kiln_rep(ControlMode::Evaluated), baseline_rep});
  double symbolic_s = t[0], evaluated_s = t[1], baseline_s = t[2];

  for (int m = 0; m < 2; ++m) albedo_changes(scene, start, modes[m], result[m]);
  std::string changed_agree = compare(symbolic.changed_image, evaluated.changed_image, "symbolic", "evaluated");
  if (changed_agree != "bit-exact")
    failures.push_back("control: radiance of symbolic vs evaluated mode after the albedo changed to " +
                       std::to_string(kAlbedoChanges.back()) + ": " + changed_agree);
  path::Parameters changed = params;
  changed.albedo = kAlbedoChanges.back();
  std::string changed_baseline = compare(symbolic.changed_image, baseline_render(changed, n).image, "kiln", "C++");

  char lanes[32];
  std::snprintf(lanes, sizeof(lanes), "2^%d", std::countr_zero(n));
  char bounces[64];
  std::snprintf(bounces, sizeof(bounces), "%.2f bounces per path", double(baseline.bounces) / double(n));
  std::string runs = "median of " + std::to_string(reps);

  rows.push_back({"path tracer " + std::string(lanes) + " lanes: symbolic vs evaluated", symbolic_s, evaluated_s,
                  Goal::RatioAtLeast, 1.0,
                  "while_loop (<= " + std::to_string(path::kMaxBounces) + " bounces) + dispatch over 3 materials; " +
                      "trace + eval per render, " + runs + "; " + bounces + "; modes " + modes_agree});
  rows.push_back({"  peak memory: symbolic vs evaluated", double(symbolic.peak_bytes), double(evaluated.peak_bytes),
                  Goal::RatioAtLeast, 3.0,
                  "memory_stats().peak_bytes of a warm render minus the " + megabytes(symbolic.start_bytes) +
                      " in use before it (the start state)",
                  Unit::Bytes});
  rows.push_back({"  first render's compile: symbolic vs evaluated", symbolic.first.seconds, evaluated.first.seconds,
                  Goal::None, 0,
                  std::to_string(symbolic.first.kernels) + " vs " + std::to_string(evaluated.first.kernels) +
                      " kernels compiled (codegen+LLVM, kernel_history); first render " +
                      format_seconds(symbolic.first_s) + " vs " + format_seconds(evaluated.first_s) +
                      "; launches per warm render " + std::to_string(symbolic.warm.launches) + " vs " +
                      std::to_string(evaluated.warm.launches)});
  for (int m = 0; m < 2; ++m) {
    const ModeResult& r = result[m];
    const auto& c = r.change_compiles;
    std::string warm = r.warm.kernels ? "; the warm render compiled " + std::to_string(r.warm.kernels) + "!" : "";
    rows.push_back({std::string("  recompiles after warm-up: ") + mode_name(modes[m]), double(c[1] + c[2]), kNone,
                    Goal::KilnAtMost, 0,
                    "kernels compiled when diffuse.albedo changes: " + std::to_string(c[0]) + ", " +
                        std::to_string(c[1]) + ", " + std::to_string(c[2]) +
                        " (the first change generalizes; the value is the last two)" + warm +
                        (r.late_compile.empty() ? "" : "; first of them: " + r.late_compile),
                    Unit::Count});
  }
  rows.push_back({"path tracer " + std::string(lanes) + " lanes: symbolic vs C++ loop", symbolic_s, baseline_s,
                  Goal::None, 0,
                  "per-lane loop with early exit and a switch, TBB; evaluated mode " + format_seconds(evaluated_s) +
                      "; " + baseline_agrees + "; after the albedo changes " + changed_baseline});
}

}  // namespace bench
