// The runtime-typed control-flow interface that control.h's templates and the Python
// binding forward to: loops, conditionals, polymorphic calls, per-lane prints and
// records over lists of untyped array handles.
#pragma once

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

namespace detail {

/// An owned reference to a node of any type: what Array<T> is without its type.
class Handle {
 public:
  Handle() = default;
  /// Takes over one reference to `index`.
  static Handle steal(Index index) {
    Handle h;
    h.index_ = index;
    return h;
  }
  /// Adds a reference to `index`.
  static Handle borrow(Index index) {
    inc_ref(index);
    return steal(index);
  }
  Handle(const Handle& other) : index_(other.index_) { inc_ref(index_); }
  Handle(Handle&& other) noexcept : index_(std::exchange(other.index_, 0)) {}
  Handle& operator=(Handle other) noexcept {
    std::swap(index_, other.index_);
    return *this;
  }
  ~Handle() { dec_ref(index_); }
  Index index() const { return index_; }
  /// Gives up ownership: the caller now holds the reference.
  Index release() { return std::exchange(index_, 0); }
  explicit operator bool() const { return index_ != 0; }

 private:
  Index index_ = 0;
};
using Values = std::vector<Handle>;

using ConditionFn = std::function<Handle(const Values&)>;
using BodyFn = std::function<Values(const Values&)>;
/// Traces instance `id`'s method on `args`.
using InstanceFn = std::function<Values(uint32_t id, const Values& args)>;

/// The mode a statement with `requested` runs in (the global Flag::Symbolic when empty).
ControlMode resolve_mode(std::optional<ControlMode> requested);

/// Runs `body` while `cond` holds, per lane; returns the final state.
Values while_loop(const Values& state, const ConditionFn& cond, const BodyFn& body,
                  std::optional<ControlMode> mode, const std::string& name);
/// Per lane, `true_fn(args)` where `cond` holds, else `false_fn(args)`.
Values if_stmt(Index cond, const BodyFn& true_fn, const BodyFn& false_fn, const Values& args,
               std::optional<ControlMode> mode, const std::string& name);
/// Per lane, `fn(ids[lane], args)` for the ids in `instances` (registered, nonzero); lanes
/// with any other id are inactive and get zeros.
Values dispatch(Index ids, const std::vector<uint32_t>& instances, const InstanceFn& fn,
                const Values& args, std::optional<ControlMode> mode, const std::string& name);

/// Prints `format` ("{}" per value) once per active lane, from inside the kernel that
/// computes the values; the lines appear when that kernel has run.
void print_async(const std::string& format, const Values& values, Index active);

/// Per-lane records appended from anywhere (inside loops and calls too): one record per
/// active lane per append, stored compactly in the order of an atomic counter.
class RecorderCore {
 public:
  RecorderCore(std::vector<VarType> fields, size_t capacity);
  /// Appends one record (`values[k]` for field k) per lane where `active` is set.
  void append(Index active, const Values& values);
  /// Records appended so far, including any beyond the capacity (evaluates).
  size_t count() const;
  size_t capacity() const { return capacity_; }
  const std::vector<VarType>& fields() const { return fields_; }
  /// Field k's first count() records, sharing the recorder's memory (no copy). Throws
  /// SizeError naming the capacity to use when more records were appended than fit.
  Handle field(size_t k) const;
  /// Field k's stored records: the first min(count(), capacity()), never an error.
  Handle stored(size_t k) const;
  /// True while appends are traced but have not run yet.
  bool pending() const;
  /// Forgets the records (the counter restarts at zero).
  void clear();

 private:
  std::vector<VarType> fields_;
  size_t capacity_;
  Handle counter_;
  std::vector<Handle> columns_;
};

}  // namespace detail
}  // namespace kiln
