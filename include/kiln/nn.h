// Small networks over TensorXf, which Python's kl.nn binds as they are (same names and
// parameters): Linear (a matmul through OpenBLAS plus an optional broadcast bias), ReLU,
// LeakyReLU, Sigmoid, Exp, NeRF's PositionalEncoding, Sequential (Python composes its own),
// and the optimizers SGD and Adam, which update parameters in place: every new parameter
// and moment is evaluated in one eval() (one kernel per distinct parameter size) and each
// parameter becomes a fresh AD leaf, so the graph does not grow across steps.
#pragma once

#include <kiln/tensor.h>

#include <algorithm>
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
/// default) from `seed`, or from next_layer_seed() when none is given; without `bias`,
/// x·weight (the same weights as with it).
class Linear {
 public:
  Linear(size_t in_features, size_t out_features, std::optional<uint64_t> seed = std::nullopt, bool bias = true) {
    std::mt19937_64 rng(seed ? *seed : next_layer_seed());
    float bound = in_features > 0 ? 1.0f / std::sqrt(float(in_features)) : 0.0f;  // PyTorch's, 0 for no inputs
    std::uniform_real_distribution<float> uniform(-bound, bound);
    std::vector<float> w(in_features * out_features), b(out_features);
    for (float& v : w) v = uniform(rng);
    for (float& v : b) v = uniform(rng);
    weight = TensorXf::from(w.data(), {in_features, out_features});
    enable_grad(weight);
    if (bias) {
      this->bias = TensorXf::from(b.data(), {out_features});
      enable_grad(*this->bias);
    }
  }
  TensorXf operator()(const TensorXf& x) const { return bias ? matmul(x, weight) + *bias : matmul(x, weight); }
  std::vector<TensorXf*> parameters() {
    if (bias) return {&weight, &*bias};
    return {&weight};
  }

  TensorXf weight;
  std::optional<TensorXf> bias;
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
  size_t n_frequencies = 6;
  bool include_input = true;
  size_t out_features(size_t in_features) const { return in_features * (2 * n_frequencies + (include_input ? 1 : 0)); }
  TensorXf operator()(const TensorXf& x) const {
    std::vector<TensorXf> parts;
    if (include_input) parts.push_back(x);
    for (size_t k = 0; k < n_frequencies; ++k) {
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

/// What SGD and Adam share: the parameters they update in place, each a Float array (a
/// TensorXf's array(), an Array3f's component, a scene parameter) made an AD leaf when it
/// is added so gradients flow to it; the state kept per parameter; the learning rate (one
/// for all, or one of a parameter's own, as Dr.Jit's set_learning_rate gives); masked
/// updates (Dr.Jit's mask_updates: lanes whose gradient is zero keep their value and
/// state); and the commit of a step. Hyperparameters are doubles, rounded to float where
/// they meet the arrays (as Python's floats are).
class Optimizer {
 public:
  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  /// Adds a parameter, made an AD leaf, with fresh state. The optimizer updates it through
  /// the pointer, so it must stay where it is until it is removed.
  void add(Float* parameter) {
    enable_grad(*parameter);
    slots_.push_back(Slot{parameter, initial_state(*parameter), 0, std::nullopt});
  }
  /// Forgets `parameter` and its state.
  void remove(const Float* parameter) { slots_.erase(slot(parameter)); }
  /// Starts `parameter`'s state afresh (as when it was added), after its size changed; its
  /// own learning rate stays.
  void reset(const Float* parameter) {
    auto it = slot(parameter);
    *it = Slot{it->value, initial_state(*it->value), 0, it->lr};
  }
  /// Clears the parameters' gradients (before the next backward pass).
  void zero_grad() {
    for (Slot& s : slots_) clear_grad(*s.value);
  }
  double lr() const { return lr_; }
  /// A new learning rate, used from the next step on (a schedule).
  void set_lr(double lr) { lr_ = lr; }
  /// `parameter`'s own learning rate (nullopt: the optimizer's).
  std::optional<double> lr(const Float* parameter) const { return find_slot(slots_, parameter)->lr; }
  void set_lr(const Float* parameter, std::optional<double> lr) { slot(parameter)->lr = lr; }
  bool mask_updates() const { return mask_updates_; }
  void set_mask_updates(bool mask) { mask_updates_ = mask; }

  /// One step: every parameter and its state are updated from its gradient, all of them
  /// evaluated together (one kernel per distinct parameter size); each parameter becomes a
  /// fresh AD leaf, so the graph does not grow across steps.
  void step() {
    GradScope scope = suspend_grad();
    std::vector<Float> values;
    std::vector<kiln::detail::Index> indices;
    for (Slot& s : slots_) {
      ++s.steps;
      Float gradient = grad(*s.value);
      std::vector<Float> before = s.state;
      values.push_back(updated(s, gradient));
      if (mask_updates_) {
        Bool keep = gradient == 0.0f;
        values.back() = select(keep, *s.value, values.back());
        for (size_t k = 0; k < before.size(); ++k) s.state[k] = select(keep, before[k], s.state[k]);
      }
      indices.push_back(values.back().index());
      for (const Float& state : s.state) indices.push_back(state.index());
    }
    kiln::detail::eval(indices.data(), indices.size());
    for (size_t k = 0; k < slots_.size(); ++k) {
      *slots_[k].value = kiln::detach(values[k]);
      enable_grad(*slots_[k].value);
    }
  }

 protected:
  /// One parameter: where it lives, what the optimizer keeps for it, how many steps it
  /// took, its own learning rate if it has one.
  struct Slot {
    Float* value;
    std::vector<Float> state;
    size_t steps;
    std::optional<double> lr;
  };

  explicit Optimizer(double lr) : lr_(lr) {}
  /// The parameters of `tensors` (their arrays), added.
  void add_all(const std::vector<TensorXf*>& tensors) {
    for (TensorXf* t : tensors) add(&t->array());
  }
  /// The learning rate a step of `slot` uses.
  double lr_of(const Slot& slot) const { return slot.lr.value_or(lr_); }
  /// The state a new parameter starts with (Adam: its two moments, zero).
  virtual std::vector<Float> initial_state(const Float& parameter) const = 0;
  /// The parameter's new value from its gradient (slot.steps counts this step); replaces
  /// slot.state with the new state. Runs under suspend_grad; nothing is evaluated yet.
  virtual Float updated(Slot& slot, const Float& gradient) const = 0;

 private:
  /// The slot of `parameter` in `slots` (const or not).
  template <typename Slots> static auto find_slot(Slots& slots, const Float* parameter) -> decltype(slots.begin()) {
    auto it = std::find_if(slots.begin(), slots.end(), [&](const Slot& s) { return s.value == parameter; });
    if (it == slots.end()) throw ValueError("kiln::nn::Optimizer: the array is not one of the optimizer's parameters");
    return it;
  }
  std::vector<Slot>::iterator slot(const Float* parameter) { return find_slot(slots_, parameter); }

  std::vector<Slot> slots_;
  double lr_;
  bool mask_updates_ = false;
};

/// p ← p − lr · g, with optional (Nesterov) momentum as Dr.Jit's and PyTorch's:
/// v ← μ·v + g, and the step is v (or μ·v + g with Nesterov's).
class SGD : public Optimizer {
 public:
  /// An optimizer without parameters yet (add() them).
  explicit SGD(double lr, double momentum = 0.0, bool nesterov = false)
      : Optimizer(lr), momentum_(momentum), nesterov_(nesterov) {
    if (!(momentum >= 0)) throw ValueError("kiln: SGD(): momentum must be >= 0, got " + std::to_string(momentum));
    if (nesterov && momentum == 0) throw ValueError("kiln: SGD(): Nesterov's acceleration needs momentum > 0");
  }
  SGD(const std::vector<TensorXf*>& params, double lr) : SGD(lr) { add_all(params); }

 private:
  std::vector<Float> initial_state(const Float& parameter) const override {
    if (momentum_ == 0) return {};
    return {zeros<Float>(parameter.size())};
  }
  Float updated(Slot& slot, const Float& gradient) const override {
    Float step = gradient;
    if (momentum_ != 0) {
      Float& velocity = slot.state[0];
      velocity = velocity * float(momentum_) + gradient;
      step = nesterov_ ? velocity * float(momentum_) + gradient : velocity;
    }
    return *slot.value - step * float(lr_of(slot));
  }

  double momentum_;
  bool nesterov_;
};

/// Adam (Kingma & Ba) with bias correction, counted per parameter; the step size is an
/// opaque launch parameter, so the update kernels compile once. Dr.Jit's variants:
/// `uniform` (UniformAdam, Nicolet et al. 2021: the largest second moment of the parameter
/// for every lane) and `amsgrad` (Reddi et al. 2018: the largest second moment so far).
class Adam : public Optimizer {
 public:
  /// An optimizer without parameters yet (add() them).
  explicit Adam(double lr = 1e-3, double beta1 = 0.9, double beta2 = 0.999, double eps = 1e-8, bool uniform = false,
                bool amsgrad = false)
      : Optimizer(lr), beta1_(beta1), beta2_(beta2), eps_(eps), uniform_(uniform), amsgrad_(amsgrad) {
    if (!(beta1 >= 0 && beta1 < 1 && beta2 >= 0 && beta2 < 1))
      throw ValueError("kiln: Adam(): betas must lie in [0, 1), got (" + std::to_string(beta1) + ", " +
                       std::to_string(beta2) + ")");
    if (!(eps > 0)) throw ValueError("kiln: Adam(): eps must be positive, got " + std::to_string(eps));
    if (uniform && amsgrad) throw ValueError("kiln: Adam(): uniform and amsgrad exclude each other: choose one");
  }
  Adam(const std::vector<TensorXf*>& params, double lr = 1e-3, double beta1 = 0.9, double beta2 = 0.999,
       double eps = 1e-8)
      : Adam(lr, beta1, beta2, eps) {
    add_all(params);
  }

 private:
  std::vector<Float> initial_state(const Float& parameter) const override {
    std::vector<Float> state{zeros<Float>(parameter.size()), zeros<Float>(parameter.size())};
    if (amsgrad_) state.push_back(zeros<Float>(parameter.size()));
    return state;
  }
  Float updated(Slot& slot, const Float& gradient) const override {
    double t = double(slot.steps);
    double scale = lr_of(slot) * std::sqrt(1.0 - std::pow(beta2_, t)) / (1.0 - std::pow(beta1_, t));
    Float& m = slot.state[0];
    Float& v = slot.state[1];
    m = m * float(beta1_) + gradient * float(1.0 - beta1_);
    v = v * float(beta2_) + gradient * gradient * float(1.0 - beta2_);
    Float second = v;
    if (amsgrad_) second = slot.state[2] = max(slot.state[2], v);
    if (uniform_) second = max(v);
    return *slot.value - opaque<Float>(float(scale)) * m / (sqrt(second) + float(eps_));
  }

  double beta1_, beta2_, eps_;
  bool uniform_, amsgrad_;
};

}  // namespace kiln::nn
