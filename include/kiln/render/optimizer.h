// Optimizers over scene parameters by key (Mitsuba's mi.ad.SGD / mi.ad.Adam): the
// optimizer holds the values it optimizes; each iteration the caller puts them in the scene
// (SceneParameters::update(optimizer)), renders, runs backward and calls step().
//
// What an implementation guarantees:
// - The update rule is kiln::nn's (one implementation): a render optimizer keys Float,
//   Array2f, Array3f and TensorXf values and hands their Float arrays to an nn::SGD or nn::Adam.
// - set() stores a detached copy made an AD leaf. Setting a key again with a value of the
//   same type and size (and shape, for a tensor) keeps its state (Adam's moments and step count), so a caller can
//   put back a clamped value after each step; another type or size starts it afresh.
// - After step(), every value is a fresh AD leaf: the graph does not grow across steps.
#pragma once

#include <kiln/nn.h>
#include <kiln/render/transform.h>
#include <kiln/tensor.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace kiln::render {

class ParameterOptimizer {
 public:
  using Value = std::variant<Float, Array2f, Array3f, TensorXf>;

  virtual ~ParameterOptimizer();

  /// Optimizes `key` starting from `value` (see the guarantees above).
  void set(const std::string& key, const Float& value);
  void set(const std::string& key, const Array2f& value);
  void set(const std::string& key, const Array3f& value);
  void set(const std::string& key, const TensorXf& value);
  /// The current value of `key` (it carries derivatives); ValueError naming the keys for
  /// an unknown one.
  const Value& get(const std::string& key) const;
  bool contains(const std::string& key) const { return values_.count(key) != 0; }
  std::vector<std::string> keys() const;
  /// Stops optimizing `key`.
  void erase(const std::string& key);
  /// Starts `key`'s state afresh.
  void reset(const std::string& key);

  /// One update of every value from its gradient.
  void step() { rule_->step(); }
  void zero_grad() { rule_->zero_grad(); }
  double lr() const { return rule_->lr(); }
  void set_lr(double lr) { rule_->set_lr(lr); }
  /// `key`'s own learning rate (nullopt: the optimizer's), as Dr.Jit's learning_rate(key);
  /// it is forgotten when the key is set again with a value of another type or size.
  std::optional<double> lr(const std::string& key) const;
  void set_lr(const std::string& key, std::optional<double> lr);
  /// Dr.Jit's mask_updates: lanes whose gradient is zero keep their value and state.
  bool mask_updates() const { return rule_->mask_updates(); }
  void set_mask_updates(bool mask) { rule_->set_mask_updates(mask); }

 protected:
  explicit ParameterOptimizer(std::unique_ptr<nn::Optimizer> rule);

 private:
  /// Replaces (or adds) the value of `key`, keeping its state when the old value has the
  /// same type and size.
  void assign(const std::string& key, Value value);

  std::unique_ptr<nn::Optimizer> rule_;
  std::map<std::string, Value> values_;  ///< nodes stay put, so rule_ can point into them
};

/// p ← p − lr · grad(p), with optional (Nesterov) momentum (nn::SGD).
class SGD : public ParameterOptimizer {
 public:
  explicit SGD(double lr, double momentum = 0.0, bool nesterov = false);
};

/// Adam (Kingma & Ba) with bias correction, and Dr.Jit's uniform and AMSGrad variants
/// (nn::Adam).
class Adam : public ParameterOptimizer {
 public:
  explicit Adam(double lr, double beta1 = 0.9, double beta2 = 0.999, double eps = 1e-8, bool uniform = false,
                bool amsgrad = false);
};

}  // namespace kiln::render
