// Horizontal operations (sum, prod, min, max, any, all, prefix_sum, compress, block_sum,
// lanes_by_value): they evaluate their input; on memory the host reads (the CPU's) they
// run on the host over fixed-size blocks with oneTBB, elsewhere as kernels on the array's
// device (horizontal_kernels.h). Blocks have a fixed size and partial results combine in
// block order, so results do not depend on the number of threads.
#include <kiln/detail/trace_api.h>
#include <kiln/errors.h>

#include "eval/evaluate.h"
#include "eval/horizontal_kernels.h"
#include "ir/node.h"
#include "ir/type_dispatch.h"
#include "memory/device_memory.h"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <unordered_map>
#include <vector>

namespace kiln::detail {
namespace {

constexpr size_t kBlock = 1 << 14;

/// Evaluates `index` for the operation `what`.
Index evaluated(Index index, const char* what) {
  check_live(index, what);
  if (node(index).op != Op::Data || node(index).dirty_size) evaluate(&index, 1);
  return index;
}

/// True when the operation runs as kernels on the array's device: the host cannot read
/// its memory (a GPU's, the emulated device's). Gathers index such arrays with UInt32.
bool on_device(Index index, const char* what) {
  const Node& n = node(index);
  if (device_memory(n.device).host_accessible()) return false;
  if (n.size > UINT32_MAX)
    throw SizeError(std::string("kiln: ") + what + "(): more than 2^32 - 1 elements on " + device_name(n.device));
  return true;
}

/// An evaluated array's elements, read on the host.
template <typename T> struct Input {
  explicit Input(Index index) : index(index), view(*node(index).buffer) {}
  const T* data() const { return static_cast<const T*>(view.data()); }
  size_t size() const { return node(index).size; }
  Device device() const { return node(index).device; }
  Index index;
  HostView view;
};

/// A result of `count` elements written on the host, then placed on `device`.
template <typename T> class Output {
 public:
  Output(VarType type, size_t count, Device device)
      : type_(type), count_(count), staged_(count * type_size(type), device) {}
  T* data() { return static_cast<T*>(staged_.data()); }
  Index finish() { return make_data(type_, count_, staged_.finish()); }

 private:
  VarType type_;
  size_t count_;
  StagedBuffer staged_;
};

/// Applies `combine` over blocks in parallel, then over block results in order.
template <typename T, typename Combine> T fold(const T* data, size_t n, T identity, Combine combine) {
  size_t blocks = (n + kBlock - 1) / kBlock;
  std::vector<T> partial(blocks, identity);
  tbb::parallel_for(size_t(0), blocks, [&](size_t b) {
    T acc = identity;
    for (size_t i = b * kBlock, end = std::min(n, i + kBlock); i < end; ++i) acc = combine(acc, data[i]);
    partial[b] = acc;
  });
  T acc = identity;
  for (T p : partial) acc = combine(acc, p);
  return acc;
}

template <typename T> T reduce_values(Reduction kind, const T* data, size_t n) {
  if constexpr (std::is_same_v<T, bool>)
    return kind == Reduction::Any ? fold<bool>(data, n, false, [](bool a, bool b) { return a || b; })
                                  : fold<bool>(data, n, true, [](bool a, bool b) { return a && b; });
  else {
    switch (kind) {
      case Reduction::Sum: return fold<T>(data, n, T(0), [](T a, T b) { return T(a + b); });
      case Reduction::Prod: return fold<T>(data, n, T(1), [](T a, T b) { return T(a * b); });
      case Reduction::Min:
        return fold<T>(
            data, n,
            std::numeric_limits<T>::has_infinity ? std::numeric_limits<T>::infinity() : std::numeric_limits<T>::max(),
            [](T a, T b) {
              if constexpr (std::is_floating_point_v<T>)
                return std::fmin(a, b);
              else
                return std::min(a, b);
            });
      default:
        return fold<T>(data, n,
                       std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity()
                                                            : std::numeric_limits<T>::lowest(),
                       [](T a, T b) {
                         if constexpr (std::is_floating_point_v<T>)
                           return std::fmax(a, b);
                         else
                           return std::max(a, b);
                       });
    }
  }
}

const char* reduction_name(Reduction kind) {
  static const char* names[] = {"sum", "prod", "min", "max", "any", "all"};
  return names[int(kind)];
}

}  // namespace

Index reduce(Reduction kind, Index index) {
  StateLock lock(state().mutex);
  check_live(index, reduction_name(kind));
  VarType type = node(index).type;
  bool logical = kind == Reduction::Any || kind == Reduction::All;
  if (type == VarType::Bool && !logical)
    throw TypeError("kiln: sum/prod/min/max(): not defined for Bool arrays; use any()/all() or cast first");
  if (type != VarType::Bool && logical) throw TypeError("kiln: any()/all(): need a Bool array");
  index = evaluated(index, reduction_name(kind));
  if (on_device(index, reduction_name(kind))) return reduce_on_device(kind, index);
  return dispatch_type(type, [&](auto tag) -> Index {
    using T = decltype(tag);
    Input<T> in(index);
    Output<T> out(type, 1, in.device());
    *out.data() = reduce_values<T>(kind, in.data(), in.size());
    return out.finish();
  });
}

namespace {
/// A block's sum with eight interleaved accumulators (vectorizable; the order is fixed).
template <typename T> T sum_interleaved(const T* data, size_t n) {
  T acc[8] = {};
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int k = 0; k < 8; ++k) acc[k] = T(acc[k] + data[i + k]);
  for (int k = 0; i < n; ++i, ++k) acc[k] = T(acc[k] + data[i]);
  return T(T(T(acc[0] + acc[4]) + T(acc[1] + acc[5])) + T(T(acc[2] + acc[6]) + T(acc[3] + acc[7])));
}

/// The sums of evaluated Float/Float64 arrays on the host, in one parallel pass.
std::vector<Index> sums_on_host(const std::vector<Index>& indices) {
  size_t count = indices.size();
  struct Task {
    size_t array, first, count;
  };
  std::vector<Task> tasks;
  std::vector<size_t> first_task(count + 1, 0);
  for (size_t k = 0; k < count; ++k) {
    first_task[k] = tasks.size();
    size_t n = node(indices[k]).size;
    for (size_t i = 0; i < n; i += kBlock) tasks.push_back({k, i, std::min(kBlock, n - i)});
  }
  first_task[count] = tasks.size();
  std::vector<HostView> views;
  views.reserve(count);
  for (size_t k = 0; k < count; ++k) views.emplace_back(*node(indices[k]).buffer);
  std::vector<double> partial(tasks.size());
  tbb::parallel_for(size_t(0), tasks.size(), [&](size_t t) {
    const Node& n = node(indices[tasks[t].array]);
    const void* data = views[tasks[t].array].data();
    partial[t] = n.type == VarType::Float64
                     ? sum_interleaved(static_cast<const double*>(data) + tasks[t].first, tasks[t].count)
                     : double(sum_interleaved(static_cast<const float*>(data) + tasks[t].first, tasks[t].count));
  });
  std::vector<Index> results;
  for (size_t k = 0; k < count; ++k) {
    VarType type = node(indices[k]).type;
    Device device = node(indices[k]).device;
    if (type == VarType::Float64) {
      Output<double> out(type, 1, device);
      double& total = *out.data() = 0;
      for (size_t t = first_task[k]; t < first_task[k + 1]; ++t) total += partial[t];
      results.push_back(out.finish());
    } else {
      Output<float> out(type, 1, device);
      float& total = *out.data() = 0;
      for (size_t t = first_task[k]; t < first_task[k + 1]; ++t) total = total + float(partial[t]);
      results.push_back(out.finish());
    }
  }
  return results;
}

}  // namespace

std::vector<Index> sum_each(const Index* indices, size_t count) {
  StateLock lock(state().mutex);
  std::vector<Index> pending;
  for (size_t k = 0; k < count; ++k) {
    check_live(indices[k], "sum");
    if (!is_float(node(indices[k]).type)) throw TypeError("kiln: sum_each(): needs Float or Float64 arrays");
    if (node(indices[k]).op != Op::Data || node(indices[k]).dirty_size) pending.push_back(indices[k]);
  }
  if (!pending.empty()) evaluate(pending.data(), pending.size());  // one kernel per size
  std::vector<Index> results(count), host;
  for (size_t k = 0; k < count; ++k)
    if (on_device(indices[k], "sum"))
      results[k] = reduce_on_device(Reduction::Sum, indices[k]);
    else
      host.push_back(indices[k]);
  std::vector<Index> host_sums = sums_on_host(host);
  for (size_t k = 0, h = 0; k < count; ++k)
    if (!results[k]) results[k] = host_sums[h++];
  return results;
}

Index prefix_sum(Index index, bool exclusive) {
  StateLock lock(state().mutex);
  check_live(index, "prefix_sum");
  VarType type = node(index).type;
  if (type == VarType::Bool) throw TypeError("kiln: prefix_sum(): not defined for Bool; cast to UInt32 first");
  index = evaluated(index, "prefix_sum");
  if (on_device(index, "prefix_sum")) return prefix_sum_on_device(index, exclusive);
  return dispatch_type(type, [&](auto tag) -> Index {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool>)
      return 0;
    else {
      Input<T> in(index);
      const T* data = in.data();
      size_t n = in.size();
      Output<T> result(type, n, in.device());
      T* out = result.data();
      size_t blocks = (n + kBlock - 1) / kBlock;
      std::vector<T> offsets(blocks + 1, T(0));
      tbb::parallel_for(size_t(0), blocks, [&](size_t b) {
        T acc = T(0);
        for (size_t i = b * kBlock, end = std::min(n, i + kBlock); i < end; ++i) acc = T(acc + data[i]);
        offsets[b + 1] = acc;
      });
      for (size_t b = 0; b < blocks; ++b) offsets[b + 1] = T(offsets[b + 1] + offsets[b]);
      tbb::parallel_for(size_t(0), blocks, [&](size_t b) {
        T acc = offsets[b];
        for (size_t i = b * kBlock, end = std::min(n, i + kBlock); i < end; ++i) {
          T value = data[i];
          if (!exclusive) acc = T(acc + value);
          out[i] = acc;
          if (exclusive) acc = T(acc + value);
        }
      });
      return result.finish();
    }
  });
}

Index compress(Index mask) {
  StateLock lock(state().mutex);
  check_live(mask, "compress");
  if (node(mask).type != VarType::Bool) throw TypeError("kiln: compress(): the mask must be a Bool array");
  if (node(mask).size > UINT32_MAX) throw SizeError("kiln: compress(): more than 2^32 - 1 lanes");
  mask = evaluated(mask, "compress");
  if (on_device(mask, "compress")) return compress_on_device(mask);
  Input<bool> in(mask);
  const bool* data = in.data();
  size_t n = in.size();
  size_t blocks = (n + kBlock - 1) / kBlock;
  std::vector<uint32_t> offsets(blocks + 1, 0);
  tbb::parallel_for(size_t(0), blocks, [&](size_t b) {
    uint32_t count = 0;
    for (size_t i = b * kBlock, end = std::min(n, i + kBlock); i < end; ++i) count += data[i];
    offsets[b + 1] = count;
  });
  for (size_t b = 0; b < blocks; ++b) offsets[b + 1] += offsets[b];
  Output<uint32_t> result(VarType::UInt32, offsets[blocks], in.device());
  uint32_t* out = result.data();
  tbb::parallel_for(size_t(0), blocks, [&](size_t b) {
    uint32_t slot = offsets[b];
    for (size_t i = b * kBlock, end = std::min(n, i + kBlock); i < end; ++i)
      if (data[i]) out[slot++] = uint32_t(i);
  });
  return result.finish();
}

Index block_sum(Index index, size_t block) {
  StateLock lock(state().mutex);
  check_live(index, "block_sum");
  if (block == 0) throw SizeError("kiln: block_sum(): the block size must be at least 1");
  VarType type = node(index).type;
  if (type == VarType::Bool) throw TypeError("kiln: block_sum(): not defined for Bool; cast to UInt32 first");
  index = evaluated(index, "block_sum");
  if (on_device(index, "block_sum")) return block_sum_on_device(index, block);
  return dispatch_type(type, [&](auto tag) -> Index {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool>)
      return 0;
    else {
      Input<T> in(index);
      const T* data = in.data();
      size_t n = in.size();
      size_t groups = (n + block - 1) / block;
      Output<T> result(type, groups, in.device());
      T* out = result.data();
      tbb::parallel_for(size_t(0), groups, [&](size_t g) {
        T acc = T(0);
        for (size_t i = g * block, end = std::min(n, i + block); i < end; ++i) acc = T(acc + data[i]);
        out[g] = acc;
      });
      return result.finish();
    }
  });
}

std::vector<Index> lanes_by_value(Index ids, const std::vector<uint32_t>& values, size_t lanes) {
  StateLock lock(state().mutex);
  ids = evaluated(ids, "dispatch");
  if (on_device(ids, "dispatch")) return lanes_by_value_on_device(ids, values, lanes);
  // One pass over the ids on the host.
  std::unordered_map<uint32_t, size_t> position;
  for (size_t k = 0; k < values.size(); ++k) position.emplace(values[k], k);
  std::vector<std::vector<uint32_t>> taken(values.size());
  Input<uint32_t> in(ids);
  bool broadcast = in.size() == 1;
  for (size_t lane = 0; lane < lanes; ++lane) {
    auto it = position.find(in.data()[broadcast ? 0 : lane]);
    if (it != position.end()) taken[it->second].push_back(uint32_t(lane));
  }
  std::vector<Index> result;
  for (const auto& lanes_of_value : taken)
    result.push_back(make_copy(VarType::UInt32, lanes_of_value.data(), lanes_of_value.size(), node(ids).device));
  return result;
}

}  // namespace kiln::detail
