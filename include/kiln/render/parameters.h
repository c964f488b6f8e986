// A scene's parameters under Mitsuba 3's keys (`kr.traverse(scene)`): read them, assign new
// values, then update() the objects that own them.
//
// What an implementation guarantees:
// - Keys are Mitsuba's: an object the scene declares appears under its id (or
//   "object_<n>" without one), nested objects under "<parent>.<name>", each object once
//   (a BSDF declared at the top level and used by shapes keeps its id).
// - Every Kiln array parameter carries its key as label (compile reasons name it).
// - set() checks the value's type and size against the parameter and names the key and
//   what is accepted; update() calls parameters_changed() with the changed names on each
//   object whose parameters changed, then on its ancestors up to the root (a mesh, then
//   the scene that traces it) with the names of their children that changed ("bsdf"),
//   once each, children first.
// - A parameter changed in place through get()'s reference (its arrays given other nodes:
//   `enable_grad(*std::get<Float*>(params.get(key)))`, Python's kl.enable_grad(params[key]))
//   counts as changed at the next update(), as if it had been set().
#pragma once

#include <kiln/render/properties.h>
#include <kiln/render/traverse.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace kiln::render {

class ParameterOptimizer;

class SceneParameters {
 public:
  /// Traverses `root` (which must outlive this object).
  explicit SceneParameters(Object& root);

  std::vector<std::string> keys() const;
  bool contains(const std::string& key) const;
  /// Forgets every parameter whose key `keep` rejects (Mitsuba's params.keep()).
  void keep_only(const std::function<bool(const std::string&)>& keep);
  /// The parameter `key` (a reference into its object); throws ValueError for an unknown key.
  const ParameterRef& get(const std::string& key) const;
  uint32_t flags(const std::string& key) const;

  void set(const std::string& key, const Float& value);
  void set(const std::string& key, const Array3f& value);
  void set(const std::string& key, const UInt32& value);
  void set(const std::string& key, const Transform4f& value);
  void set(const std::string& key, const std::array<uint32_t, 2>& value);
  /// A pair of sizes given as signed integers (Python's): ValueError unless both fit.
  void set(const std::string& key, const std::array<int64_t, 2>& value);
  /// A tensor parameter takes any shape (a grid resampled to a finer resolution).
  void set(const std::string& key, const TensorXf& value);

  /// Notifies the owners of changed parameters and their ancestors.
  void update();
  /// Sets every value `optimizer` holds under its key (Mitsuba's params.update(opt)),
  /// then update(). Throws before changing anything when a key is unknown.
  void update(const ParameterOptimizer& optimizer);

 private:
  /// The nodes (value and AD) of a parameter's arrays, as update() last saw them.
  using Nodes = std::vector<std::pair<detail::Index, detail::AdIndex>>;
  struct Entry {
    ParameterRef ref;
    Object* owner;
    std::string name;  ///< relative to the owner
    uint32_t flags;
    Nodes nodes;
    std::shared_ptr<const void> storage;  ///< keeps `ref`'s storage alive (Python plugins), or null
  };
  class Collector;

  static Nodes nodes_of(const ParameterRef& ref);
  Entry& entry(const std::string& key);
  /// Records that `key` changed (after a successful set()).
  void changed(const std::string& key);

  std::map<std::string, Entry> entries_;
  std::map<Object*, Object*> parent_;
  std::map<Object*, std::string> name_in_parent_;  ///< the name `parent_` lists it under
  std::map<Object*, size_t> depth_;
  std::map<Object*, std::vector<std::string>> changed_;
};

}  // namespace kiln::render
