// chunked_map() and checkpoint() (map.h, src/control/chunked_map.cpp) on a small NeRF-shaped
// model written with TensorXf: positional encoding of points along each ray, a three-layer
// MLP (matmul + bias, ReLU), volume compositing with an exclusive cumsum, and an MSE loss.
// The chunked render must give the unchunked loss and gradients for any chunk size; its
// peak memory must not grow with the samples per ray while the unchunked one does; reverse
// mode must really recompute each chunk; later chunks must reuse the first chunk's kernels;
// and it must compose with checkpoint, while_loop, suspend_grad and forward mode. Misuse
// raises a specific error.
#include "autodiff_test_support.h"

#include <kiln/map.h>
#include <kiln/random.h>
#include <kiln/tensor.h>

#include <cmath>
#include <string>
#include <vector>

using namespace kiln;
using kiln::test::AutodiffTest;
using kiln::test::expect_error;

namespace {

/// Reproducible values in [lo, hi].
std::vector<float> values(size_t n, double phase, double lo = -1, double hi = 1) {
  std::vector<float> out(n);
  for (size_t i = 0; i < n; ++i)
    out[i] = float(lo + (hi - lo) * std::fmod(phase + 0.6180339887498949 * double(i), 1.0));
  return out;
}
TensorXf tensor(const Shape& shape, double phase, double lo = -1, double hi = 1) {
  size_t n = 1;
  for (size_t d : shape) n *= d;
  std::vector<float> v = values(n, phase, lo, hi);
  return TensorXf::from(v.data(), shape);
}

// ---- the model -------------------------------------------------------------------------------

constexpr size_t kHidden = 32;
constexpr float kNear = 2.f, kFar = 6.f;
constexpr float kFrequencies[] = {1.f, 2.f, 4.f};
constexpr size_t kEncoded = 3 + 3 * 2 * std::size(kFrequencies);

struct Params {
  TensorXf w1, b1, w2, b2, w3, b3;
  std::vector<TensorXf*> all() { return {&w1, &b1, &w2, &b2, &w3, &b3}; }
};
Params make_params() {
  auto scale = [](size_t fan_in) { return 1.5 / std::sqrt(double(fan_in)); };
  Params p;
  p.w1 = tensor({kEncoded, kHidden}, 0.11, -scale(kEncoded), scale(kEncoded));
  p.b1 = tensor({kHidden}, 0.23, -0.1, 0.3);
  p.w2 = tensor({kHidden, kHidden}, 0.37, -scale(kHidden), scale(kHidden));
  p.b2 = tensor({kHidden}, 0.41, -0.1, 0.3);
  p.w3 = tensor({kHidden, 4}, 0.53, -scale(kHidden), scale(kHidden));
  p.b3 = tensor({4}, 0.67, 0.0, 0.4);
  for (TensorXf* t : p.all()) eval(*t);
  return p;
}

struct Scene {
  TensorXf origins, dirs, target;  // (R, 3)
  TensorXu index;                  // (R,): the ray's number, which keys its jitter
  size_t rays = 0;
};
Scene make_scene(size_t rays) {
  Scene s;
  s.rays = rays;
  s.origins = tensor({rays, 3}, 0.05, -0.3, 0.3) + TensorXf::from(std::vector<float>{0, 0, -4}.data(), {3});
  TensorXf d = tensor({rays, 3}, 0.45, -0.2, 0.2) + TensorXf::from(std::vector<float>{0, 0, 1}.data(), {3});
  s.dirs = d / sqrt(sum(d * d, 1).reshape({-1, 1}));
  s.target = tensor({rays, 3}, 0.75, 0.1, 0.9);
  s.index = TensorXu(arange<UInt32>(rays));
  eval(s.origins, s.dirs, s.target, s.index);
  return s;
}

TensorXf relu(const TensorXf& x) { return max(x, 0.f); }
TensorXf sigmoid(const TensorXf& x) { return 1.f / (1.f + exp(-x)); }

/// (M, 3) points -> (M, kEncoded): the points, then sin and cos of each frequency times them.
TensorXf encode(const TensorXf& p) {
  std::vector<TensorXf> parts{p};
  for (float f : kFrequencies) {
    parts.push_back(sin(p * f));
    parts.push_back(cos(p * f));
  }
  return concatenate(parts, 1);
}

TensorXf mlp(const TensorXf& x, const TensorXf& w1, const TensorXf& b1, const TensorXf& w2, const TensorXf& b2,
             const TensorXf& w3, const TensorXf& b3) {
  TensorXf h = relu(matmul(x, w1) + b1);
  h = relu(matmul(h, w2) + b2);
  return matmul(h, w3) + b3;
}

/// How the MLP is called: directly, or under checkpoint().
enum class Mlp { Direct, Checkpointed };

/// Colors of rays (c, 3) from their origins, directions and indices, with `samples`
/// jittered samples per ray (PCG32 keyed by the ray's index and the sample's number).
TensorXf render(const TensorXf& origins, const TensorXf& dirs, const TensorXu& index, size_t samples,
                const TensorXf& w1, const TensorXf& b1, const TensorXf& w2, const TensorXf& b2, const TensorXf& w3,
                const TensorXf& b3, Mlp how = Mlp::Direct) {
  size_t c = origins.shape(0);
  int64_t n = int64_t(samples);
  float step = (kFar - kNear) / float(samples);
  UInt32 ray = index.reshape({-1, 1}).broadcast_to({c, samples}).array();
  UInt32 sample = arange<UInt32>(c * samples) % uint32_t(samples);
  PCG32 rng(c * samples, cast<uint64_t>(ray), cast<uint64_t>(sample));
  TensorXf t(kNear + (cast<float>(sample) + rng.next_float32()) * step, Shape{c, samples});

  TensorXf points = origins.reshape({-1, 1, 3}) + t.reshape({-1, n, 1}) * dirs.reshape({-1, 1, 3});
  TensorXf x = encode(points.reshape({-1, 3}));
  TensorXf raw = how == Mlp::Direct ? mlp(x, w1, b1, w2, b2, w3, b3)
                                    : checkpoint([](const TensorXf& x, const TensorXf& w1, const TensorXf& b1,
                                                    const TensorXf& w2, const TensorXf& b2, const TensorXf& w3,
                                                    const TensorXf& b3) { return mlp(x, w1, b1, w2, b2, w3, b3); },
                                                 x, w1, b1, w2, b2, w3, b3);
  raw = raw.reshape({-1, n, 4});
  TensorXf sigma = relu(raw.slice(2, 0, 1)).reshape({-1, n});
  TensorXf color = sigmoid(raw.slice(2, 1, 4));
  TensorXf delta = concatenate<float>({t.slice(1, 1, n) - t.slice(1, 0, n - 1), TensorXf::full(step, {c, 1})}, 1);
  TensorXf tau = sigma * delta;
  TensorXf weights = exp(-cumsum(tau, /*exclusive=*/true)) * (1.f - exp(-tau));
  return sum(weights.reshape({-1, n, 1}) * color, 1);
}

/// How the rays are rendered: all at once (chunk_size 0) or by chunked_map.
struct Run {
  size_t samples = 16;
  size_t chunk_size = 0;
  Mlp mlp = Mlp::Direct;
};

TensorXf render_all(const Scene& s, const Params& p, const Run& run) {
  if (run.chunk_size == 0)
    return render(s.origins, s.dirs, s.index, run.samples, p.w1, p.b1, p.w2, p.b2, p.w3, p.b3, run.mlp);
  size_t samples = run.samples;
  Mlp how = run.mlp;
  return chunked_map(
      [samples, how](const TensorXf& o, const TensorXf& d, const TensorXu& i, const TensorXf& w1, const TensorXf& b1,
                     const TensorXf& w2, const TensorXf& b2, const TensorXf& w3,
                     const TensorXf& b3) { return render(o, d, i, samples, w1, b1, w2, b2, w3, b3, how); },
      std::tuple(s.origins, s.dirs, s.index), std::tuple(p.w1, p.b1, p.w2, p.b2, p.w3, p.b3),
      MapOptions{.chunk_size = run.chunk_size, .name = "render"});
}

TensorXf mse(const TensorXf& rgb, const TensorXf& target) {
  TensorXf e = rgb - target;
  return mean(e * e);
}

/// One gradient step's results on the host.
struct Step {
  float loss = 0;
  std::vector<std::vector<float>> grads;  // w1, b1, w2, b2, w3, b3, then dirs
  std::vector<float> rgb;
};

Step gradient_step(const Scene& scene, Params p, const Run& run) {
  Scene s = scene;
  for (TensorXf* t : p.all()) enable_grad(*t);
  enable_grad(s.dirs);
  TensorXf rgb = render_all(s, p, run);
  TensorXf loss = mse(rgb, s.target);
  backward(loss.array());
  Step out;
  out.loss = loss.to_vector()[0];
  out.rgb = detach(rgb).to_vector();
  for (TensorXf* t : p.all()) out.grads.push_back(grad(*t).to_vector());
  out.grads.push_back(grad(s.dirs).to_vector());
  return out;
}

/// Every lane of `got` within rtol of `want`, relative to the lane or to the largest
/// magnitude of `want` (gradient lanes near zero are sums that cancel).
void expect_close(const std::vector<float>& got, const std::vector<float>& want, double rtol, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  double largest = 0;
  for (float w : want) largest = std::fmax(largest, std::fabs(w));
  size_t bad = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    double tol = rtol * (std::fabs(want[i]) + largest) + 1e-12;
    if (!(std::fabs(double(got[i]) - double(want[i])) <= tol) && bad++ < 5)
      ADD_FAILURE() << what << " lane " << i << ": " << got[i] << " vs " << want[i] << " (tol " << tol << ")";
  }
}
void expect_same_step(const Step& got, const Step& want, double rtol) {
  EXPECT_NEAR(got.loss, want.loss, rtol * std::fabs(want.loss)) << "loss";
  expect_close(got.rgb, want.rgb, rtol, "rgb");
  const char* names[] = {"w1", "b1", "w2", "b2", "w3", "b3", "dirs"};
  ASSERT_EQ(got.grads.size(), want.grads.size());
  for (size_t k = 0; k < got.grads.size(); ++k) expect_close(got.grads[k], want.grads[k], rtol, names[k]);
}

class ChunkedMap : public AutodiffTest {};
class ChunkedMapErrors : public AutodiffTest {};

// ---- (a) the same loss and gradients for every chunk size ----------------------------------

TEST_F(ChunkedMap, LossAndGradientsDoNotDependOnTheChunkSize) {
  Scene scene = make_scene(10);
  Params p = make_params();
  Step whole = gradient_step(scene, p, {});
  // The model is not degenerate: the loss and each gradient are nonzero.
  EXPECT_GT(whole.loss, 1e-4f);
  for (const auto& g : whole.grads) {
    double norm = 0;
    for (float x : g) norm += double(x) * x;
    EXPECT_GT(norm, 1e-12);
  }
  for (size_t chunk : {1u, 3u, 10u, 25u}) {  // 3 does not divide 10; 25 is more than the rays
    SCOPED_TRACE("chunk_size " + std::to_string(chunk));
    expect_same_step(gradient_step(scene, p, {.chunk_size = chunk}), whole, 1e-4);
  }
  // chunk_bytes: 3 rows of 3 + 3 floats and one uint32 each.
  SCOPED_TRACE("chunk_bytes");
  Scene s = scene;
  TensorXf rgb = chunked_map(
      [](const TensorXf& o, const TensorXf& d, const TensorXu& i, const TensorXf& w1, const TensorXf& b1,
         const TensorXf& w2, const TensorXf& b2, const TensorXf& w3, const TensorXf& b3) {
        EXPECT_LE(o.shape(0), 3u);
        return render(o, d, i, 16, w1, b1, w2, b2, w3, b3);
      },
      std::tuple(s.origins, s.dirs, s.index), std::tuple(p.w1, p.b1, p.w2, p.b2, p.w3, p.b3),
      MapOptions{.chunk_bytes = 3 * 28 + 5});
  expect_close(rgb.to_vector(), whole.rgb, 1e-5, "rgb");
}

// ---- (b) memory bounded by the chunk ----------------------------------------------------------

/// Peak bytes of one gradient step beyond what was live before it and what it leaves (the
/// loss and the gradients).
size_t step_working_set(const Scene& scene, const Params& params, const Run& run) {
  flush_memory_cache();
  size_t before = memory_stats().current_bytes;
  reset_peak_memory();
  size_t peak = 0, after = 0;
  {
    Scene s = scene;
    Params p = params;
    for (TensorXf* t : p.all()) enable_grad(*t);
    TensorXf loss = mse(render_all(s, p, run), s.target);
    backward(loss.array());
    std::vector<TensorXf> grads;
    for (TensorXf* t : p.all()) grads.push_back(grad(*t));
    for (const TensorXf& g : grads) eval(g);
    eval(loss);
    peak = memory_stats().peak_bytes;
    after = memory_stats().current_bytes;
  }
  EXPECT_GE(after, before);
  return peak - after;
}

TEST_F(ChunkedMap, PeakMemoryStaysWithinOneChunk) {
  constexpr size_t kRays = 40, kSamplesPerChunk = 1280;  // 1280 is a multiple of every N below
  Scene scene = make_scene(kRays);
  Params p = make_params();
  std::vector<size_t> chunked, whole;
  for (size_t n : {64u, 128u, 256u, 640u}) {
    chunked.push_back(step_working_set(scene, p, {.samples = n, .chunk_size = kSamplesPerChunk / n}));
    whole.push_back(step_working_set(scene, p, {.samples = n}));
    std::printf("[ memory ] N=%zu: chunked %zu bytes, unchunked %zu bytes\n", n, chunked.back(), whole.back());
  }
  for (size_t k = 1; k < chunked.size(); ++k) {
    EXPECT_LE(double(chunked[k]), 1.2 * double(chunked[0])) << "case " << k << ": the chunked peak grew";
  }
  // Negative control: without chunks the peak grows with the samples (10x more here).
  EXPECT_GE(double(whole.back()), 4.0 * double(whole[0]));
  EXPECT_LT(chunked.back() * 2, whole.back());
}

// ---- (c) reverse mode recomputes each chunk --------------------------------------------------

size_t library_calls(const std::vector<KernelLaunch>& history, const std::string& needle = "") {
  size_t n = 0;
  for (const KernelLaunch& k : history)
    if (k.source == KernelSource::Library && k.reason.find(needle) != std::string::npos) ++n;
  return n;
}

TEST_F(ChunkedMap, BackwardRecomputesEachChunksForwardPass) {
  constexpr size_t kRays = 12, kChunk = 4, kChunks = 3, kSamples = 16;
  Scene scene = make_scene(kRays);
  auto passes = [&](size_t chunk) {
    Params p = make_params();
    for (TensorXf* t : p.all()) enable_grad(*t);
    kernel_history(/*clear=*/true);
    TensorXf loss = mse(render_all(scene, p, {.samples = kSamples, .chunk_size = chunk}), scene.target);
    eval(loss);
    std::vector<KernelLaunch> primal = kernel_history(true);
    backward(loss.array());
    for (TensorXf* t : p.all()) eval(grad(*t));
    return std::pair(primal, kernel_history(true));
  };
  auto [primal_whole, backward_whole] = passes(0);
  auto [primal_chunked, backward_chunked] = passes(kChunk);
  // The first layer's forward product of one chunk: (4 rays · 16 samples) × 21 times 21 × 32.
  std::string chunk_forward = "matmul " + std::to_string(kChunk * kSamples) + "×" + std::to_string(kEncoded) + " · " +
                              std::to_string(kEncoded) + "×" + std::to_string(kHidden) + " (";
  std::string whole_forward = "matmul " + std::to_string(kRays * kSamples) + "×" + std::to_string(kEncoded) + " · " +
                              std::to_string(kEncoded) + "×" + std::to_string(kHidden) + " (";
  EXPECT_EQ(library_calls(primal_chunked, chunk_forward), kChunks);
  EXPECT_EQ(library_calls(backward_chunked, chunk_forward), kChunks) << "the chunks' forward passes did not run again";
  EXPECT_EQ(library_calls(primal_whole, whole_forward), 1u);
  EXPECT_EQ(library_calls(backward_whole, whole_forward), 0u) << "the unchunked backward pass recomputed";
  // Altogether: each chunk's primal products again, plus the products of its derivatives.
  size_t forward_per_chunk = library_calls(primal_chunked) / kChunks;
  EXPECT_EQ(library_calls(primal_chunked), kChunks * library_calls(primal_whole));
  EXPECT_EQ(library_calls(backward_chunked), kChunks * (forward_per_chunk + library_calls(backward_whole)));
}

// ---- (d) later chunks reuse the first chunk's kernels ----------------------------------------

TEST_F(ChunkedMap, LaterChunksAreCacheHits) {
  struct Restore {
    bool disk = flag(Flag::DiskCache);
    ~Restore() { set_flag(Flag::DiskCache, disk); }
  } restore;
  set_flag(Flag::DiskCache, false);
  constexpr size_t kRays = 12, kChunks = 4;
  Scene scene = make_scene(kRays);
  for (bool differentiable : {false, true}) {
    SCOPED_TRACE(differentiable ? "with gradients enabled" : "without gradients");
    Params p = make_params();
    if (differentiable)
      for (TensorXf* t : p.all()) enable_grad(*t);
    flush_kernel_cache();
    kernel_history(/*clear=*/true);
    TensorXf rgb = render_all(scene, p, {.samples = 8, .chunk_size = kRays / kChunks});
    std::vector<KernelLaunch> launches;
    for (KernelLaunch& k : kernel_history(true))
      if (k.source != KernelSource::Library) launches.push_back(std::move(k));
    ASSERT_GT(launches.size(), 0u);
    ASSERT_EQ(launches.size() % kChunks, 0u) << "the chunks launched different numbers of kernels";
    size_t per_chunk = launches.size() / kChunks;
    size_t compiled_first = 0;
    for (size_t i = 0; i < per_chunk; ++i) compiled_first += launches[i].source != KernelSource::Memory;
    EXPECT_GT(compiled_first, 0u) << "nothing was compiled: the check below would be vacuous";
    for (size_t i = per_chunk; i < launches.size(); ++i)
      EXPECT_EQ(launches[i].source, KernelSource::Memory)
          << "launch " << i << " (chunk " << i / per_chunk + 1 << ") is " << source_name(launches[i].source) << ": "
          << launches[i].reason;
  }
}

// ---- (e) composition ---------------------------------------------------------------------------

TEST_F(ChunkedMap, CheckpointInsideTheMappedFunction) {
  Scene scene = make_scene(9);
  Params p = make_params();
  Step whole = gradient_step(scene, p, {.samples = 12});
  expect_same_step(gradient_step(scene, p, {.samples = 12, .chunk_size = 4, .mlp = Mlp::Checkpointed}), whole, 1e-4);
  // checkpoint alone, without chunks, too.
  expect_same_step(gradient_step(scene, p, {.samples = 12, .mlp = Mlp::Checkpointed}), whole, 1e-4);
}

TEST_F(ChunkedMap, ChunkedMapInsideCheckpoint) {
  Scene scene = make_scene(9);
  Params params = make_params();
  Step whole = gradient_step(scene, params, {.samples = 12});
  Params p = params;
  Scene s = scene;
  for (TensorXf* t : p.all()) enable_grad(*t);
  enable_grad(s.dirs);
  TensorXf rgb = checkpoint(
      [](const TensorXf& o, const TensorXf& d, const TensorXu& i, const TensorXf& w1, const TensorXf& b1,
         const TensorXf& w2, const TensorXf& b2, const TensorXf& w3, const TensorXf& b3) {
        Scene inner;
        inner.origins = o;
        inner.dirs = d;
        inner.index = i;
        return render_all(inner, Params{w1, b1, w2, b2, w3, b3}, {.samples = 12, .chunk_size = 2});
      },
      s.origins, s.dirs, s.index, p.w1, p.b1, p.w2, p.b2, p.w3, p.b3);
  TensorXf loss = mse(rgb, s.target);
  backward(loss.array());
  Step got;
  got.loss = loss.to_vector()[0];
  got.rgb = detach(rgb).to_vector();
  for (TensorXf* t : p.all()) got.grads.push_back(grad(*t).to_vector());
  got.grads.push_back(grad(s.dirs).to_vector());
  expect_same_step(got, whole, 1e-4);
}

/// Rows of x (c, 2) iterated three times through a loop: acc <- acc * x * w + sin(acc).
TensorXd looped(const TensorXd& x, const TensorXd& w, ControlMode mode) {
  size_t lanes = x.size();
  Float64 v = (x * w).array();
  auto [i, vv, acc] = while_loop(
      std::tuple(zeros<UInt32>(lanes), v, v + 0.5),
      [](const UInt32& i, const Float64&, const Float64&) { return i < 3u; },
      [](const UInt32& i, const Float64& v, const Float64& acc) { return std::tuple(i + 1u, v, acc * v + sin(acc)); },
      mode, "looped", LoopDerivative{.max_iterations = 4});
  return TensorXd(acc, x.shape());
}

TEST_F(ChunkedMap, WhileLoopInsideTheMappedFunction) {
  for (ControlMode mode : {ControlMode::Symbolic, ControlMode::Evaluated}) {
    SCOPED_TRACE(mode == ControlMode::Symbolic ? "symbolic" : "evaluated");
    auto direct = [mode](const TensorXd& x, const TensorXd& w) { return looped(x, w, mode); };
    auto chunked = [mode](const TensorXd& x, const TensorXd& w) {
      return chunked_map([mode](const TensorXd& x, const TensorXd& w) { return looped(x, w, mode); }, std::tuple(x),
                         std::tuple(w), MapOptions{.chunk_size = 2});
    };
    std::vector<double> hx = {0.3, -0.5, 0.7, 0.1, -0.2, 0.9, 0.4, -0.8, 0.6, 0.25}, hw = {0.8, -0.6};
    TensorXd x = TensorXd::from(hx.data(), {5, 2}), w = TensorXd::from(hw.data(), {2});
    std::vector<double> want = direct(x, w).to_vector(), got = chunked(x, w).to_vector();
    ASSERT_EQ(got.size(), want.size());
    for (size_t k = 0; k < got.size(); ++k) EXPECT_NEAR(got[k], want[k], 1e-14) << k;
    KILN_EXPECT_GRADS(check_grads(chunked, std::tuple(x, w)));
  }
}

TEST_F(ChunkedMap, UnderSuspendGradNoGraphIsCreated) {
  Scene scene = make_scene(8);
  Params p = make_params();
  std::vector<float> want = render_all(scene, p, {.samples = 8}).to_vector();
  for (TensorXf* t : p.all()) enable_grad(*t);
  size_t nodes = detail::ad_node_count(), edges = detail::ad_edge_count();
  {
    GradScope off = suspend_grad();
    TensorXf rgb = render_all(scene, p, {.samples = 8, .chunk_size = 3});
    eval(rgb);
    EXPECT_EQ(detail::ad_node_count(), nodes) << "chunked_map under suspend_grad() made AD nodes";
    EXPECT_EQ(detail::ad_edge_count(), edges);
    EXPECT_FALSE(grad_enabled(rgb));
    expect_close(rgb.to_vector(), want, 1e-5, "rgb");
  }
  // Without any differentiable input (nor captured array) the result carries none either.
  Params plain = make_params();
  TensorXf rgb = render_all(scene, plain, {.samples = 8, .chunk_size = 3});
  EXPECT_FALSE(grad_enabled(rgb));
  EXPECT_EQ(detail::ad_node_count(), nodes);
}

TEST_F(ChunkedMap, ForwardModeMatchesTheUnchunkedJvp) {
  Scene scene = make_scene(10);
  Params params = make_params();
  TensorXf tangent_w2 = tensor({kHidden, kHidden}, 0.9, -1, 1), tangent_dirs = tensor({10, 3}, 0.15, -1, 1);
  auto jvp = [&](size_t chunk) {
    Params p = params;
    Scene s = scene;
    for (TensorXf* t : p.all()) enable_grad(*t);
    enable_grad(s.dirs);
    TensorXf rgb = render_all(s, p, {.samples = 12, .chunk_size = chunk});
    TensorXf loss = mse(rgb, s.target);
    forward_from(p.w2, tangent_w2);
    std::vector<float> from_w2 = grad(rgb).to_vector();
    float loss_from_w2 = grad(loss).to_vector()[0];
    forward_from(s.dirs, tangent_dirs);  // a mapped input's tangent (restarts the tangents)
    return std::tuple(from_w2, loss_from_w2, grad(rgb).to_vector());
  };
  auto [want_rgb, want_loss, want_dirs] = jvp(0);
  for (size_t chunk : {1u, 4u, 10u}) {
    SCOPED_TRACE("chunk_size " + std::to_string(chunk));
    auto [got_rgb, got_loss, got_dirs] = jvp(chunk);
    expect_close(got_rgb, want_rgb, 1e-4, "d rgb / d w2");
    EXPECT_NEAR(got_loss, want_loss, 1e-4 * std::fabs(want_loss) + 1e-9);
    expect_close(got_dirs, want_dirs, 1e-4, "d rgb / d dirs");
  }
}

/// Arrays fn reads from a closure are differentiated like whole inputs.
TEST_F(ChunkedMap, CapturedArraysGetGradients) {
  TensorXd x = TensorXd::from(std::vector<double>{0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7}.data(), {7});
  TensorXd scale = TensorXd::from(std::vector<double>{1.5, -0.5}.data(), {2});
  auto f = [](const TensorXd& x, const TensorXd& scale) {
    return chunked_map(
        [scale](const TensorXd& rows) {
          TensorXd col = rows.reshape({-1, 1});
          return sin(col * scale) + col * col;  // (c, 2)
        },
        std::tuple(x), std::tuple(), MapOptions{.chunk_size = 3});
  };
  KILN_EXPECT_GRADS(check_grads(f, std::tuple(x, scale)));
}

/// One-row chunks of a one-lane-per-row input (the ray index with chunk_size 1, or a
/// short last chunk), used at the width of a wider row.
TEST_F(ChunkedMap, OneLaneChunksBroadcastWithinTheRow) {
  TensorXu index(arange<UInt32>(5));
  for (size_t chunk : {1u, 2u, 5u}) {
    SCOPED_TRACE("chunk_size " + std::to_string(chunk));
    TensorXf out = chunked_map(
        [](const TensorXu& i) {
          TensorXf f(cast<float>(i.array()), i.shape());
          return f.reshape({-1, 1}).broadcast_to({i.shape(0), 3}) + TensorXf(arange<Float>(3));
        },
        std::tuple(index), std::tuple(), MapOptions{.chunk_size = chunk});
    std::vector<float> want;
    for (size_t r = 0; r < 5; ++r)
      for (size_t c = 0; c < 3; ++c) want.push_back(float(r + c));
    EXPECT_EQ(out.to_vector(), want);
  }
}

// ---- (f) errors --------------------------------------------------------------------------------

TEST_F(ChunkedMapErrors, OutputWithTheWrongNumberOfRows) {
  TensorXf x = tensor({6, 2}, 0.1);
  expect_error<SizeError>(
      [&] {
        (void)chunked_map([](const TensorXf& rows) { return rows.slice(0, 0, 1); }, std::tuple(x), std::tuple(),
                          MapOptions{.chunk_size = 2, .name = "firsts"});
      },
      "fn returned an output with 1 rows for a chunk of 2");
  expect_error<SizeError>(
      [&] {
        (void)chunked_map([](const TensorXf& rows) { return sum(rows); }, std::tuple(x), std::tuple(),
                          MapOptions{.chunk_size = 2});
      },
      "0-d");
}

TEST_F(ChunkedMapErrors, MappedInputsWithDifferentRowCounts) {
  TensorXf a = tensor({6, 2}, 0.1), b = tensor({5, 2}, 0.2);
  expect_error<SizeError>(
      [&] {
        (void)chunked_map([](const TensorXf& x, const TensorXf& y) { return x + y; }, std::tuple(a, b), std::tuple(),
                          MapOptions{.chunk_size = 2});
      },
      "the mapped inputs have 6 and 5 rows");
  // A tensor and a plain array (every lane a row).
  expect_error<SizeError>(
      [&] {
        (void)chunked_map([](const TensorXf& x, const Float& y) { return x; }, std::tuple(a, arange<Float>(4)),
                          std::tuple(), MapOptions{.chunk_size = 2});
      },
      "6 and 4 rows");
}

TEST_F(ChunkedMapErrors, ChunkSizeAndChunkBytes) {
  TensorXf x = tensor({6, 2}, 0.1);
  auto run = [&](MapOptions options) {
    (void)chunked_map([](const TensorXf& rows) { return rows * 2.f; }, std::tuple(x), std::tuple(), options);
  };
  expect_error<ValueError>([&] { run({.chunk_size = 2, .chunk_bytes = 64}); }, "exactly one of chunk_size");
  expect_error<ValueError>([&] { run({}); }, "exactly one of chunk_size");
  expect_error<ValueError>([&] { run({.name = "named"}); }, "chunked_map('named')");
}

TEST_F(ChunkedMapErrors, ZeroDimensionalMappedInput) {
  TensorXf scalar(Float(1.f), Shape{});
  expect_error<SizeError>(
      [&] {
        (void)chunked_map([](const TensorXf& x) { return x; }, std::tuple(scalar), std::tuple(),
                          MapOptions{.chunk_size = 1});
      },
      "0-d tensor");
  expect_error<SizeError>(
      [&] {
        (void)chunked_map([](const TensorXf& x) { return x; }, std::tuple(TensorXf::zeros({0, 3})), std::tuple(),
                          MapOptions{.chunk_size = 1});
      },
      "no rows");
}

}  // namespace
