// Recorder: per-lane records out of loops and calls (story 2). Every append() stores one
// record per active lane, compacted through an atomic counter (scatter_inc); after
// evaluation the fields are plain Kiln arrays over the recorder's memory (a vector or
// matrix field is one interleaved (n, N) block, its components gathered lazily), which
// leave as NumPy/PyTorch arrays without a copy. More appends than the capacity raise an error that
// names the capacity needed (nothing is dropped silently).
#pragma once

#include <kiln/control.h>

#include <tuple>

namespace kiln {

/// Records of the given field types (arrays, vectors or matrices), up to `capacity`.
template <typename... Fields> class Recorder {
 public:
  explicit Recorder(size_t capacity) : core_(field_types(), capacity, {columns_of<Fields>()...}) {}

  /// One record of `values` per lane where `active` is set.
  void append(const Bool& active, const Fields&... values) {
    core_.append(active.index(), detail::flatten_values(std::tuple<Fields...>(values...)));
  }
  /// Records appended since construction or clear(), including any beyond the capacity.
  size_t count() const { return core_.count(); }
  size_t capacity() const { return core_.capacity(); }
  /// Field I of the first count() records (shares the recorder's memory; a vector or matrix
  /// gathers its components from it). Throws SizeError naming the capacity needed when more
  /// records were appended than fit.
  template <size_t I> auto field() const {
    using F = std::tuple_element_t<I, std::tuple<Fields...>>;
    detail::Handle stored = core_.field(I);
    if constexpr (is_array_v<F>)
      return F::borrow(stored.index());
    else
      return unflatten<F>(F::Component::borrow(stored.index()));
  }
  void clear() { core_.clear(); }
  /// The untyped recorder underneath (what Python's kl.Recorder wraps).
  detail::RecorderCore& core() { return core_; }

 private:
  template <typename F> static constexpr size_t columns_of() {
    if constexpr (is_array_v<F>)
      return 1;
    else
      return component_count_v<F>;
  }
  static std::vector<VarType> field_types() {
    std::vector<VarType> types;
    auto add = [&]<typename F>(std::type_identity<F>) {
      if constexpr (is_array_v<F>)
        types.push_back(F::Type);
      else
        types.insert(types.end(), columns_of<F>(), F::Component::Type);
    };
    (add(std::type_identity<Fields>{}), ...);
    return types;
  }

  detail::RecorderCore core_;
};

}  // namespace kiln
