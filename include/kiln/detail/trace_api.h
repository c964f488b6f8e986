// The runtime-typed tracing interface that Array<T> (and the Python binding) forward to.
// Every function here locks Kiln's global state; node indices are plain integers whose
// lifetime is managed by inc_ref/dec_ref (Array<T> does this for you).
#pragma once

#include <kiln/detail/op_table.h>
#include <kiln/device.h>
#include <kiln/types.h>

#include <memory>
#include <source_location>
#include <string>
#include <vector>

namespace kiln::detail {

/// Index of an IR node; 0 means "no node".
using Index = uint32_t;

void inc_ref(Index index);
void dec_ref(Index index);

/// A literal of `size` lanes, all holding the value whose bits are `bits`, on the default
/// device; `where` is the user code that created it (for the reasons of kernel
/// compilations). Literals and parameters need no memory: they join operations on any
/// device.
Index make_literal(VarType type, uint64_t bits, size_t size, std::source_location where = {});
/// Like make_literal, but the value is passed to kernels at launch instead of being baked
/// into their code (opaque()): changing it never compiles a new kernel.
Index make_param(VarType type, uint64_t bits, size_t size, std::source_location where = {});
/// make_opaque() on one node: a literal becomes a parameter, pending work is evaluated,
/// evaluated data stays. Returns the node to use instead (with a new reference).
Index make_opaque(Index index);
/// An evaluated array on `device` holding a copy of `count` elements at host address `data`.
Index make_copy(VarType type, const void* data, size_t count, Device device = default_device());
/// An evaluated array over caller memory on `device`, without a copy. `owner` is kept
/// alive as long as any node uses the memory (pass nullptr when the caller guarantees the
/// lifetime).
Index make_wrapped(VarType type, void* data, size_t count, std::shared_ptr<void> owner,
                   Device device = default_device());
/// An evaluated array over the first `count` elements of `index`'s memory (evaluated
/// first), without a copy: the memory stays alive while either array uses it.
Index make_prefix(Index index, size_t count);
/// An evaluated array of `count` uninitialized elements on `device`.
Index make_empty(VarType type, size_t count, Device device = default_device());
/// The array on `device`: the same node when it is there (or a literal), else an evaluated
/// copy (a new reference either way).
Index make_on_device(Index index, Device device);
/// The lane index 0..size-1 as UInt32.
Index make_counter(size_t size);

/// Records `op` on operands (0 for unused). `type` is the result type for Cast and
/// Bitcast and ignored otherwise. Checks types and sizes and throws on a mismatch.
Index trace(Op op, Index a, Index b = 0, Index c = 0, VarType type = VarType::Bool);
/// Records a scatter (with reduction) into `target`, which is materialized and, when
/// shared, copied first: then `target` is replaced by the index of the copy, which
/// carries a new reference (the caller still owns its reference to the old index).
void trace_scatter(ReduceOp reduce, Index& target, Index value, Index index, Index mask);
/// Records an atomic increment of target[index] per active lane; returns the old values.
Index trace_scatter_inc(Index& target, Index index, Index mask);

VarType node_type(Index index);
size_t node_size(Index index);
/// True when the node is a literal (a constant that needs no memory).
bool node_is_literal(Index index);
/// True when the node is a literal whose bits are zero (0, +0.0, false).
bool node_is_zero(Index index);
Device node_device(Index index);

/// Evaluates the given nodes and every pending side effect.
void eval(const Index* indices, size_t count);
/// Marks nodes for evaluation at the next eval().
void schedule(Index index);
/// Evaluates the node if needed and returns its memory on its device (valid while the
/// node lives; on a GPU, a device address).
const void* data(Index index);
/// Evaluates the node if needed and copies its elements into host memory at `out`.
void read_all(Index index, void* out);
/// Reads one element (evaluates if needed); throws when `i` is out of range.
void read(Index index, size_t i, void* out);

/// Attaches a label (for the IR printer and kernel logs; never part of a kernel's identity).
void set_label(Index index, const std::string& label, std::source_location where);
/// The same with the labelling site as text ("film.py:12", from the Python binding; empty
/// when unknown).
void set_label(Index index, const std::string& label, const std::string& where);
std::string label(Index index);

/// The pending graph behind the nodes as Graphviz DOT text.
std::string graphviz(const Index* indices, size_t count);
/// The code of the kernels that would compute the arrays and the pending side effects,
/// lowered for `device` ("cpu" or "cuda") in `format` ("llvm", or "ptx" for CUDA).
std::string kernel_source(const Index* indices, size_t count, const std::string& device, const std::string& format);

/// Horizontal operations: they evaluate their input and return a new evaluated node.
enum class Reduction : uint8_t { Sum, Prod, Min, Max, Any, All };
Index reduce(Reduction kind, Index index);
/// The sums of many Float/Float64 arrays at once (one-lane results, new references): all
/// are evaluated together, then reduced in parallel over (array, block) with several
/// accumulators per block. Deterministic, but not rounded like sum() (the gradients of
/// one-lane parameters used on many lanes).
std::vector<Index> sum_each(const Index* indices, size_t count);
Index prefix_sum(Index index, bool exclusive);
Index compress(Index mask);
Index block_sum(Index index, size_t block);
/// The lanes where `ids` (UInt32: `lanes` elements, or one for all) holds each of
/// `values`: one array of ascending lane indices per value, on the ids' device (new
/// references). What an evaluated dispatch runs each instance on.
std::vector<Index> lanes_by_value(Index ids, const std::vector<uint32_t>& values, size_t lanes);

}  // namespace kiln::detail
