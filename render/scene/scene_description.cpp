// Scene descriptions: building a plugin node tree and instantiating it bottom-up, with
// references resolved by id (forward references included) and cycles reported.
#include <kiln/errors.h>
#include <kiln/render/plugin.h>
#include <kiln/render/scene_description.h>

#include <algorithm>
#include <map>

namespace kiln::render {
namespace {

std::string describe_node(const PluginNode& node) {
  return describe_plugin(node.kind, node.plugin, node.id, node.source);
}

/// Instantiates one tree: the ids declared in it, the objects built so far for nodes with
/// an id, and the chain of nodes under construction (to report cycles).
class Instantiation {
 public:
  explicit Instantiation(const PluginNode& root) { declare_ids(root); }

  std::shared_ptr<Object> build(const PluginNode& node) {
    if (auto it = built_.find(&node); it != built_.end()) return it->second;
    if (auto it = std::find(building_.begin(), building_.end(), &node); it != building_.end()) {
      std::string chain;
      for (; it != building_.end(); ++it) chain += describe_node(**it) + " -> ";
      throw ValueError("kiln.render: a cycle of references: " + chain + describe_node(node));
    }
    building_.push_back(&node);
    Properties props(node.kind, node.plugin, node.id, node.source);
    for (const NodeParameter& parameter : node.parameters)
      props.set(parameter.name, parameter_value(node, parameter), parameter.source);
    std::shared_ptr<Object> object = create_object(props);
    building_.pop_back();
    if (!node.id.empty()) built_.emplace(&node, object);
    return object;
  }

 private:
  void declare_ids(const PluginNode& node) {
    for (const std::string& id : {node.id, node.path_id}) {
      if (id.empty()) continue;
      auto [it, inserted] = declared_.emplace(id, &node);
      if (!inserted && it->second != &node)
        throw ValueError("kiln.render: the id '" + id + "' is declared twice: by " + describe_node(*it->second) +
                         " and by " + describe_node(node));
    }
    for (const NodeParameter& parameter : node.parameters) {
      if (const auto* child = std::get_if<std::unique_ptr<PluginNode>>(&parameter.value); child && *child)
        declare_ids(**child);
      // An object a scene dict holds as a child (already built) is referenced by its key, as
      // in Mitsuba's load_dict, and takes the key as id when it has none.
      const auto* value = std::get_if<Properties::Value>(&parameter.value);
      if (node.kind != PluginKind::Scene || !value || !std::holds_alternative<std::shared_ptr<Object>>(*value))
        continue;
      const std::shared_ptr<Object>& instance = std::get<std::shared_ptr<Object>>(*value);
      if (instance->id().empty()) instance->set_origin(instance->plugin(), parameter.name, instance->source());
      instances_.emplace(parameter.name, instance);
    }
  }

  Properties::Value parameter_value(const PluginNode& node, const NodeParameter& parameter) {
    if (const auto* value = std::get_if<Properties::Value>(&parameter.value)) return *value;
    if (const auto* child = std::get_if<std::unique_ptr<PluginNode>>(&parameter.value)) {
      if (!*child)
        throw InternalError("kiln.render: " + describe_node(node) + ", parameter '" + parameter.name +
                            "' holds an empty node");
      return build(**child);
    }
    const Reference& reference = std::get<Reference>(parameter.value);
    if (auto it = declared_.find(reference.id); it != declared_.end()) return build(*it->second);
    if (auto it = instances_.find(reference.id); it != instances_.end()) return it->second;
    std::string known;
    for (const auto& [id, declaration] : declared_) known += (known.empty() ? "" : ", ") + id;
    for (const auto& [id, instance] : instances_) known += (known.empty() ? "" : ", ") + id;
    throw ValueError("kiln.render: " + describe_node(node) + ", parameter '" + parameter.name + "'" +
                     (reference.source.empty() ? "" : " (" + reference.source + ")") + " refers to the id '" +
                     reference.id + "', which nothing declares" +
                     (known.empty() ? " (the scene declares no ids)" : " (declared ids: " + known + ")"));
  }

  std::map<std::string, const PluginNode*> declared_;
  std::map<std::string, std::shared_ptr<Object>> instances_;  ///< built objects a scene holds, by key
  std::map<const PluginNode*, std::shared_ptr<Object>> built_;
  std::vector<const PluginNode*> building_;
};

}  // namespace

void PluginNode::add_value(std::string name, Properties::Value value, std::string source) {
  parameters.push_back(NodeParameter{std::move(name), std::move(value), std::move(source)});
}

PluginNode& PluginNode::add_child(std::string name, PluginNode child) {
  std::string child_source = child.source;
  auto node = std::make_unique<PluginNode>(std::move(child));
  PluginNode& added = *node;
  parameters.push_back(NodeParameter{std::move(name), std::move(node), std::move(child_source)});
  return added;
}

void PluginNode::add_reference(std::string name, Reference reference) {
  std::string source = reference.source;
  parameters.push_back(NodeParameter{std::move(name), std::move(reference), std::move(source)});
}

std::shared_ptr<Object> instantiate(const PluginNode& root) { return Instantiation(root).build(root); }

Color3d rgb_value(const std::vector<double>& numbers, const std::string& where) {
  if (numbers.size() == 1) return Color3d{{numbers[0], numbers[0], numbers[0]}};
  if (numbers.size() != 3)
    throw ValueError(where + ": an 'rgb' value has 3 numbers (or 1 for gray), not " + std::to_string(numbers.size()));
  return Color3d{{numbers[0], numbers[1], numbers[2]}};
}

Color3d spectrum_value(const std::vector<double>& numbers, const std::string& where) {
  if (numbers.size() != 1) refuse_spectral_data(where);
  return Color3d{{numbers[0], numbers[0], numbers[0]}, true};
}

Color3d spectrum_plugin(const std::string& type,
                        const std::function<std::vector<std::pair<std::string, double>>()>& read_parameters,
                        const std::string& where) {
  if (type != "d65") refuse_spectral_data(where + ": a '" + type + "' spectrum");
  double scale = 1.0;
  for (const auto& [name, value] : read_parameters()) {
    if (name != "scale") throw ValueError(where + ": a 'd65' spectrum takes only 'scale', not '" + name + "'");
    scale = value;
  }
  return Color3d{{scale, scale, scale}};
}

void refuse_spectral_data(const std::string& where) {
  throw ValueError(where +
                   " is spectral data, which kiln.render does not render (it is RGB only; Mitsuba's RGB variants "
                   "cannot render blackbody, regular or irregular spectra either): give an RGB value, a single "
                   "value for gray, or a 'd65' spectrum");
}

}  // namespace kiln::render
