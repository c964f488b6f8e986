// Scene parameters: a traversal that records every parameter under its key, typed
// assignment, and update notifications up the object tree.
#include <kiln/errors.h>
#include <kiln/render/optimizer.h>
#include <kiln/render/parameters.h>

#include <algorithm>
#include <set>

namespace kiln::render {
namespace {

/// Calls f(array) for every Kiln array of the parameter (none for a pair of sizes).
template <typename F> void for_each_parameter_array(const ParameterRef& ref, F&& f) {
  std::visit(
      [&](auto* pointer) {
        if constexpr (requires { for_each_array(*pointer, f); })
          for_each_array(*pointer, f);
        else if constexpr (requires { pointer->matrix(); })
          for_each_array(pointer->matrix(), f);
      },
      ref);
}

}  // namespace

/// Walks the object tree, naming parameters "<path>.<name>" and each object once.
class SceneParameters::Collector : public TraversalCallback {
 public:
  Collector(SceneParameters& out, Object* node, std::string prefix, size_t depth, std::set<Object*>& seen)
      : out_(out), node_(node), prefix_(std::move(prefix)), depth_(depth), seen_(seen) {}

  void put(const std::string& name, ParameterRef ref, uint32_t flags) override { put(name, ref, flags, nullptr); }
  void put(const std::string& name, ParameterRef ref, uint32_t flags, std::shared_ptr<const void> owner) override {
    std::string key = prefix_.empty() ? name : prefix_ + "." + name;
    for_each_parameter_array(ref, [&](const auto& array) { set_label(array, key); });
    out_.entries_[key] = Entry{ref, node_, name, flags, nodes_of(ref), std::move(owner)};
  }

  void put_object(const std::string& name, Object* child) override {
    if (!child || !seen_.insert(child).second) return;
    out_.parent_[child] = node_;
    out_.name_in_parent_[child] = name;
    out_.depth_[child] = depth_ + 1;
    Collector nested(out_, child, prefix_.empty() ? name : prefix_ + "." + name, depth_ + 1, seen_);
    child->traverse(nested);
  }

 private:
  SceneParameters& out_;
  Object* node_;
  std::string prefix_;
  size_t depth_;
  std::set<Object*>& seen_;
};

SceneParameters::Nodes SceneParameters::nodes_of(const ParameterRef& ref) {
  Nodes nodes;
  for_each_parameter_array(ref, [&](const auto& array) { nodes.emplace_back(array.index(), array.ad_index()); });
  return nodes;
}

SceneParameters::SceneParameters(Object& root) {
  std::set<Object*> seen{&root};
  depth_[&root] = 0;
  Collector collector(*this, &root, "", 0, seen);
  root.traverse(collector);
}

std::vector<std::string> SceneParameters::keys() const {
  std::vector<std::string> out;
  for (const auto& [key, entry] : entries_) out.push_back(key);
  return out;
}

bool SceneParameters::contains(const std::string& key) const { return entries_.count(key) != 0; }

void SceneParameters::keep_only(const std::function<bool(const std::string&)>& keep) {
  std::erase_if(entries_, [&](const auto& item) { return !keep(item.first); });
}

SceneParameters::Entry& SceneParameters::entry(const std::string& key) {
  auto found = entries_.find(key);
  if (found == entries_.end())
    throw ValueError("kiln.render: scene parameters: no parameter '" + key +
                     "' (kr.traverse(scene).keys() lists them)");
  return found->second;
}

const ParameterRef& SceneParameters::get(const std::string& key) const {
  return const_cast<SceneParameters*>(this)->entry(key).ref;
}

uint32_t SceneParameters::flags(const std::string& key) const {
  return const_cast<SceneParameters*>(this)->entry(key).flags;
}

namespace {

/// The stored value of type T behind `ref`, or a TypeError naming both types.
template <typename T> T& target(const std::string& key, const ParameterRef& ref, const char* given) {
  if (T* const* pointer = std::get_if<T*>(&ref)) return **pointer;
  static const char* kNames[] = {
      "a Float array", "an Array3f", "a UInt32 array", "a Transform4f", "a pair of sizes (width, height)",
      "a TensorXf"};
  throw TypeError("kiln.render: scene parameters: '" + key + "' holds " + kNames[ref.index()] + ", not " + given);
}

/// SizeError unless `given` values fit a parameter of `expected` (one value is broadcast;
/// a resizable parameter takes any size).
void check_size(const std::string& key, uint32_t flags, size_t expected, size_t given) {
  if (expected != given && given != 1 && !(flags & param_flags::kResizable))
    throw SizeError("kiln.render: scene parameters: '" + key + "' holds " + std::to_string(expected) +
                    " values; the new value has " + std::to_string(given));
}

}  // namespace

void SceneParameters::set(const std::string& key, const Float& value) {
  const Entry& found = entry(key);
  Float& stored = target<Float>(key, found.ref, "a Float array");
  check_size(key, found.flags, stored.size(), value.size());
  bool broadcast = value.size() == 1 && stored.size() != 1;
  stored = broadcast ? value + zeros<Float>(stored.size()) : value;
  set_label(stored, key);
  changed(key);
}

void SceneParameters::set(const std::string& key, const Array3f& value) {
  const Entry& found = entry(key);
  Array3f& stored = target<Array3f>(key, found.ref, "an Array3f");
  check_size(key, found.flags, stored.x.size(), value.x.size());
  stored = value;
  for_each_array(stored, [&](Float& array) { set_label(array, key); });
  changed(key);
}

void SceneParameters::set(const std::string& key, const UInt32& value) {
  UInt32& stored = target<UInt32>(key, entry(key).ref, "a UInt32 array");
  stored = value;
  set_label(stored, key);
  changed(key);
}

void SceneParameters::set(const std::string& key, const Transform4f& value) {
  target<Transform4f>(key, entry(key).ref, "a Transform4f") = value;
  changed(key);
}

void SceneParameters::set(const std::string& key, const std::array<uint32_t, 2>& value) {
  target<std::array<uint32_t, 2>>(key, entry(key).ref, "a pair of sizes") = value;
  changed(key);
}

void SceneParameters::set(const std::string& key, const std::array<int64_t, 2>& value) {
  for (int64_t size : value)
    if (size < 0 || size > int64_t(UINT32_MAX))
      throw ValueError("kiln.render: scene parameters: '" + key + "' must be two sizes from 0 to 2^32 - 1, got (" +
                       std::to_string(value[0]) + ", " + std::to_string(value[1]) + ")");
  set(key, std::array<uint32_t, 2>{uint32_t(value[0]), uint32_t(value[1])});
}

void SceneParameters::set(const std::string& key, const TensorXf& value) {
  TensorXf& stored = target<TensorXf>(key, entry(key).ref, "a TensorXf");
  stored = value;
  set_label(stored.array(), key);
  changed(key);
}

void SceneParameters::changed(const std::string& key) {
  const Entry& e = entries_.at(key);
  std::vector<std::string>& names = changed_[e.owner];
  if (std::find(names.begin(), names.end(), e.name) == names.end()) names.push_back(e.name);
}

void SceneParameters::update() {
  for (auto& [key, entry] : entries_)
    if (nodes_of(entry.ref) != entry.nodes) {
      for_each_parameter_array(entry.ref, [&](const auto& array) { set_label(array, key); });
      changed(key);
    }
  // Owners first, deepest first; then every ancestor once, with the names of the
  // children that changed.
  std::map<Object*, std::vector<std::string>> pending = std::move(changed_);
  changed_.clear();
  for (const auto& [owner, names] : std::map<Object*, std::vector<std::string>>(pending))
    for (Object* node = owner; parent_.count(node);) {
      std::vector<std::string>& siblings = pending[parent_[node]];
      const std::string& name = name_in_parent_[node];
      if (std::find(siblings.begin(), siblings.end(), name) == siblings.end()) siblings.push_back(name);
      node = parent_[node];
    }
  std::vector<Object*> order;
  for (const auto& [object, names] : pending) order.push_back(object);
  std::stable_sort(order.begin(), order.end(), [&](Object* a, Object* b) { return depth_[a] > depth_[b]; });
  for (Object* object : order) object->parameters_changed(pending[object]);
  // What the owners derived in parameters_changed() is not a change of the next update().
  for (auto& [key, entry] : entries_) entry.nodes = nodes_of(entry.ref);
}

void SceneParameters::update(const ParameterOptimizer& optimizer) {
  std::vector<std::string> keys = optimizer.keys();
  for (const std::string& key : keys) entry(key);  // unknown keys throw before anything changes
  for (const std::string& key : keys)
    if (std::holds_alternative<Array2f>(optimizer.get(key)))
      throw TypeError("kiln.render: params.update(optimizer): '" + key +
                      "' holds a 2D vector, which no scene parameter is; set the parameter from it yourself");
  for (const std::string& key : keys)
    std::visit(
        [&](const auto& value) {
          if constexpr (!std::is_same_v<std::decay_t<decltype(value)>, Array2f>) set(key, value);
        },
        optimizer.get(key));
  update();
}

}  // namespace kiln::render
