// The runtime-typed control-flow interface that control.h's templates and the Python
// binding forward to: loops, conditionals, polymorphic calls, per-lane prints and
// records over lists of untyped array handles.
#pragma once

#include <kiln/detail/ad_api.h>
#include <kiln/detail/trace_api.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kiln {

/// How a loop, conditional or call runs. Symbolic: recorded once into the kernel that
/// uses its results (a real loop, masked branches). Evaluated: the host launches kernels
/// per iteration / per branch / per instance over the lanes that are still active.
enum class ControlMode : uint8_t { Symbolic, Evaluated };

/// While it lives, loops, conditionals and calls traced on this thread without mode= run
/// in `mode` (an empty `mode` changes nothing), unless they are inside a symbolic
/// statement, which makes them symbolic. The mode is decided when a statement is traced:
/// its derivatives, traced later by a traversal, keep it (src/control/mode.cpp).
class [[nodiscard]] ControlModeScope {
 public:
  explicit ControlModeScope(std::optional<ControlMode> mode);
  ~ControlModeScope();
  ControlModeScope(const ControlModeScope&) = delete;
  ControlModeScope& operator=(const ControlModeScope&) = delete;

 private:
  bool active_;
};

namespace detail {

/// An owned reference to a node of any type and to the AD node it carries (0 when none):
/// what Array<T> is without its type.
class Handle {
 public:
  Handle() = default;
  /// Takes over one reference to `index`.
  static Handle steal(Index index) {
    Handle h;
    h.index_ = index;
    return h;
  }
  /// Takes over one reference to a node and one to its AD node.
  static Handle steal(AdValue value) {
    Handle h = steal(value.value);
    h.ad_ = value.ad;
    return h;
  }
  /// Adds a reference to `index`.
  static Handle borrow(Index index) {
    inc_ref(index);
    return steal(index);
  }
  /// Adds a reference to a node and to its AD node.
  static Handle borrow(AdOperand value) {
    inc_ref(value.value);
    if (value.ad) ad_inc_ref(value.ad);
    return steal(AdValue{value.value, value.ad});
  }
  Handle(const Handle& other) : index_(other.index_), ad_(other.ad_) {
    inc_ref(index_);
    if (ad_) ad_inc_ref(ad_);
  }
  Handle(Handle&& other) noexcept : index_(std::exchange(other.index_, 0)), ad_(std::exchange(other.ad_, 0)) {}
  Handle& operator=(Handle other) noexcept {
    std::swap(index_, other.index_);
    std::swap(ad_, other.ad_);
    return *this;
  }
  ~Handle() {
    dec_ref(index_);
    if (ad_) ad_dec_ref(ad_);
  }
  Index index() const { return index_; }
  /// The AD node (0: the value carries no derivatives).
  AdIndex ad() const { return ad_; }
  AdOperand operand() const { return {index_, ad_}; }
  /// The same value without its derivatives.
  Handle detached() const { return borrow(index_); }
  /// Gives up ownership of the node: the caller now holds its reference (the reference to
  /// the AD node, if any, is dropped).
  Index release() {
    if (ad_) ad_dec_ref(std::exchange(ad_, 0));
    return std::exchange(index_, 0);
  }
  /// Gives up both references to the caller.
  AdValue take() { return {std::exchange(index_, 0), std::exchange(ad_, 0)}; }
  explicit operator bool() const { return index_ != 0; }

 private:
  Index index_ = 0;
  AdIndex ad_ = 0;
};
using Values = std::vector<Handle>;

using ConditionFn = std::function<Handle(const Values&)>;
using BodyFn = std::function<Values(const Values&)>;
/// Traces instance `id`'s method on `args`.
using InstanceFn = std::function<Values(uint32_t id, const Values& args)>;

/// The mode a statement with `requested` runs in, decided once when it is traced
/// (src/control/mode.cpp); raises ValueError for mode=evaluated inside a symbolic
/// statement. `what` names the statement in that error.
ControlMode resolve_mode(std::optional<ControlMode> requested, const std::string& what);
/// The mode a statement without mode= gets where it is traced now: symbolic inside a
/// symbolic statement, else the innermost ControlModeScope, else the global flag.
ControlMode default_mode();

}  // namespace detail

/// How reverse mode differentiates a symbolic loop. Evaluated loops need neither: each
/// iteration is kept in the AD graph, except in a sum loop, which reverse mode runs again
/// in either mode. Forward mode needs nothing in either mode.
struct LoopDerivative {
  /// Store each lane's state at every iteration, for up to this many iterations (0: no
  /// storage); reverse mode then runs the body's adjoint backwards over it. A lane that
  /// runs more iterations makes the reverse pass raise (never a silent truncation).
  size_t max_iterations = 0;
  /// The loop only accumulates into its differentiable state (`acc = acc + f(other
  /// state, captured arrays)`, where the other state does not depend on differentiable
  /// inputs): reverse mode runs the loop again and stores nothing.
  bool sum_loop = false;
};

namespace detail {

/// Runs `body` while `cond` holds, per lane; returns the final state.
Values while_loop(const Values& state, const ConditionFn& cond, const BodyFn& body, std::optional<ControlMode> mode,
                  const std::string& name, const LoopDerivative& derivative = {});
/// Per lane, `true_fn(args)` where `cond` holds, else `false_fn(args)`.
Values if_stmt(Index cond, const BodyFn& true_fn, const BodyFn& false_fn, const Values& args,
               std::optional<ControlMode> mode, const std::string& name);
/// Per lane, `fn(ids[lane], args)` for the ids in `instances` (registered, nonzero); lanes
/// with any other id are inactive and get zeros.
Values dispatch(Index ids, const std::vector<uint32_t>& instances, const InstanceFn& fn, const Values& args,
                std::optional<ControlMode> mode, const std::string& name);

/// A chunk of a chunked map: (`count` rows of each mapped input, the whole inputs, count)
/// → outputs of `count` rows each (flat: count × an output's row width lanes).
using ChunkFn = std::function<Values(const Values& mapped, const Values& whole, size_t count)>;

/// Runs `fn` on consecutive chunks of `chunk_rows` rows of the `mapped` inputs (input k
/// has `rows` rows of `widths[k]` lanes), passing the `whole` inputs unsliced, and returns
/// the outputs of all chunks joined (each chunk is evaluated before the next). With
/// derivatives, reverse mode recomputes each chunk, backpropagates it and accumulates the
/// gradients of whole inputs (and of differentiable arrays fn reads from outside) in
/// place; forward mode runs chunk by chunk too. Nothing of a chunk is kept. `title`
/// ("chunked_map('name')", "checkpoint()") names it in errors.
Values chunked_map(const ChunkFn& fn, const Values& mapped, const std::vector<size_t>& widths, size_t rows,
                   const Values& whole, size_t chunk_rows, const std::string& title);

/// Prints `format` ("{}" per value) once per active lane, from inside the kernel that
/// computes the values; the lines appear when that kernel has run.
void print_async(const std::string& format, const Values& values, Index active);

/// Per-lane records appended from anywhere (inside loops and calls too): one record per
/// active lane per append, stored compactly in the order of an atomic counter.
///
/// A record is one value per column (`columns` lists their types). Consecutive columns form
/// a field (`widths`: columns per field, all of one type; empty: one column per field), and
/// a field's columns are stored interleaved, record i's column j at width * i + j, so that a
/// vector or matrix field is one (n, width) block: NumPy views it without a copy.
class RecorderCore {
 public:
  RecorderCore(std::vector<VarType> columns, size_t capacity, std::vector<size_t> widths = {});
  /// Appends one record (`values[k]` for column k) per lane where `active` is set.
  void append(Index active, const Values& values);
  /// Records appended so far, including any beyond the capacity (evaluates).
  size_t count() const;
  size_t capacity() const { return capacity_; }
  const std::vector<VarType>& columns() const { return columns_; }
  /// Field f's first count() records (count() * width elements, interleaved), sharing the
  /// recorder's memory (no copy). Throws SizeError naming the capacity to use when more
  /// records were appended than fit.
  Handle field(size_t f) const;
  /// Field f's stored records: the first min(count(), capacity()), never an error.
  Handle stored(size_t f) const;
  /// True while appends are traced but have not run yet.
  bool pending() const;
  /// Forgets the records (the counter restarts at zero).
  void clear();

 private:
  std::vector<VarType> columns_;
  size_t capacity_;
  std::vector<size_t> widths_;           ///< columns per field
  std::vector<size_t> field_of_column_;  ///< the field each column belongs to
  Handle counter_;
  std::vector<Handle> fields_;  ///< one buffer of capacity * width elements per field
};

}  // namespace detail
}  // namespace kiln
