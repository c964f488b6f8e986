// The IR node and the global node table: allocation, reference counts and value numbering.
//
// Start reading here for the IR. Every traced operation creates (or reuses, when value
// numbering finds an identical pure node) one Node. Arrays hold external references
// (ref_ext); operands and the pending side-effect list hold internal ones (ref_int). A
// node whose references drop to zero is freed and releases its operands. Evaluation
// turns a node into Data: it keeps its buffer and drops its operands, so the graph
// collapses as results are computed.
#pragma once

#include <kiln/detail/trace_api.h>

#include "ir/op_info.h"
#include "ir/region.h"
#include "ir/value_table.h"
#include "memory/allocator.h"

#include <memory>
#include <mutex>
#include <optional>
#include <source_location>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace kiln::detail {

struct Node {
  Op op = Op::Literal;
  VarType type = VarType::Bool;
  /// Nonzero on a Data node that pending scatters (of this many lanes) will write: using
  /// it as an operand or reading it first evaluates those scatters.
  size_t dirty_size = 0;
  /// The region whose recorded scatters made the node dirty (0: the pending list), so
  /// reads inside that body do not try to evaluate them.
  uint32_t dirty_scope = 0;
  /// The innermost symbolic loop body whose state the node depends on (src/ir/region.h).
  uint32_t scope = 0;
  Index operands[4] = {0, 0, 0, 0};
  /// Value bits (Literal, Param), or the ReduceOp (Scatter).
  uint64_t literal = 0;
  size_t size = 0;
  uint32_t ref_ext = 0, ref_int = 0;
  /// Where the node's memory lives and its kernel runs. create_node() derives it from the
  /// operands; a prototype without operands sets it.
  Device device = Device::CPU;
  /// The node holds memory or is computed from memory (Data somewhere below it). Unplaced
  /// nodes — literals, parameters, lane indices and what is computed from them alone —
  /// need no memory and join operations on any device.
  bool placed = false;
  /// Creation order, for deterministic scheduling and printing.
  uint64_t serial = 0;
  std::shared_ptr<Buffer> buffer;  ///< Data nodes only
  /// Where user code created the node (literals and parameters; line 0 when unknown).
  /// Diagnostics only, never hashed.
  std::source_location created;
  /// A label is set (in State::notes), so the scheduler can skip the lookup otherwise.
  bool labelled = false;
  /// Scheduler scratch: the statement position of the node in the kernel being built,
  /// valid when `schedule_pass` equals the pass that builds it (no map per kernel).
  uint32_t schedule_position = 0;
  uint64_t schedule_pass = 0;
};

/// Label and creation site of a node: diagnostics only, never hashed.
struct NodeNote {
  std::string label;
  std::string where;
  /// The node is a literal folded from labelled ones; `label` lists their labels.
  bool derived = false;
};

/// Sees every node about to be created while it is installed (State::creation_watch). An
/// evaluated loop installs one to find arrays its body reads from outside its state.
class CreationWatch {
 public:
  virtual ~CreationWatch() = default;
  virtual void creating(const Node& prototype) = 0;
};

/// All of Kiln's tracing state. One instance; every public entry point holds `mutex`.
struct State {
  std::recursive_mutex mutex;
  std::vector<Node> nodes{1};  // index 0 is "no node"
  std::vector<Index> free_list;
  ValueTable value_numbers;
  std::unordered_map<Index, NodeNote> notes;
  std::vector<Index> side_effects;  ///< pending, in program order (internal refs)
  std::vector<Index> scheduled;     ///< marked by schedule() (internal refs)
  uint64_t next_serial = 1;
  size_t pending_nodes = 0;                      ///< live nodes other than Data: traced work not evaluated yet
  uint64_t schedule_passes = 0;                  ///< kernels scheduled so far (see Node::schedule_pass)
  std::unordered_map<uint32_t, Region> regions;  ///< recorded loop bodies by id
  std::vector<uint32_t> open_regions;            ///< being recorded, innermost last
  uint32_t next_region = 1;
  std::vector<Index> masks;  ///< the mask stack (internal refs; 0 = all lanes)
  /// Run after every evaluation (e.g. to print what print_async() recorded).
  std::vector<void (*)()> after_evaluation;
  CreationWatch* creation_watch = nullptr;  ///< innermost only
  /// While set, trace() replaces each operand found here by its mapped node (a symbolic
  /// dispatch replaying one instance's body for a group of alike instances: shared_bodies.h).
  const std::unordered_map<Index, Index>* substitutions = nullptr;
  std::vector<const InputWatch*> input_watches;  ///< innermost last; null: a barrier
  /// Nodes waiting to be freed, and whether a call is freeing them (node_table.cpp).
  std::vector<Index> unreferenced;
  bool freeing = false;
};
/// The one State, created when the library loads (use state()).
extern State* const global_state;
/// The one State (inline, a plain pointer: tracing and scheduling call this per node).
inline State& state() { return *global_state; }

/// Owns one external reference to a node (or none: 0), released when it goes.
class Ref {
 public:
  Ref() = default;
  explicit Ref(Index stolen) : index_(stolen) {}
  Ref(Ref&& other) noexcept : index_(std::exchange(other.index_, 0)) {}
  Ref& operator=(Ref&& other) noexcept {
    std::swap(index_, other.index_);
    return *this;
  }
  Ref(const Ref&) = delete;
  Ref& operator=(const Ref&) = delete;
  ~Ref() {
    if (index_) dec_ref(index_);
  }
  Index get() const { return index_; }
  Index& slot() { return index_; }
  Index release() { return std::exchange(index_, 0); }

 private:
  Index index_ = 0;
};

/// Locks the global state for the duration of a public entry point.
using StateLock = std::lock_guard<std::recursive_mutex>;

inline Node& node(Index index) { return state().nodes[index]; }
/// The device of the placed operands among `operands` (checked to agree: ValueError naming
/// both devices and `what` otherwise), or nothing when none is placed.
std::optional<Device> placed_device(const Index* operands, int count, const char* what);
/// Creates a node (value-numbered when its op is pure); returns it with one external ref.
Index create_node(const Node& prototype);
void inc_ref_int(Index index);
void dec_ref_int(Index index);
/// A Data node over `buffer` (on the buffer's device), with one external reference.
Index make_data(VarType type, size_t count, std::shared_ptr<Buffer> buffer);
/// Turns an evaluated node into Data over `buffer`, dropping its operands.
void collapse_to_data(Index index, std::shared_ptr<Buffer> buffer);
/// Checks that an index names a live node; throws with `what` otherwise.
void check_live(Index index, const char* what);

}  // namespace kiln::detail
