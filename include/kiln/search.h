// binary_search(): Dr.Jit's vectorized binary search over an index range, driven by a
// predicate on index arrays (typically a gather from a sorted array and a comparison).
#pragma once

#include <kiln/array.h>

#include <bit>
#include <cstdint>
#include <string>
#include <utility>

namespace kiln {

/// The first index i in [start, end] at which `pred(i)` is false, per lane, for a
/// predicate that is true on a prefix of [start, end) and false after it (at most one
/// true-to-false transition; `end` when it never turns false). `pred` takes a UInt32 of
/// indices and returns a Bool, and is called floor(log2(end - start)) + 1 times with
/// indices in [start, end); the lanes of the result are those of its Bool. Example, the
/// insertion points of `values` in a sorted array `data` (numpy.searchsorted, side="left"):
///   binary_search(0, n, [&](const UInt32& i) { return gather(data, i) < values; })
template <typename Pred> UInt32 binary_search(uint32_t start, uint32_t end, Pred&& pred) {
  if (start > end)
    throw ValueError("kiln: binary_search(): start (" + std::to_string(start) + ") is after end (" +
                     std::to_string(end) + "); pass start <= end");
  UInt32 lo(start, {}), hi(end, {});
  for (int step = std::bit_width(end - start); step > 0; --step) {
    UInt32 middle = lo + ((hi - lo) >> 1u);
    Bool go_right = pred(middle);
    lo = select(go_right, min(middle + 1u, hi), lo);
    hi = select(go_right, hi, middle);
  }
  return lo;
}

}  // namespace kiln
