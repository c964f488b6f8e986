// Render optimizers: keyed Float, Array2f, Array3f and TensorXf values whose arrays
// kiln::nn's optimizers update in place.
#include <kiln/errors.h>
#include <kiln/render/optimizer.h>

#include <algorithm>

namespace kiln::render {
namespace {

using Value = ParameterOptimizer::Value;

/// The Float arrays of a value (one, a vector's components, or a tensor's array).
std::vector<Float*> arrays_of(Value& value) {
  return std::visit(
      [](auto& v) -> std::vector<Float*> {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, Float>)
          return {&v};
        else if constexpr (std::is_same_v<T, TensorXf>)
          return {&v.array()};
        else {
          std::vector<Float*> components;
          for (size_t i = 0; i < T::Size; ++i) components.push_back(&v[i]);
          return components;
        }
      },
      value);
}
const Float* first_array_of(const Value& value) { return arrays_of(const_cast<Value&>(value)).front(); }

/// The most entries of a value's arrays.
size_t entries(Value& value) {
  size_t n = 0;
  for (const Float* array : arrays_of(value)) n = std::max(n, array->size());
  return n;
}

/// Whether a new value of a key keeps the key's state: the same type, number of entries
/// per array and, for a tensor, shape.
bool same_layout(Value& a, Value& b) {
  if (a.index() != b.index()) return false;
  if (const TensorXf* t = std::get_if<TensorXf>(&a)) return t->shape() == std::get<TensorXf>(b).shape();
  return entries(a) == entries(b);
}

/// The value of `key` in `values`; ValueError naming the keys there are for an unknown one.
template <typename Map> auto& lookup(Map& values, const std::string& key) {
  auto it = values.find(key);
  if (it == values.end()) {
    std::string known;
    for (const auto& [k, v] : values) known += (known.empty() ? "" : ", ") + k;
    throw ValueError("kiln.render: optimizer: no parameter '" + key + "' (it optimizes " +
                     (known.empty() ? std::string("nothing yet") : known) + ")");
  }
  return it->second;
}

}  // namespace

ParameterOptimizer::ParameterOptimizer(std::unique_ptr<nn::Optimizer> rule) : rule_(std::move(rule)) {}
ParameterOptimizer::~ParameterOptimizer() = default;

void ParameterOptimizer::set(const std::string& key, const Float& value) { assign(key, Value(detach(value))); }
void ParameterOptimizer::set(const std::string& key, const Array2f& value) { assign(key, Value(detach(value))); }
void ParameterOptimizer::set(const std::string& key, const Array3f& value) { assign(key, Value(detach(value))); }
void ParameterOptimizer::set(const std::string& key, const TensorXf& value) {
  assign(key, Value(TensorXf(detach(value.array()), value.shape())));
}

void ParameterOptimizer::assign(const std::string& key, Value value) {
  size_t n = entries(value);  // a vector's components become arrays of one size
  for (Float* array : arrays_of(value))
    if (array->size() != n) *array = *array + zeros<Float>(n);
  auto it = values_.find(key);
  if (it == values_.end()) {
    Value& stored = values_.emplace(key, std::move(value)).first->second;
    for (Float* array : arrays_of(stored)) rule_->add(array);
    return;
  }
  if (!same_layout(it->second, value)) {
    for (Float* array : arrays_of(it->second)) rule_->remove(array);
    it->second = std::move(value);
    for (Float* array : arrays_of(it->second)) rule_->add(array);
    return;
  }
  std::vector<Float*> arrays = arrays_of(it->second);
  std::vector<Float*> incoming = arrays_of(value);
  for (size_t i = 0; i < arrays.size(); ++i) {
    *arrays[i] = *incoming[i];
    enable_grad(*arrays[i]);
  }
}

const ParameterOptimizer::Value& ParameterOptimizer::get(const std::string& key) const { return lookup(values_, key); }

std::vector<std::string> ParameterOptimizer::keys() const {
  std::vector<std::string> out;
  for (const auto& [key, v] : values_) out.push_back(key);
  return out;
}

void ParameterOptimizer::erase(const std::string& key) {
  for (Float* array : arrays_of(lookup(values_, key))) rule_->remove(array);
  values_.erase(key);
}

void ParameterOptimizer::reset(const std::string& key) {
  for (Float* array : arrays_of(lookup(values_, key))) rule_->reset(array);
}

std::optional<double> ParameterOptimizer::lr(const std::string& key) const {
  return rule_->lr(first_array_of(lookup(values_, key)));  // the components share it
}

void ParameterOptimizer::set_lr(const std::string& key, std::optional<double> lr) {
  for (Float* array : arrays_of(lookup(values_, key))) rule_->set_lr(array, lr);
}

SGD::SGD(double lr, double momentum, bool nesterov)
    : ParameterOptimizer(std::make_unique<nn::SGD>(lr, momentum, nesterov)) {}
Adam::Adam(double lr, double beta1, double beta2, double eps, bool uniform, bool amsgrad)
    : ParameterOptimizer(std::make_unique<nn::Adam>(lr, beta1, beta2, eps, uniform, amsgrad)) {}

}  // namespace kiln::render
