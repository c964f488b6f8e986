// Small networks over TensorXf (the C++ side of Python's kl.nn, same names): Linear (a
// matmul through OpenBLAS plus a broadcast bias), ReLU, LeakyReLU, Sigmoid, Exp,
// Sequential, NeRF's PositionalEncoding, and the optimizers SGD and Adam (which Python's
// kl.nn.SGD / kl.nn.Adam forward to), which update parameters in place: every new
// parameter and moment is evaluated in one eval() (one kernel per distinct parameter size)
// and each parameter becomes a fresh AD leaf, so the graph does not grow across steps.
#pragma once

#include <kiln/tensor.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <optional>
#include <random>
#include <tuple>
#include <vector>

namespace kiln::nn {

/// The seed of the next layer constructed without one: 0, 1, 2, ... in construction order,
/// process-wide (C++ and Python layers share it). Layers so start different, and a program
/// that builds the same layers in the same order starts the same every run.
inline uint64_t next_layer_seed() {
  static std::atomic<uint64_t> next{0};
  return next++;
}

/// x·weight + bias; weight (in, out) and bias (out) uniform in ±1/sqrt(in) (PyTorch's
/// default) from `seed`, or from next_layer_seed() when none is given.
class Linear {
 public:
  Linear(size_t in_features, size_t out_features, std::optional<uint64_t> seed = std::nullopt) {
    std::mt19937_64 rng(seed ? *seed : next_layer_seed());
    float bound = 1.0f / std::sqrt(float(in_features));
    std::uniform_real_distribution<float> uniform(-bound, bound);
    std::vector<float> w(in_features * out_features), b(out_features);
    for (float& v : w) v = uniform(rng);
    for (float& v : b) v = uniform(rng);
    weight = TensorXf::from(w.data(), {in_features, out_features});
    bias = TensorXf::from(b.data(), {out_features});
    enable_grad(weight, bias);
  }
  TensorXf operator()(const TensorXf& x) const { return matmul(x, weight) + bias; }
  std::vector<TensorXf*> parameters() { return {&weight, &bias}; }

  TensorXf weight, bias;
};

struct ReLU {
  TensorXf operator()(const TensorXf& x) const { return max(x, 0.0f); }
  std::vector<TensorXf*> parameters() { return {}; }
};
struct LeakyReLU {
  float slope = 0.01f;
  TensorXf operator()(const TensorXf& x) const { return select(x > 0.0f, x, x * slope); }
  std::vector<TensorXf*> parameters() { return {}; }
};
struct Sigmoid {
  TensorXf operator()(const TensorXf& x) const { return 1.0f / (1.0f + exp(-x)); }
  std::vector<TensorXf*> parameters() { return {}; }
};
struct Exp {
  TensorXf operator()(const TensorXf& x) const { return exp(x); }
  std::vector<TensorXf*> parameters() { return {}; }
};

/// NeRF's encoding of the last axis: x, then sin(2^k π x) and cos(2^k π x) for each k.
struct PositionalEncoding {
  size_t frequencies = 6;
  bool include_input = true;
  size_t out_features(size_t in_features) const { return in_features * (2 * frequencies + (include_input ? 1 : 0)); }
  TensorXf operator()(const TensorXf& x) const {
    std::vector<TensorXf> parts;
    if (include_input) parts.push_back(x);
    for (size_t k = 0; k < frequencies; ++k) {
      TensorXf scaled = x * float(std::ldexp(M_PI, int(k)));
      parts.push_back(sin(scaled));
      parts.push_back(cos(scaled));
    }
    return concatenate(parts, int64_t(x.ndim()) - 1);
  }
  std::vector<TensorXf*> parameters() { return {}; }
};

/// The layers applied in order.
template <typename... Layers> class Sequential {
 public:
  explicit Sequential(Layers... layers) : layers_(std::move(layers)...) {}
  TensorXf operator()(TensorXf x) const {
    std::apply([&](const auto&... layer) { ((x = layer(x)), ...); }, layers_);
    return x;
  }
  std::vector<TensorXf*> parameters() {
    std::vector<TensorXf*> out;
    std::apply([&](auto&... layer) { (append(out, layer.parameters()), ...); }, layers_);
    return out;
  }

 private:
  static void append(std::vector<TensorXf*>& out, const std::vector<TensorXf*>& more) {
    out.insert(out.end(), more.begin(), more.end());
  }
  std::tuple<Layers...> layers_;
};

/// What SGD and Adam share: the parameters they update in place (each made an AD leaf
/// when the optimizer is built, so gradients flow to it), the learning rate, and the
/// commit of one step's new values. Hyperparameters are doubles, rounded to float where
/// they meet the tensors (as Python's floats are).
class Optimizer {
 public:
  /// Clears the parameters' gradients (before the next backward pass).
  void zero_grad() {
    for (TensorXf* p : params_) clear_grad(*p);
  }
  const std::vector<TensorXf*>& parameters() const { return params_; }
  double lr() const { return lr_; }
  /// A new learning rate, used from the next step on (a schedule).
  void set_lr(double lr) { lr_ = lr; }

 protected:
  Optimizer(std::vector<TensorXf*> params, double lr) : params_(std::move(params)), lr_(lr) {
    for (TensorXf* p : params_) enable_grad(*p);
  }
  /// Evaluates every new value together, then makes each target refer to it; parameters
  /// become fresh AD leaves (their gradients start from zero).
  void commit(std::vector<std::pair<TensorXf*, TensorXf>>& updates) {
    std::vector<kiln::detail::Index> indices;
    for (auto& [target, value] : updates) indices.push_back(value.array().index());
    kiln::detail::eval(indices.data(), indices.size());
    for (auto& [target, value] : updates) *target = kiln::detach(value);
    for (TensorXf* p : params_) enable_grad(*p);
  }

  std::vector<TensorXf*> params_;
  double lr_;
};

/// p ← p − lr · grad(p).
class SGD : public Optimizer {
 public:
  SGD(std::vector<TensorXf*> params, double lr) : Optimizer(std::move(params), lr) {}
  void step() {
    GradScope scope = suspend_grad();
    std::vector<std::pair<TensorXf*, TensorXf>> updates;
    for (TensorXf* p : params_) updates.emplace_back(p, *p - grad(*p) * float(lr_));
    commit(updates);
  }
};

/// Adam (Kingma & Ba) with bias correction; the step size is an opaque launch parameter,
/// so the update kernels compile once.
class Adam : public Optimizer {
 public:
  Adam(std::vector<TensorXf*> params, double lr = 1e-3, double beta1 = 0.9, double beta2 = 0.999, double eps = 1e-8)
      : Optimizer(std::move(params), lr), beta1_(beta1), beta2_(beta2), eps_(eps) {
    for (TensorXf* p : params_) {
      m_.push_back(TensorXf::zeros(p->shape()));
      v_.push_back(TensorXf::zeros(p->shape()));
    }
  }
  void step() {
    GradScope scope = suspend_grad();
    ++t_;
    double scale = lr_ * std::sqrt(1.0 - std::pow(beta2_, double(t_))) / (1.0 - std::pow(beta1_, double(t_)));
    TensorXf step_size(opaque<Float>(float(scale)), Shape{});
    std::vector<std::pair<TensorXf*, TensorXf>> updates;
    for (size_t k = 0; k < params_.size(); ++k) {
      TensorXf g = grad(*params_[k]);
      TensorXf m = m_[k] * float(beta1_) + g * float(1.0 - beta1_);
      TensorXf v = v_[k] * float(beta2_) + g * g * float(1.0 - beta2_);
      updates.emplace_back(&m_[k], m);
      updates.emplace_back(&v_[k], v);
      updates.emplace_back(params_[k], *params_[k] - step_size * m / (sqrt(v) + float(eps_)));
    }
    commit(updates);
  }

 private:
  std::vector<TensorXf> m_, v_;
  double beta1_, beta2_, eps_;
  size_t t_ = 0;
};

}  // namespace kiln::nn
