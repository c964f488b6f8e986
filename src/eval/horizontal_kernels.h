// Horizontal operations as Kiln kernels on the array's device (for devices whose memory
// the host cannot read). Each takes an evaluated array whose type the caller has checked
// and returns an evaluated result on the same device (a new reference).
#pragma once

#include <kiln/detail/trace_api.h>

#include <cstdint>
#include <vector>

namespace kiln::detail {

Index reduce_on_device(Reduction kind, Index data);
Index prefix_sum_on_device(Index data, bool exclusive);
/// Up to 2^32 - 1 lanes (the caller checks).
Index compress_on_device(Index mask);
Index block_sum_on_device(Index data, size_t block);
/// One compaction per value of the lanes where `ids` holds it.
std::vector<Index> lanes_by_value_on_device(Index ids, const std::vector<uint32_t>& values, size_t lanes);

}  // namespace kiln::detail
