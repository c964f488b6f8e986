// Horizontal operations as Kiln kernels, for arrays on a device whose memory the host
// cannot read (a GPU, the emulated device): each is traced code — one symbolic loop per
// lane over a run of the input — launched like any other kernel on the array's device.
// Nothing crosses to the host but the one count compress() needs to size its result.
//
// Reductions read with a stride (lane g sums g, g+m, g+2m…: neighbouring lanes read
// neighbouring elements, as a GPU coalesces them) and repeat on the partial results until
// one is left. Scans and block sums walk contiguous runs: a run's total, the totals
// scanned (recursively), then each run again from its offset. The order of every sum is
// fixed by the array's size, so results are deterministic; float sums may differ in the
// last bits from the CPU's host loops, which group elements differently.
#include "eval/horizontal_kernels.h"

#include <kiln/errors.h>

#include "eval/evaluate.h"
#include "ir/node.h"
#include "ir/type_dispatch.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <limits>
#include <utility>
#include <vector>

namespace kiln::detail {
namespace {

/// Most lanes one pass uses: enough to fill a large GPU, few enough that each lane reads
/// a run long enough to hide memory latency.
constexpr size_t kMaxLanes = size_t(1) << 18;
/// Fewest elements a lane reads; at or below this many, one lane does the whole pass.
constexpr size_t kMinRun = 32;

Ref traced(Op op, const Ref& a, const Ref& b = {}, const Ref& c = {}) {
  return Ref(trace(op, a.get(), b.get(), c.get()));
}
Ref cast(const Ref& value, VarType type) { return Ref(trace(Op::Cast, value.get(), 0, 0, type)); }
/// A UInt32 passed at launch: kernels serve every array size.
Ref size_param(size_t value) { return Ref(make_param(VarType::UInt32, value, 1)); }
Ref constant(VarType type, uint64_t bits, size_t lanes = 1) { return Ref(make_literal(type, bits, lanes)); }
Ref gathered(const Ref& source, const Ref& index, const Ref& active) {
  return traced(Op::Gather, source, index, active);
}

template <typename T> uint64_t bits_of(T value) {
  uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof(T));
  return bits;
}

/// The body of a per-lane loop: the element index and the active lanes of this
/// iteration, and the carried values; returns the carried values' next ones.
using LoopBody = std::function<std::vector<Ref>(const Ref& i, const Ref& active, const std::vector<Ref>& carried)>;

/// A symbolic loop over `lanes` lanes in which lane g visits `count[g]` elements from
/// `first[g]` by `stride`, carrying `initial`; returns the carried values after it.
std::vector<Ref> lane_loop(const char* what, size_t lanes, const Ref& first, const Ref& count, const Ref& stride,
                           const std::vector<Ref>& initial, const LoopBody& body) {
  uint32_t id = open_region(what, "", lanes);
  try {
    Ref i(make_loop_phi(id, first.get()));
    Ref left(make_loop_phi(id, count.get()));
    std::vector<Ref> carried;
    for (const Ref& value : initial) carried.emplace_back(make_loop_phi(id, value.get()));
    Ref running = traced(Op::Ne, left, constant(VarType::UInt32, 0));
    Ref active(make_loop_cond(id, running.get()));
    push_mask(active.get());
    std::vector<Ref> next;
    try {
      next = body(i, active, carried);
    } catch (...) {
      pop_mask();
      throw;
    }
    pop_mask();
    Ref i_next = traced(Op::Add, i, stride);
    Ref left_next = traced(Op::Sub, left, constant(VarType::UInt32, 1));
    std::vector<Index> updates = {i_next.get(), left_next.get()};
    for (const Ref& value : next) updates.push_back(value.get());
    std::vector<Index> results = close_region(id, updates);
    dec_ref(results[0]);
    dec_ref(results[1]);
    std::vector<Ref> out;
    for (size_t k = 2; k < results.size(); ++k) out.emplace_back(results[k]);
    return out;
  } catch (...) {
    if (find_region(id) && find_region(id)->open) abandon_region(id);
    throw;
  }
}

/// Evaluates `value` (its kernel runs now) and returns it.
Ref evaluated(Ref value) {
  Index index = value.get();
  evaluate(&index, 1);
  return value;
}

/// The lanes of a pass over `n` elements where each lane reads at least kMinRun of them.
size_t lanes_for(size_t n) { return std::clamp<size_t>(n / kMinRun, 1, kMaxLanes); }

/// The runs of contiguous elements a scan or block sum gives its lanes: each lane's first
/// element and count.
struct Runs {
  size_t lanes;
  Ref first, count;
};
Runs contiguous_runs(size_t n, size_t length) {
  size_t lanes = (n + length - 1) / length;
  Ref first = traced(Op::Mul, Ref(make_counter(lanes)), size_param(length));
  Ref count = traced(Op::Min, size_param(length), traced(Op::Sub, size_param(n), first));
  return {lanes, std::move(first), std::move(count)};
}

/// The runs of a scan over `n` elements: one lane for at most kMinRun of them, else runs of
/// at least kMinRun and at most kMaxLanes of them.
Runs scan_runs(size_t n) {
  return contiguous_runs(n, n <= kMinRun ? n : std::max(kMinRun, (n + kMaxLanes - 1) / kMaxLanes));
}

Op combining_op(Reduction kind) {
  switch (kind) {
    case Reduction::Sum: return Op::Add;
    case Reduction::Prod: return Op::Mul;
    case Reduction::Min: return Op::Min;
    case Reduction::Max: return Op::Max;
    case Reduction::Any: return Op::Or;
    case Reduction::All: return Op::And;
  }
  throw InternalError("kiln: invalid Reduction");
}

uint64_t identity_bits(Reduction kind, VarType type) {
  return dispatch_type(type, [&](auto tag) -> uint64_t {
    using T = decltype(tag);
    using Limits = std::numeric_limits<T>;
    switch (kind) {
      case Reduction::Sum:
      case Reduction::Any: return bits_of(T(0));
      case Reduction::Prod:
      case Reduction::All: return bits_of(T(1));
      case Reduction::Min: return bits_of(Limits::has_infinity ? Limits::infinity() : Limits::max());
      case Reduction::Max: return bits_of(Limits::has_infinity ? T(-Limits::infinity()) : Limits::lowest());
    }
    throw InternalError("kiln: invalid Reduction");
  });
}

/// The sum of each run of `runs`, in order; `load` turns an element index into the value added.
Ref run_totals(const char* what, const Runs& runs, VarType type,
               const std::function<Ref(const Ref& i, const Ref& active)>& load) {
  std::vector<Ref> initial;
  initial.push_back(constant(type, 0, runs.lanes));
  std::vector<Ref> out = lane_loop(what, runs.lanes, runs.first, runs.count, size_param(1), initial,
                                   [&](const Ref& i, const Ref& active, const std::vector<Ref>& carried) {
                                     std::vector<Ref> next;
                                     next.push_back(traced(Op::Add, carried[0], load(i, active)));
                                     return next;
                                   });
  return evaluated(std::move(out[0]));
}

/// `values` (evaluated, `n` elements) scanned with +, from 0, into a new array.
Ref scan(const Ref& values, size_t n, bool exclusive) {
  VarType type = node_type(values.get());
  auto load = [&](const Ref& i, const Ref& active) { return gathered(values, i, active); };
  Runs runs = scan_runs(n);
  std::vector<Ref> initial;  // each run starts from the total of the runs before it
  if (runs.lanes == 1)
    initial.push_back(constant(type, 0));
  else
    initial.push_back(gathered(scan(run_totals("prefix_sum", runs, type, load), runs.lanes, /*exclusive=*/true),
                               Ref(make_counter(runs.lanes)), constant(VarType::Bool, 1)));
  Ref out(make_empty(type, n, node_device(values.get())));
  lane_loop("prefix_sum", runs.lanes, runs.first, runs.count, size_param(1), initial,
            [&](const Ref& i, const Ref& active, const std::vector<Ref>& carried) {
              Ref total = traced(Op::Add, carried[0], load(i, active));
              trace_scatter(ReduceOp::None, out.slot(), exclusive ? carried[0].get() : total.get(), i.get(),
                            active.get());
              std::vector<Ref> next;
              next.push_back(std::move(total));
              return next;
            });
  return evaluated(std::move(out));
}

}  // namespace

Index reduce_on_device(Reduction kind, Index data) {
  TopLevelScope top_level;
  VarType type = node_type(data);
  uint64_t identity = identity_bits(kind, type);
  size_t n = node_size(data);
  if (n == 0) return make_copy(type, &identity, 1, node_device(data));  // little-endian: the value's bytes
  inc_ref(data);
  Ref values(data);
  while (n > 1) {
    size_t lanes = lanes_for(n);
    Ref lane(make_counter(lanes));
    // Lane g reads g, g+m, g+2m, …: (n - 1 - g) / m + 1 elements.
    Ref count = traced(Op::Add, traced(Op::Div, traced(Op::Sub, size_param(n - 1), lane), size_param(lanes)),
                       constant(VarType::UInt32, 1));
    std::vector<Ref> initial;
    initial.push_back(constant(type, identity, lanes));
    std::vector<Ref> out =
        lane_loop("reduce", lanes, lane, count, size_param(lanes), initial,
                  [&](const Ref& i, const Ref& active, const std::vector<Ref>& carried) {
                    std::vector<Ref> next;
                    next.push_back(traced(combining_op(kind), carried[0], gathered(values, i, active)));
                    return next;
                  });
    values = evaluated(std::move(out[0]));
    n = lanes;
  }
  return values.release();
}

Index block_sum_on_device(Index data, size_t block) {
  TopLevelScope top_level;
  inc_ref(data);
  Ref values(data);
  size_t n = node_size(data);
  VarType type = node_type(data);
  if (n == 0) return make_empty(type, 0, node_device(data));
  Runs runs = contiguous_runs(n, std::min(block, n));
  return run_totals("block_sum", runs, type,
                    [&](const Ref& i, const Ref& active) { return gathered(values, i, active); })
      .release();
}

Index prefix_sum_on_device(Index data, bool exclusive) {
  TopLevelScope top_level;
  inc_ref(data);
  Ref values(data);
  size_t n = node_size(data);
  if (n == 0) return make_empty(node_type(data), 0, node_device(data));
  return scan(values, n, exclusive).release();
}

Index compress_on_device(Index mask) {
  TopLevelScope top_level;
  inc_ref(mask);
  Ref flags(mask);
  size_t n = node_size(mask);
  Device device = node_device(mask);
  if (n == 0) return make_empty(VarType::UInt32, 0, device);
  Runs runs = scan_runs(n);
  // Each run's count of set lanes, their running totals, then each run writes its lanes'
  // indices from its offset.
  Ref counts = run_totals("compress", runs, VarType::UInt32, [&](const Ref& i, const Ref& active) {
    return cast(gathered(flags, i, active), VarType::UInt32);
  });
  Ref ends = scan(counts, runs.lanes, /*exclusive=*/false);
  uint32_t total = 0;
  read(ends.get(), runs.lanes - 1, &total);
  Ref out(make_empty(VarType::UInt32, total, device));
  if (total == 0) return out.release();
  std::vector<Ref> initial;
  initial.push_back(traced(Op::Sub, ends, counts));
  lane_loop("compress", runs.lanes, runs.first, runs.count, size_param(1), initial,
            [&](const Ref& i, const Ref& active, const std::vector<Ref>& carried) {
              Ref set = traced(Op::And, active, gathered(flags, i, active));
              trace_scatter(ReduceOp::None, out.slot(), i.get(), carried[0].get(), set.get());
              std::vector<Ref> next;
              next.push_back(traced(Op::Add, carried[0], cast(set, VarType::UInt32)));
              return next;
            });
  return evaluated(std::move(out)).release();
}

std::vector<Index> lanes_by_value_on_device(Index ids, const std::vector<uint32_t>& values, size_t lanes) {
  TopLevelScope top_level;
  inc_ref(ids);
  Ref id_of(ids);
  std::vector<Ref> taken;
  for (uint32_t value : values) {
    Ref lanes_taking =
        traced(Op::And, traced(Op::Eq, id_of, constant(VarType::UInt32, value)), constant(VarType::Bool, 1, lanes));
    taken.emplace_back(compress_on_device(evaluated(std::move(lanes_taking)).get()));
  }
  std::vector<Index> result;
  for (Ref& lanes_of_value : taken) result.push_back(lanes_of_value.release());
  return result;
}

}  // namespace kiln::detail
