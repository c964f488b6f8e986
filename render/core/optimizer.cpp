// Render optimizers: keyed Float, Array3f and TensorXf values whose arrays kiln::nn's
// optimizers update in place.
#include <kiln/errors.h>
#include <kiln/render/optimizer.h>

#include <algorithm>

namespace kiln::render {
namespace {

using Value = ParameterOptimizer::Value;

/// The Float arrays of a value (one, an Array3f's three components, or a tensor's array).
std::vector<Float*> arrays_of(Value& value) {
  if (Float* f = std::get_if<Float>(&value)) return {f};
  if (TensorXf* t = std::get_if<TensorXf>(&value)) return {&t->array()};
  Array3f& a = std::get<Array3f>(value);
  return {&a[0], &a[1], &a[2]};
}
const Float* first_array_of(const Value& value) {
  if (const Float* f = std::get_if<Float>(&value)) return f;
  if (const TensorXf* t = std::get_if<TensorXf>(&value)) return &t->array();
  return &std::get<Array3f>(value)[0];
}

/// Whether a new value of a key keeps the key's state: the same type, number of entries
/// per array and, for a tensor, shape.
bool same_layout(const Value& a, const Value& b) {
  if (a.index() != b.index()) return false;
  if (const TensorXf* t = std::get_if<TensorXf>(&a)) return t->shape() == std::get<TensorXf>(b).shape();
  auto entries = [](const Value& value) {
    if (const Float* f = std::get_if<Float>(&value)) return f->size();
    const Array3f& v = std::get<Array3f>(value);
    return std::max({v[0].size(), v[1].size(), v[2].size()});
  };
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
void ParameterOptimizer::set(const std::string& key, const Array3f& value) { assign(key, Value(detach(value))); }
void ParameterOptimizer::set(const std::string& key, const TensorXf& value) {
  assign(key, Value(TensorXf(detach(value.array()), value.shape())));
}

void ParameterOptimizer::assign(const std::string& key, Value value) {
  if (Array3f* a = std::get_if<Array3f>(&value)) {  // the components become arrays of one size
    size_t n = std::max({(*a)[0].size(), (*a)[1].size(), (*a)[2].size()});
    for (size_t i = 0; i < 3; ++i)
      if ((*a)[i].size() != n) (*a)[i] = (*a)[i] + zeros<Float>(n);
  }
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
