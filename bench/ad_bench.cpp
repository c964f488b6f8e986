// The automatic-differentiation group of kiln_bench (see ad_bench.h).
//
// Each program is run the way an optimization step runs it: trace the loss with gradients
// enabled on the parameters and evaluate it (the primal), then backward() and evaluate
// every gradient (the reverse pass). Both are timed end to end (tracing included) after
// warm-up, alternating, so the kernels come from the in-memory cache in both. Before
// timing, one gradient of each program is compared with a central finite difference.
#include "ad_bench.h"

#include "ad_scene.h"
#include "harness.h"

#include <kiln/kiln.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace bench {
namespace {

using kiln::Float;
using kiln::PCG32;

/// A differentiable program: the loss from its parameters (arrays with gradients enabled).
struct Program {
  std::string name;
  std::vector<Float> parameters;
  std::function<Float(const std::vector<Float>&)> loss;
};

/// Deterministic inputs in [lo, hi).
Float inputs(size_t n, uint64_t seed, float lo, float hi) {
  PCG32 rng(n, seed);
  return rng.next_float32() * (hi - lo) + lo;
}

// (a) 20 elementwise ops over two inputs of n lanes (the parameters are the inputs).
Program elementwise(size_t n) {
  Program p{
      "20-op elementwise, " + std::to_string(n) + " lanes", {inputs(n, 1, 0.1f, 1.f), inputs(n, 2, 0.1f, 1.f)}, {}};
  kiln::eval(p.parameters[0], p.parameters[1]);
  p.loss = [](const std::vector<Float>& v) {
    const Float &x = v[0], &y = v[1];
    Float a = (x * y + x) * 0.5f;           // 3
    Float b = kiln::sin(a);                 // 4
    Float c = b * y - x;                    // 6
    c = c * c;                              // 7
    Float d = kiln::exp(-c) + a;            // 10
    d = d / (y * y + 1.f);                  // 13
    Float e = kiln::sqrt(d * d + 1.f) * b;  // 17
    e = kiln::max(e, x) + kiln::tanh(y);    // 20
    return kiln::sum(e);
  };
  return p;
}

// (b) An MLP-shaped program: 4 inputs -> 16 -> 16 -> 1 with ReLU, weights and biases as
// one-lane parameters, mean squared error against a target.
constexpr int kIn = 4, kHidden = 16;
Program mlp(size_t n) {
  Program p{"MLP 4-16-16-1 (369 parameters), " + std::to_string(n) + " lanes", {}, {}};
  PCG32 init(1, 7);
  auto parameter = [&](float scale) { return Float(init.next_float32().item() * 2 * scale - scale); };
  for (int i = 0; i < kHidden * kIn + kHidden + kHidden * kHidden + kHidden + kHidden + 1; ++i)
    p.parameters.push_back(parameter(0.5f));
  std::vector<Float> x;
  for (int i = 0; i < kIn; ++i) x.push_back(inputs(n, 10 + i, -1.f, 1.f));
  Float target = kiln::sin(x[0] * 3.f) * x[1] + x[2] * x[3];
  for (Float& v : x) kiln::eval(v);
  kiln::eval(target);
  p.loss = [x, target, n](const std::vector<Float>& w) {
    size_t k = 0;
    auto layer = [&](const std::vector<Float>& in, int outputs) {
      std::vector<Float> out;
      for (int o = 0; o < outputs; ++o) {
        Float acc = w[k++] * in[0];
        for (size_t i = 1; i < in.size(); ++i) acc = kiln::fma(w[k++], in[i], acc);
        out.push_back(kiln::max(acc + w[k++], 0.f));
      }
      return out;
    };
    std::vector<Float> h1 = layer(x, kHidden), h2 = layer(h1, kHidden);
    Float y = w[k++] * h2[0];
    for (int i = 1; i < kHidden; ++i) y = kiln::fma(w[k++], h2[i], y);
    Float error = y + w[k++] - target;
    return kiln::sum(error * error) * (1.f / float(n));
  };
  return p;
}

// (d) The same network with tensors: each layer is one matmul (OpenBLAS) plus a broadcast
// bias, so parameter gradients are matrix products instead of one reduction per weight.
Program mlp_tensors(size_t n) {
  Program p{"MLP 4-16-16-1 as tensors (matmul), " + std::to_string(n) + " rows", {}, {}};
  size_t sizes[] = {kIn * kHidden, kHidden, kHidden * kHidden, kHidden, kHidden, 1};
  for (size_t k = 0; k < 6; ++k) p.parameters.push_back(inputs(sizes[k], 20 + k, -0.5f, 0.5f));
  for (Float& v : p.parameters) kiln::eval(v);
  kiln::TensorXf x(inputs(n * kIn, 30, -1.f, 1.f), {n, size_t(kIn)});
  kiln::TensorXf target = kiln::sin(x.slice(1, 0, 1) * 3.f) * x.slice(1, 1, 2) + x.slice(1, 2, 3) * x.slice(1, 3, 4);
  kiln::eval(x.array(), target.array());
  p.loss = [x, target, n](const std::vector<Float>& w) {
    using kiln::TensorXf;
    auto layer = [&](const TensorXf& in, size_t k, size_t outputs) {
      return kiln::matmul(in, TensorXf(w[k], {in.shape(1), outputs})) + TensorXf(w[k + 1], {outputs});
    };
    TensorXf h1 = kiln::max(layer(x, 0, kHidden), 0.f), h2 = kiln::max(layer(h1, 2, kHidden), 0.f);
    TensorXf error = layer(h2, 4, 1) - target;
    return kiln::sum(error * error).array() * (1.f / float(n));
  };
  return p;
}

// (c) Two bounces at three materials (bench/ad_scene.h): the diffuse albedo, glossy
// roughness and emitter strength are the parameters.
Program path_tracer(size_t n) {
  Program p{"two-bounce path tracer, 3 materials, " + std::to_string(n) + " lanes",
            {Float(0.8f), Float(0.3f), Float(4.f)},
            {}};
  auto scene = std::make_shared<ad_scene::Scene<Float>>();
  p.loss = [n, scene](const std::vector<Float>& params) {
    return kiln::sum(ad_scene::render(scene, params[0], params[1], params[2], n)) * (1.f / float(n));
  };
  return p;
}

/// Fresh copies of the parameters with gradients enabled.
std::vector<Float> with_grads(const std::vector<Float>& parameters) {
  std::vector<Float> out;
  for (const Float& v : parameters) {
    Float copy = kiln::detach(v);
    kiln::enable_grad(copy);
    out.push_back(copy);
  }
  return out;
}

/// The relative difference between the derivative of the loss along all lanes of parameter 0
/// (the sum of its gradient) and a central difference. Moving every lane changes a float32
/// loss measurably; moving one lane of a large sum would stay below its resolution.
double gradient_error(const Program& p) {
  std::vector<Float> params = with_grads(p.parameters);
  Float loss = p.loss(params);
  kiln::backward(loss);
  double analytic = kiln::sum(kiln::grad(params[0])).item();
  auto at = [&](float offset) {
    std::vector<Float> shifted = p.parameters;
    shifted[0] = shifted[0] + offset;
    return double(p.loss(shifted).item());
  };
  float h = 1e-2f * std::max(1.f, std::fabs(p.parameters[0].read(0)));
  double numeric = (at(h) - at(-h)) / (2.0 * h);
  return std::fabs(analytic - numeric) / std::max(1e-3, std::fabs(numeric));
}

void measure(const Program& p, int warmup, int reps, std::vector<Row>& rows, std::vector<std::string>& failures) {
  double error = gradient_error(p);
  if (!(error < 5e-2)) {
    char text[256];
    std::snprintf(text, sizeof(text), "ad: %s: gradient differs from a central difference by %.3g (relative)",
                  p.name.c_str(), error);
    failures.push_back(text);
  }
  std::vector<Float> params;
  Float loss;
  auto primal = [&] {
    return time_once([&] {
      params = with_grads(p.parameters);
      loss = p.loss(params);
      kiln::eval(loss);
    });
  };
  auto reverse = [&] {
    return time_once([&] {
      kiln::backward(loss);
      std::vector<Float> grads;
      for (const Float& v : params) grads.push_back(kiln::grad(v));
      for (const Float& g : grads) kiln::schedule(g);
      kiln::eval();
    });
  };
  std::vector<double> m = alternate(warmup, reps, {primal, reverse});
  kiln::TraversalStats visited = kiln::last_traversal();
  rows.push_back({"reverse vs primal: " + p.name, m[1], m[0], Goal::RatioAtLeast, 1.0 / 3.0,
                  "baseline = primal (trace + eval of the loss); ratio >= 0.33 means reverse <= 3x primal; " +
                      std::to_string(visited.nodes) + " AD nodes visited"});
}

}  // namespace

void run_ad(bool quick, std::vector<Row>& rows, std::vector<std::string>& failures) {
  int warmup = quick ? 1 : 2, reps = quick ? 3 : 7;
  measure(elementwise(quick ? size_t(1) << 18 : size_t(1) << 22), warmup, reps, rows, failures);
  measure(mlp(quick ? size_t(1) << 12 : size_t(1) << 16), warmup, reps, rows, failures);
  measure(mlp_tensors(quick ? size_t(1) << 12 : size_t(1) << 16), warmup, reps, rows, failures);
  measure(path_tracer(quick ? size_t(1) << 14 : size_t(1) << 18), warmup, reps, rows, failures);
}

}  // namespace bench
