// Random typed programs for differential fuzzing: from a seed, a DAG of elementwise ops,
// selects, casts, bitcasts, gathers, scatters (plain and reducing) and atomic counters,
// built through the runtime-typed tracing API. Running the same seed on two backends must
// give identical lanes (the LLVM backend and the interpreter implement one semantics).
#pragma once

#include <kiln/kiln.h>

#include "ir/op_info.h"
#include "op_test_support.h"

#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace kiln::test {

/// One traced value of a fuzz program, for the listing.
struct FuzzValue {
  Index index;
  VarType type;
};

/// The outcome of running one program: every value it created, and every scatter
/// target after the program ran, as lane bits; plus a readable listing.
struct FuzzResult {
  std::vector<VarType> types;
  std::vector<std::vector<uint64_t>> lanes;
  std::string listing;
};

class FuzzProgram {
 public:
  /// `max_steps` truncates the program (used to find the smallest failing prefix).
  FuzzProgram(uint64_t seed, int max_steps) : rng_(seed), max_steps_(max_steps) {}

  FuzzResult run() {
    static const size_t kSizes[] = {1, 5, 16, 17, 37, 101};
    size_ = kSizes[rng_() % 6];
    for (VarType t : kTypes) {
      add_input(t, size_);
      if (rng_() % 2) add_input(t, 1);
    }
    int steps = std::min(max_steps_, int(3 + rng_() % 22));
    for (int step = 0; step < steps; ++step) add_step();
    std::vector<Index> all;
    for (const FuzzValue& v : values_) all.push_back(v.index);
    for (const FuzzValue& v : targets_) all.push_back(v.index);
    detail::eval(all.data(), all.size());
    FuzzResult result;
    for (const auto* list : {&values_, &targets_})
      for (const FuzzValue& v : *list) {
        result.types.push_back(v.type);
        result.lanes.push_back(download(v.index));
      }
    result.listing = listing_.str();
    for (const auto* list : {&values_, &targets_})
      for (const FuzzValue& v : *list) detail::dec_ref(v.index);
    for (Index source : sources_) detail::dec_ref(source);
    return result;
  }

 private:
  static constexpr VarType kTypes[] = {VarType::Bool,   VarType::Int32,   VarType::UInt32, VarType::Int64,
                                       VarType::UInt64, VarType::Float32, VarType::Float64};
  static constexpr size_t kMemorySize = 13;  // size of gather sources and scatter targets

  uint64_t random_lane(VarType t) {
    std::vector<uint64_t> edges = edge_values(t);
    if (rng_() % 3 == 0) return edges[rng_() % edges.size()];
    switch (t) {
      case VarType::Bool: return rng_() % 2;
      case VarType::Float32: return bits_of(float(std::normal_distribution<double>(0, 10)(rng_)));
      case VarType::Float64: return bits_of(std::normal_distribution<double>(0, 1e3)(rng_));
      case VarType::Int32: case VarType::UInt32: return uint32_t(int32_t(rng_() % 200) - 100);
      default: return uint64_t(int64_t(rng_() % 20000) - 10000);
    }
  }

  std::vector<uint64_t> random_lanes(VarType t, size_t n) {
    std::vector<uint64_t> lanes(n);
    for (auto& l : lanes) l = random_lane(t);
    return lanes;
  }

  std::string name(Index index) const {
    for (size_t i = 0; i < values_.size(); ++i)
      if (values_[i].index == index) return "%" + std::to_string(i);
    return "?";
  }

  Index add(Index index, VarType type, const std::string& text) {
    listing_ << "%" << values_.size() << " = " << type_name(type) << "[" << detail::node_size(index) << "] "
             << text << "\n";
    values_.push_back({index, type});
    return index;
  }

  void add_input(VarType t, size_t n) {
    add(upload(t, random_lanes(t, n)), t, "input");
  }

  /// A random existing value of type `t` (creating an input when there is none).
  Index pick(VarType t) {
    std::vector<Index> candidates;
    for (const FuzzValue& v : values_)
      if (v.type == t) candidates.push_back(v.index);
    if (candidates.empty() || rng_() % 8 == 0) {
      if (rng_() % 2) {
        uint64_t lane = random_lane(t);
        if (rng_() % 4 == 0) return add(detail::make_param(t, lane, 1), t, "opaque 0x" + hex(lane));
        return add(detail::make_literal(t, lane, 1), t, "literal 0x" + hex(lane));
      }
      add_input(t, size_);
      return values_.back().index;
    }
    return candidates[rng_() % candidates.size()];
  }

  static std::string hex(uint64_t v) {
    std::ostringstream out;
    out << std::hex << v;
    return out.str();
  }

  /// An in-range UInt32 index for memory of kMemorySize elements.
  Index memory_index() {
    Index raw = pick(VarType::UInt32);
    Index bound = add(detail::make_literal(VarType::UInt32, kMemorySize, 1), VarType::UInt32, "literal 13");
    return add(detail::trace(Op::Mod, raw, bound), VarType::UInt32, "Mod " + name(raw) + ", " + name(bound));
  }

  void add_step() {
    VarType t = kTypes[rng_() % 7];
    switch (rng_() % 10) {
      case 0: case 1: case 2: case 3: {  // elementwise arithmetic
        Op op = Op(int(Op::Neg) + rng_() % (int(Op::Fma) - int(Op::Neg) + 1));
        if (op == Op::Cast || op == Op::Bitcast || !op_defined_for(op, t)) return;
        int arity = detail::op_arity(op);
        Index a = pick(t), b = arity > 1 ? pick(t) : 0, c = arity > 2 ? pick(t) : 0;
        VarType result = detail::op_is_comparison(op) ? VarType::Bool : t;
        std::string text = std::string(detail::op_name(op)) + " " + name(a) + (b ? ", " + name(b) : "") + (c ? ", " + name(c) : "");
        add(detail::trace(op, a, b, c), result, text);
        return;
      }
      case 4: {
        Index m = pick(VarType::Bool), a = pick(t), b = pick(t);
        add(detail::trace(Op::Select, m, a, b), t, "Select " + name(m) + ", " + name(a) + ", " + name(b));
        return;
      }
      case 5: {
        VarType to = kTypes[rng_() % 7];
        Index a = pick(t);
        add(detail::trace(Op::Cast, a, 0, 0, to), to, "Cast " + name(a) + " to " + type_name(to));
        return;
      }
      case 6: {
        // Integer -> float only: NaN payloads are unspecified (LLVM may canonicalize them),
        // so reinterpreting a computed NaN as an integer is not comparable.
        static const std::pair<VarType, VarType> pairs[] = {{VarType::UInt32, VarType::Float32}, {VarType::Int32, VarType::Float32},
                                                            {VarType::Int64, VarType::Float64}, {VarType::UInt64, VarType::Float64}};
        auto [from, to] = pairs[rng_() % 4];
        Index a = pick(from);
        add(detail::trace(Op::Bitcast, a, 0, 0, to), to, "Bitcast " + name(a) + " to " + type_name(to));
        return;
      }
      case 7: {
        Index source = upload(t, random_lanes(t, kMemorySize));
        sources_.push_back(source);
        listing_ << "source" << sources_.size() - 1 << " = " << type_name(t) << "[13] input\n";
        Index index = memory_index(), mask = pick(VarType::Bool);
        add(detail::trace(Op::Gather, source, index, mask), t,
            "Gather source" + std::to_string(sources_.size() - 1) + "[" + name(index) + "] if " + name(mask));
        return;
      }
      case 8: {
        ReduceOp reduce = t == VarType::Bool ? ReduceOp::None : ReduceOp(rng_() % 4);
        Index target = upload(t, random_lanes(t, kMemorySize));
        Index value = pick(t), index = memory_index(), mask = pick(VarType::Bool);
        detail::trace_scatter(reduce, target, value, index, mask);
        listing_ << "target" << targets_.size() << " = " << type_name(t) << "[13]; Scatter(reduce=" << int(reduce)
                 << ") " << name(value) << " at " << name(index) << " if " << name(mask) << "\n";
        targets_.push_back({target, t});
        return;
      }
      case 9: {
        Index counter = upload(VarType::UInt32, {0, 0, 0});
        Index bound = add(detail::make_literal(VarType::UInt32, 3, 1), VarType::UInt32, "literal 3");
        Index raw = pick(VarType::UInt32);
        Index index = add(detail::trace(Op::Mod, raw, bound), VarType::UInt32, "Mod " + name(raw) + ", " + name(bound));
        Index mask = pick(VarType::Bool);
        Index old = detail::trace_scatter_inc(counter, index, mask);
        listing_ << "counter" << targets_.size() << " = u32[3] zeros\n";
        targets_.push_back({counter, VarType::UInt32});
        add(old, VarType::UInt32, "ScatterInc counter" + std::to_string(targets_.size() - 1) + "[" + name(index) + "] if " + name(mask));
        return;
      }
    }
  }

  std::mt19937_64 rng_;
  int max_steps_;
  size_t size_ = 1;
  std::vector<FuzzValue> values_, targets_;
  std::vector<Index> sources_;  ///< gather sources (not operands: their size differs)
  std::ostringstream listing_;
};

}  // namespace kiln::test
