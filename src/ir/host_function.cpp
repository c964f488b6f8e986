// The registry of host functions (see host_function.h), HostFunction, and host_call():
// the launch parameters of a call, which identical calls share so that they merge.
#include "ir/host_function.h"

#include <kiln/errors.h>
#include <kiln/host_call.h>

#include "ir/node.h"
#include "util/hash.h"

#include <mutex>
#include <unordered_map>

namespace kiln::detail {
namespace {

/// The UInt64 parameter nodes of a call, kept (without a reference) to be shared by the
/// next call of the function with the same address and context while they live.
struct CallParameters {
  uint64_t address = 0, context = 0;
  Index fn = 0, context_node = 0;
  uint64_t fn_serial = 0, context_serial = 0;
};

struct Registered {
  HostSignature signature;
  CallParameters last_call;  ///< guarded by the tracing state's mutex
};

/// Every function registered in this process. Entries are never removed, so references to
/// them stay valid; HostFunctions may be constructed during static initialization, before
/// anything is traced, so this does not use the tracing state.
struct Registry {
  std::mutex mutex;
  std::unordered_map<uint64_t, Registered> by_id;
  std::unordered_map<std::string, uint64_t> id_by_name;
};

Registry& registry() {
  static Registry* instance = new Registry();  // never destroyed: kernels may run at exit
  return *instance;
}

std::string describe_signature(const HostSignature& signature) {
  return type_list(signature.inputs) + " -> " + type_list(signature.outputs);
}

/// The name's length first, so that no two (name, signature) pairs give the same text.
uint64_t id_of(const HostSignature& signature) {
  std::string text = std::to_string(signature.name.size()) + ":" + signature.name + describe_signature(signature);
  return hash_bytes(text.data(), text.size());
}

Registered& registered(uint64_t id) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.by_id.find(id);
  if (it == r.by_id.end()) throw InternalError("kiln: no host function is registered with id " + std::to_string(id));
  return it->second;
}

bool still_names(Index index, uint64_t serial) {
  const State& s = state();
  if (index == 0 || index >= s.nodes.size()) return false;
  const Node& n = s.nodes[index];
  return n.ref_ext + n.ref_int > 0 && n.serial == serial && n.op == Op::Param;
}

/// The function's address and the context as UInt64 parameter nodes (new references):
/// those of the previous call when it had the same ones and its nodes are still alive.
std::pair<Handle, Handle> call_parameters(const HostFunction& function, void* context) {
  CallParameters& last = registered(function.id()).last_call;
  uint64_t address = reinterpret_cast<uint64_t>(function.pointer()), context_bits = reinterpret_cast<uint64_t>(context);
  if (last.address == address && last.context == context_bits && still_names(last.fn, last.fn_serial) &&
      still_names(last.context_node, last.context_serial))
    return {Handle::borrow(last.fn), Handle::borrow(last.context_node)};
  Handle fn = Handle::steal(make_param(VarType::UInt64, address, 1));
  Handle context_node = Handle::steal(make_param(VarType::UInt64, context_bits, 1));
  last = {address,
          context_bits,
          fn.index(),
          context_node.index(),
          node(fn.index()).serial,
          node(context_node.index()).serial};
  return {std::move(fn), std::move(context_node)};
}

}  // namespace

uint64_t register_host_function(const HostSignature& signature) {
  std::string title = "kiln: HostFunction('" + signature.name + "')";
  if (signature.name.empty()) throw ValueError("kiln: HostFunction(): the name is empty; name the function");
  if (signature.outputs.empty())
    throw ValueError(title +
                     ": the function has no outputs; calls are pure (a call whose results are unused never runs), "
                     "so a host function must return at least one array");
  uint64_t id = id_of(signature);
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto named = r.id_by_name.find(signature.name);
  if (named != r.id_by_name.end() && named->second != id)
    throw ValueError(title + ": the name is already registered with the signature " +
                     describe_signature(r.by_id.at(named->second).signature) + ", not " +
                     describe_signature(signature) + "; one name stands for one signature in a process");
  auto [it, inserted] = r.by_id.try_emplace(id, Registered{signature, {}});
  if (!inserted && it->second.signature.name != signature.name)
    throw ValueError(title + ": its id collides with that of '" + it->second.signature.name + "'; rename one of them");
  r.id_by_name.emplace(signature.name, id);
  return id;
}

const HostSignature& host_signature(uint64_t id) { return registered(id).signature; }

std::string type_list(const std::vector<VarType>& types) {
  std::string text = "(";
  for (size_t k = 0; k < types.size(); ++k) text += (k ? ", " : "") + std::string(type_name(types[k]));
  return text + ")";
}

std::string describe_host_node(Op op, uint64_t literal) {
  if (op == Op::HostCall) return "host_call \"" + host_signature(literal).name + "\"";
  if (op == Op::HostResult) return "output " + std::to_string(literal);
  return {};
}

Values host_call(const HostFunction& function, void* context, const Values& inputs, Index active) {
  StateLock lock(state().mutex);
  std::vector<Index> indices;
  for (const Handle& input : inputs) indices.push_back(input.index());
  auto [fn, context_node] = call_parameters(function, context);
  Values outputs;
  for (Index result : trace_host_call(function.id(), fn.index(), context_node.index(), indices, active))
    outputs.push_back(Handle::steal(result));
  return outputs;
}

}  // namespace kiln::detail

namespace kiln {
namespace {
uint64_t register_checked(const std::string& name, const std::vector<VarType>& inputs,
                          const std::vector<VarType>& outputs, HostFunctionPointer fn) {
  if (!fn) throw ValueError("kiln: HostFunction('" + name + "'): the function pointer is null");
  return detail::register_host_function({name, inputs, outputs});
}
}  // namespace

HostFunction::HostFunction(std::string name, std::vector<VarType> inputs, std::vector<VarType> outputs,
                           HostFunctionPointer fn)
    : name_(std::move(name)),
      inputs_(std::move(inputs)),
      outputs_(std::move(outputs)),
      fn_(fn),
      id_(register_checked(name_, inputs_, outputs_, fn_)) {}

}  // namespace kiln
