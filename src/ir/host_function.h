// Host functions that kernels call (include/kiln/host_call.h): the process-wide registry
// of their signatures by id, and the recording of a call into the IR.
//
// A call is a chain of nodes: HostArg cells that list the arguments (the first cell hangs
// off the call's function parameter), the HostCall (function address and context pointer
// as UInt64 parameters, the lanes to run on, the last cell; its `literal` is the function's
// id) and one HostResult per output. All are pure: a call whose results are unused is dead
// code, and identical calls merge. Backends look the signature up by id, because the
// function writes every output, including those whose HostResult is gone.
#pragma once

#include <kiln/detail/trace_api.h>

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::detail {

/// What kernels know of a host function: its registered name and signature.
struct HostSignature {
  std::string name;
  std::vector<VarType> inputs, outputs;
};

/// Registers `signature` and returns its id, a hash of the name and signature that is the
/// same in every process. Registering it again returns the same id; throws ValueError when
/// the name is registered with another signature.
uint64_t register_host_function(const HostSignature& signature);

/// The signature registered under `id`; throws InternalError when there is none.
const HostSignature& host_signature(uint64_t id);

/// "(f32, u32)": a signature's types, for messages.
std::string type_list(const std::vector<VarType>& types);

/// How printers show a host-call node: `host_call "name"` for a HostCall, `output k` for a
/// HostResult, empty for other ops.
std::string describe_host_node(Op op, uint64_t literal);

/// Records a call of the function registered as `id`, whose address and context pointer
/// are the UInt64 parameter nodes `fn` and `context`, on `inputs` (one per input of the
/// signature) where `active` and the enclosing mask hold. Returns one HostResult per output
/// (new references). Throws TypeError when the inputs do not match the signature and
/// SizeError when their sizes do not broadcast.
std::vector<Index> trace_host_call(uint64_t id, Index fn, Index context, const std::vector<Index>& inputs,
                                   Index active);

}  // namespace kiln::detail
