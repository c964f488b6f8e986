// Calling a host (C or C++) function from inside kernels, one packet of lanes at a time:
// how the renderer reaches Embree. Kernels name the function by a stable id (a hash of its
// registered name and signature), so they stay valid in the disk cache; its address and
// the caller's context pointer are launch parameters, never baked into code.
#pragma once

#include <kiln/control.h>

#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

namespace kiln {

/// A host function called from kernels on `width` lanes at once (the backend's packet
/// width, or 1 from the reference interpreter). `active[i]` is -1 for a lane to compute and
/// 0 for one to skip (Embree's `valid` convention); a packet without an active lane makes no
/// call. `inputs[k]` points at `width` values of input k, `outputs[k]` at room for `width`
/// values of output k, each of its registered type (Bool as one byte: 0 or 1 in, any nonzero
/// byte is true out). Outputs of inactive lanes are ignored: kernels read zero there.
/// The function runs on many threads at once and must be pure: its outputs depend only on
/// its inputs and on what `context` points at, which must not change while arrays that
/// call it are pending. Kernels call it only for results they need (a call whose results
/// are unused never runs; identical calls run once), and it must not throw.
using HostFunctionPointer = void (*)(void* context, uint32_t width, const int32_t* active, const void* const* inputs,
                                     void* const* outputs);

/// A host function registered for kernels to call. Registering the same name and signature
/// again (in this or another process) gives the same id; a different signature under a
/// name already registered in this process throws ValueError, and so do an empty name, a
/// null pointer and a signature without outputs. Kernels name the function by its id; the
/// pointer of the HostFunction a call is traced with is passed at launch.
class HostFunction {
 public:
  HostFunction(std::string name, std::vector<VarType> inputs, std::vector<VarType> outputs, HostFunctionPointer fn);

  /// Stable across processes: a hash of the name and the signature (part of kernel keys).
  uint64_t id() const { return id_; }
  const std::string& name() const { return name_; }
  const std::vector<VarType>& inputs() const { return inputs_; }
  const std::vector<VarType>& outputs() const { return outputs_; }
  HostFunctionPointer pointer() const { return fn_; }

 private:
  std::string name_;
  std::vector<VarType> inputs_, outputs_;
  HostFunctionPointer fn_;
  uint64_t id_;
};

namespace detail {
/// Records a call of `function` with `context` on the lanes where `active` holds (and the
/// enclosing loop, branch or call is active); returns its outputs, which are 0 on the other
/// lanes and carry no derivatives (a differentiable computation sees them as constants).
/// Throws TypeError when the inputs do not match the signature (count, types) and
/// SizeError when their sizes differ other than by broadcasting a size 1.
Values host_call(const HostFunction& function, void* context, const Values& inputs, Index active);
}  // namespace detail

/// Calls `function` on every lane where `active` holds: `Outs` are the output arrays'
/// types, in the order of the registered signature.
template <typename... Outs, typename... Ins> std::tuple<Outs...> host_call(const HostFunction& function, void* context,
                                                                           const std::tuple<Ins...>& inputs,
                                                                           const Bool& active = Bool(true)) {
  detail::Values outputs = detail::host_call(function, context, detail::flatten_values(inputs), active.index());
  return detail::rebuild_values<std::tuple<Outs...>>(outputs);
}

}  // namespace kiln
