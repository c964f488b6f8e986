// Memory-bounded differentiation: chunked_map() applies a function to consecutive chunks of
// the leading axis of its inputs (sequential over chunks, vectorized within one), and
// checkpoint() runs a function whose intermediates are not kept. In reverse mode both
// recompute their function instead of storing it, so what a gradient step holds is the
// inputs, the outputs, the parameters with their gradients and one chunk's working set,
// however many chunks there are. (src/control/chunked_map.cpp has the mechanism.)
#pragma once

#include <kiln/detail/control_api.h>
#include <kiln/tensor.h>

#include <string>
#include <tuple>

namespace kiln {

/// How chunked_map() cuts its inputs. Give `chunk_size` (rows per chunk) or `chunk_bytes`
/// (bytes of mapped input rows per chunk); the last chunk may be shorter.
struct MapOptions {
  size_t chunk_size = 0;
  size_t chunk_bytes = 0;
  /// For error messages.
  std::string name;
};

namespace detail {

template <typename X> struct is_tuple : std::false_type {};
template <typename... Ts> struct is_tuple<std::tuple<Ts...>> : std::true_type {};

/// Rows of a mapped input (tensors: the leading axis; arrays: every lane is a row).
/// `role` ("a mapped input", "an output of fn") names x in the error for a 0-d tensor.
template <typename X> size_t leading_rows(const X& x, const std::string& title, const char* role) {
  if constexpr (is_tensor_v<X>) {
    if (x.ndim() == 0) throw SizeError("kiln: " + title + ": " + role + " is a 0-d tensor; it has no rows");
    return x.shape()[0];
  } else {
    static_assert(is_array_v<X>, "chunked_map() maps over tensors and arrays");
    return x.size();
  }
}
template <typename X> size_t row_width(const X& x) {
  if constexpr (is_tensor_v<X>)
    return x.shape()[0] ? x.size() / x.shape()[0] : 0;
  else
    return 1;
}
/// `like` with `rows` rows over `value` (tensors keep their other axes).
template <typename X> X with_rows(const X& like, Handle value, size_t rows) {
  if constexpr (is_tensor_v<X>) {
    Shape shape = like.shape();
    shape[0] = rows;
    return X(X::ArrayType::steal(value.take()), shape);
  } else {
    return X::steal(value.take());
  }
}
template <typename X> void append_handles(const X& value, Values& out) {
  for_each_array(value, [&](const auto& array) { out.push_back(Handle::borrow(array.operand())); });
}
/// `layout` with its arrays replaced by values[k], values[k+1], ...
template <typename X> X refilled(X layout, const Values& values, size_t& k) {
  for_each_array(layout,
                 [&](auto& array) { array = std::decay_t<decltype(array)>::steal(Handle(values.at(k++)).take()); });
  return layout;
}
template <typename R> auto as_output_tuple(R value) {
  if constexpr (is_tuple<R>::value)
    return value;
  else
    return std::tuple<R>(std::move(value));
}
/// Each part of the tuple `layout` over values[k] (in order), with `rows` rows.
template <typename Tuple> Tuple with_rows_each(Tuple layout, const Values& values, size_t rows) {
  size_t k = 0;
  std::apply([&](auto&... part) { ((part = with_rows(part, values.at(k++), rows)), ...); }, layout);
  return layout;
}
/// The outputs as `fn` returned them (`layout`: a chunk's), with `rows` rows each.
template <typename R> R joined_outputs(const R& layout, const Values& values, size_t rows) {
  auto parts = with_rows_each(as_output_tuple(layout), values, rows);
  if constexpr (is_tuple<R>::value)
    return parts;
  else
    return std::get<0>(parts);
}

}  // namespace detail

/// fn(rows of each mapped input..., each whole input...) over chunks of the mapped inputs'
/// leading axis, joined along that axis. `mapped` holds tensors or arrays with the same
/// number of rows; `whole` (parameters, scene data) is passed unsliced. fn returns a tensor
/// or array, or a tuple of them, with one row per input row. Differentiable arrays that fn
/// reads from outside (captured in a closure) are treated like whole inputs. Results do
/// not depend on the chunk size as long as fn treats rows independently (key random
/// numbers per row, e.g. with a row index passed as a mapped input). fn is kept (copied)
/// and called again when derivatives are computed.
template <typename Fn, typename... Mapped, typename... Whole>
auto chunked_map(Fn&& fn, const std::tuple<Mapped...>& mapped, const std::tuple<Whole...>& whole,
                 const MapOptions& options) {
  std::string title = options.name.empty() ? "chunked_map()" : "chunked_map('" + options.name + "')";
  size_t rows = 0, bytes_per_row = 0;
  detail::Values mapped_values, whole_values;
  std::vector<size_t> widths;
  bool first = true;
  std::apply(
      [&](const auto&... m) {
        (
            [&] {
              size_t r = detail::leading_rows(m, title, "a mapped input");
              if (!first && r != rows)
                throw SizeError("kiln: " + title + ": the mapped inputs have " + std::to_string(rows) + " and " +
                                std::to_string(r) + " rows; every mapped input needs the same leading extent");
              rows = r;
              first = false;
              widths.push_back(detail::row_width(m));
              bytes_per_row += widths.back() * sizeof(typename std::decay_t<decltype(m)>::Value);
              detail::append_handles(m, mapped_values);
            }(),
            ...);
      },
      mapped);
  std::apply([&](const auto&... w) { (detail::append_handles(w, whole_values), ...); }, whole);
  if ((options.chunk_size != 0) == (options.chunk_bytes != 0))
    throw ValueError("kiln: " + title + ": give exactly one of chunk_size (rows per chunk) and chunk_bytes");
  size_t chunk_rows = options.chunk_size
                          ? options.chunk_size
                          : std::max<size_t>(1, options.chunk_bytes / std::max<size_t>(1, bytes_per_row));

  using Result = decltype(std::apply(fn, std::tuple_cat(mapped, whole)));
  auto layout = std::make_shared<Result>();
  detail::ChunkFn chunk = [fn = std::decay_t<Fn>(fn), mapped_layout = detail::hollow(mapped),
                           whole_layout = detail::hollow(whole), layout,
                           title](const detail::Values& m, const detail::Values& w, size_t count) {
    std::tuple<Mapped...> part = detail::with_rows_each(mapped_layout, m, count);
    size_t j = 0;
    std::tuple<Whole...> whole_part =
        std::apply([&](const auto&... x) { return std::tuple<Whole...>{detail::refilled(x, w, j)...}; }, whole_layout);
    Result out = std::apply(fn, std::tuple_cat(part, whole_part));
    detail::Values flat;
    std::apply(
        [&](const auto&... o) {
          (
              [&] {
                size_t out_rows = detail::leading_rows(o, title, "an output of fn");
                if (out_rows != count)
                  throw SizeError("kiln: " + title + ": fn returned an output with " + std::to_string(out_rows) +
                                  " rows for a chunk of " + std::to_string(count) +
                                  "; each output needs one row per input row");
                detail::append_handles(o, flat);
              }(),
              ...);
        },
        detail::as_output_tuple(out));
    *layout = detail::hollow(out);
    return flat;
  };
  detail::Values joined = detail::chunked_map(chunk, mapped_values, widths, rows, whole_values, chunk_rows, title);
  return detail::joined_outputs(*layout, joined, rows);
}

/// fn(args...) with its intermediates recomputed in reverse mode instead of kept; the
/// result is the same as calling fn directly. fn is kept (copied) for that.
template <typename Fn, typename... Args> auto checkpoint(Fn&& fn, const Args&... args) {
  detail::Values values;
  (detail::append_handles(args, values), ...);
  using Result = decltype(fn(args...));
  auto layout = std::make_shared<Result>();
  detail::ChunkFn run = [fn = std::decay_t<Fn>(fn), args_layout = detail::hollow(std::tuple<Args...>(args...)), layout](
                            const detail::Values&, const detail::Values& w, size_t) {
    size_t j = 0;
    std::tuple<Args...> in =
        std::apply([&](const auto&... x) { return std::tuple<Args...>{detail::refilled(x, w, j)...}; }, args_layout);
    Result out = std::apply(fn, in);
    detail::Values flat;
    std::apply([&](const auto&... o) { (detail::append_handles(o, flat), ...); }, detail::as_output_tuple(out));
    *layout = detail::hollow(out);
    return flat;
  };
  detail::Values out = detail::chunked_map(run, {}, {}, 1, values, 1, "checkpoint()");
  size_t k = 0;
  return detail::refilled(*layout, out, k);
}

}  // namespace kiln
