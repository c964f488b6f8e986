// Random typed programs for differential fuzzing: from a seed, a DAG of elementwise ops,
// selects, casts, bitcasts, gathers, scatters (plain and reducing), atomic counters and
// host calls, built through the runtime-typed tracing API. Running the same seed on two backends must
// give identical lanes (the LLVM backend and the interpreter implement one semantics).
#pragma once

#include <kiln/host_call.h>
#include <kiln/kiln.h>

#include "backend/backend.h"
#include "ir/op_info.h"
#include "op_test_support.h"

#include <cstdlib>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace kiln::test {

/// One traced value of a fuzz program, for the listing.
struct FuzzValue {
  Index index;
  VarType type;
  std::string label = {};  ///< its name in the listing ("%3", "phi1")
  /// A float target of a Mul, Min or Max scatter: lanes meeting on one element combine in
  /// the order a GPU's atomics take them (not bit for bit, and ±0 ties either way).
  bool reordered = false;
};

/// The outcome of running one program: every value it created, and every scatter
/// target after the program ran, as lane bits; plus a readable listing.
struct FuzzResult {
  std::vector<VarType> types;
  std::vector<std::vector<uint64_t>> lanes;
  std::vector<bool> reordered;  ///< per value: FuzzValue::reordered
  std::string listing;
};

/// The host function fuzz programs call: (a f32, b i64, c Bool, d u32) -> (a + b f64,
/// b ^ d u32, c != (a < 0) Bool, c ? a : -a f32), with junk on the lanes it must skip (kernels
/// read 0 there). No float-to-integer conversion: NaN and infinities are inputs too.
inline void fuzz_host_function(void*, uint32_t width, const int32_t* active, const void* const* in, void* const* out) {
  for (uint32_t i = 0; i < width; ++i) {
    float a = static_cast<const float*>(in[0])[i];
    int64_t b = static_cast<const int64_t*>(in[1])[i];
    bool c = static_cast<const uint8_t*>(in[2])[i];
    uint32_t d = static_cast<const uint32_t*>(in[3])[i];
    static_cast<double*>(out[0])[i] = active[i] ? double(a) + double(b) : 1234.5;
    static_cast<uint32_t*>(out[1])[i] = active[i] ? uint32_t(b) ^ d : 77u;
    static_cast<uint8_t*>(out[2])[i] = active[i] ? c != (a < 0) : 3;
    static_cast<float*>(out[3])[i] = active[i] ? (c ? a : -a) : -9.f;
  }
}
inline const HostFunction kFuzzHostFunction("fuzz_host_function",
                                            {VarType::Float32, VarType::Int64, VarType::Bool, VarType::UInt32},
                                            {VarType::Float64, VarType::UInt32, VarType::Bool, VarType::Float32},
                                            fuzz_host_function);

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
    return finish();
  }

 protected:
  /// Evaluates every value and target, downloads their lanes and releases the program.
  FuzzResult finish() {
    std::vector<Index> all;
    for (const FuzzValue& v : values_) all.push_back(v.index);
    for (const FuzzValue& v : targets_) all.push_back(v.index);
    detail::eval(all.data(), all.size());
    FuzzResult result;
    for (const auto* list : {&values_, &targets_})
      for (const FuzzValue& v : *list) {
        result.types.push_back(v.type);
        result.lanes.push_back(download(v.index));
        result.reordered.push_back(v.reordered);
      }
    result.listing = listing_.str();
    for (const auto* list : {&values_, &targets_})
      for (const FuzzValue& v : *list) detail::dec_ref(v.index);
    values_.clear();
    targets_.clear();
    for (Index source : sources_) detail::dec_ref(source);
    sources_.clear();
    return result;
  }

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
      case VarType::Int32:
      case VarType::UInt32: return uint32_t(int32_t(rng_() % 200) - 100);
      default: return uint64_t(int64_t(rng_() % 20000) - 10000);
    }
  }

  /// Float lanes holding whole numbers in [-100, 100).
  std::vector<uint64_t> whole_number_lanes(VarType t, size_t n) {
    std::vector<uint64_t> lanes(n);
    for (auto& l : lanes) {
      double value = double(int(rng_() % 200) - 100);
      l = t == VarType::Float32 ? bits_of(float(value)) : bits_of(value);
    }
    return lanes;
  }

  /// `value` (a float type) clamped to [-1000, 1000] and rounded: a whole number, or NaN.
  Index whole_number(Index value, VarType t) {
    auto constant = [&](double c) {
      uint64_t bits = t == VarType::Float32 ? bits_of(float(c)) : bits_of(c);
      return add(detail::make_literal(t, bits, 1), t, "literal " + std::to_string(int(c)));
    };
    Index high = constant(1000), low = constant(-1000);
    Index clamped =
        add(detail::trace(Op::Max, add(detail::trace(Op::Min, value, high), t, "Min " + name(value) + ", 1000"), low),
            t, "Max (Min " + name(value) + ", 1000), -1000");
    return add(detail::trace(Op::Round, clamped), t, "Round " + name(clamped));
  }

  std::vector<uint64_t> random_lanes(VarType t, size_t n) {
    std::vector<uint64_t> lanes(n);
    for (auto& l : lanes) l = random_lane(t);
    return lanes;
  }

  std::string name(Index index) const {
    for (size_t i = 0; i < values_.size(); ++i)
      if (values_[i].index == index) return values_[i].label;
    return "?";
  }

  Index add(Index index, VarType type, const std::string& text) {
    std::string label = "%" + std::to_string(serial_++);
    listing_ << label << " = " << type_name(type) << "[" << detail::node_size(index) << "] " << text << "\n";
    values_.push_back({index, type, label});
    return index;
  }

  void add_input(VarType t, size_t n) {
    std::vector<uint64_t> lanes = random_lanes(t, n);
    add(upload(t, lanes), t, "input" + lanes_text(lanes));
  }

  /// With KILN_FUZZ_VALUES=1 the listing shows the lanes of inputs (as hex bits).
  static std::string lanes_text(const std::vector<uint64_t>& lanes) {
    static const bool show = std::getenv("KILN_FUZZ_VALUES") != nullptr;
    if (!show) return "";
    std::string text = " {";
    for (size_t i = 0; i < lanes.size(); ++i) text += (i ? ", 0x" : "0x") + hex(lanes[i]);
    return text + "}";
  }

  /// A random existing value of type `t` (creating an input when there is none).
  Index pick(VarType t) {
    std::vector<Index> candidates;
    for (const FuzzValue& v : values_)
      if (v.type == t) candidates.push_back(v.index);
    if (candidates.empty() || rng_() % 8 == 0) {
      if (in_body_ || rng_() % 2) {  // a loop body creates no per-lane inputs
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
    switch (rng_() % 11) {
      case 0:
      case 1:
      case 2:
      case 3: {  // elementwise arithmetic
        Op op = Op(int(Op::Neg) + rng_() % (int(Op::Fma) - int(Op::Neg) + 1));
        if (op == Op::Cast || op == Op::Bitcast || !op_defined_for(op, t)) return;
        int arity = detail::op_arity(op);
        Index a = pick(t), b = arity > 1 ? pick(t) : 0, c = arity > 2 ? pick(t) : 0;
        VarType result = detail::op_is_comparison(op) ? VarType::Bool : t;
        std::string text =
            std::string(detail::op_name(op)) + " " + name(a) + (b ? ", " + name(b) : "") + (c ? ", " + name(c) : "");
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
        static const std::pair<VarType, VarType> pairs[] = {{VarType::UInt32, VarType::Float32},
                                                            {VarType::Int32, VarType::Float32},
                                                            {VarType::Int64, VarType::Float64},
                                                            {VarType::UInt64, VarType::Float64}};
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
        if (in_body_) {
          add_body_scatter();
          return;
        }
        // None, Add, Min, Max and Mul for every type but Bool; And and Or for integers.
        ReduceOp reduce = t == VarType::Bool ? ReduceOp::None : ReduceOp(rng_() % (is_float(t) ? 5 : 7));
        // Float additions into one element are summed in an unspecified order (a packet's
        // lanes first): whole-number targets and additions keep every order exact, and the
        // results comparable bit for bit.
        bool float_sum = is_float(t) && reduce == ReduceOp::Add;
        Index target = upload(t, float_sum ? whole_number_lanes(t, kMemorySize) : random_lanes(t, kMemorySize));
        Index value = float_sum ? whole_number(pick(t), t) : pick(t);
        Index index = memory_index(), mask = pick(VarType::Bool);
        detail::trace_scatter(reduce, target, value, index, mask);
        listing_ << "target" << targets_.size() << " = " << type_name(t) << "[13]; Scatter(reduce=" << int(reduce)
                 << ") " << name(value) << " at " << name(index) << " if " << name(mask) << "\n";
        bool reordered = is_float(t) && (reduce == ReduceOp::Mul || reduce == ReduceOp::Min || reduce == ReduceOp::Max);
        targets_.push_back({target, t, {}, reordered});
        return;
      }
      case 9: {
        // Atomic counters in a loop body hand out slots in an order that differs between
        // backends and modes (the interpreter runs lane by lane): not comparable. Loop
        // bodies get an if_stmt here instead.
        if (in_body_) {
          static const bool with_if = !std::getenv("KILN_FUZZ_LOOP_IF") || std::getenv("KILN_FUZZ_LOOP_IF")[0] != '0';
          if (with_if && branch_depth_ == 0 && rng_() % 2) add_body_if();
          return;
        }
        Index counter = upload(VarType::UInt32, {0, 0, 0});
        Index bound = add(detail::make_literal(VarType::UInt32, 3, 1), VarType::UInt32, "literal 3");
        Index raw = pick(VarType::UInt32);
        Index index = add(detail::trace(Op::Mod, raw, bound), VarType::UInt32, "Mod " + name(raw) + ", " + name(bound));
        Index mask = pick(VarType::Bool);
        Index old = detail::trace_scatter_inc(counter, index, mask);
        listing_ << "counter" << targets_.size() << " = u32[3] zeros\n";
        targets_.push_back({counter, VarType::UInt32});
        add(old, VarType::UInt32,
            "ScatterInc counter" + std::to_string(targets_.size() - 1) + "[" + name(index) + "] if " + name(mask));
        return;
      }
      case 10: {
        if (default_device() != Device::CPU) return;  // a GPU's kernels call no host function
        const std::vector<VarType>& types = kFuzzHostFunction.inputs();
        detail::Values inputs;
        std::string text = "host_call(";
        for (size_t k = 0; k < types.size(); ++k) {
          Index input = pick(types[k]);
          inputs.push_back(detail::Handle::borrow(input));
          text += (k ? ", " : "") + name(input);
        }
        Index mask = pick(VarType::Bool);
        detail::Values outputs = detail::host_call(kFuzzHostFunction, nullptr, inputs, mask);
        text += ") if " + name(mask) + " output ";
        for (size_t k = 0; k < outputs.size(); ++k)
          add(outputs[k].release(), kFuzzHostFunction.outputs()[k], text + std::to_string(k));
        return;
      }
    }
  }

  /// Inside a loop body: an order-independent integer reduction (the target's Add, Min, Max, Mul, And or
  /// Or) into one of the targets made before the loop (masked by the loop's active lanes automatically).
  void add_body_scatter() {
    if (body_targets_.empty() || branch_depth_ > 0) return;
    size_t which = body_targets_[rng_() % body_targets_.size()];
    FuzzValue& target = targets_[which];
    // One reduction per target: mixing them on one element depends on the order of lanes
    // and iterations, which differs between backends (the interpreter runs lane by lane).
    ReduceOp reduce = ReduceOp(1 + which % 6);
    Index value = pick(target.type), index = memory_index(), mask = pick(VarType::Bool);
    // And-ed with a per-lane true value: a scatter whose operands are all size 1 has no
    // agreed meaning in loop bodies yet (modes differ; test_control.cpp covers it).
    mask =
        add(detail::trace(Op::And, mask, body_lanes_), VarType::Bool, "And " + name(mask) + ", " + name(body_lanes_));
    Index t = target.index;
    detail::trace_scatter(reduce, t, value, index, mask);
    if (t != target.index) {  // copied on write: the copy carries a new reference
      detail::dec_ref(target.index);
      target.index = t;
    }
    listing_ << "target" << which << " Scatter(reduce=" << int(reduce) << ") " << name(value) << " at " << name(index)
             << " if " << name(mask) << "\n";
  }

  /// Inside a loop body: if_stmt over 1-3 arguments from the pool, each branch a few
  /// random steps over its arguments and literals only (evaluated branches run on the
  /// compacted lanes that take them), returning 1-2 values of random types.
  void add_body_if() {
    Index cond = pick(VarType::Bool);
    detail::Values args;
    std::string arg_names;
    for (size_t k = 0, n = 1 + rng_() % 3; k < n; ++k) {
      Index a = pick(kTypes[rng_() % 7]);
      args.push_back(detail::Handle::borrow(a));
      arg_names += (k ? ", " : "") + name(a);
    }
    std::vector<VarType> out_types;
    for (size_t k = 0, n = 1 + rng_() % 2; k < n; ++k) out_types.push_back(kTypes[rng_() % 7]);
    uint64_t seeds[2] = {rng_(), rng_()};
    int steps[2] = {int(rng_() % 6), int(rng_() % 6)};
    uint64_t resume = rng_();
    listing_ << "  if_stmt(" << name(cond) << ", args " << arg_names << "):\n";
    auto branch = [&](int side) {
      return detail::BodyFn([&, side](const detail::Values& in) {
        std::vector<FuzzValue> outer = std::move(values_);
        values_.clear();
        // One-lane values from before the loop broadcast. (Not the body's: once an evaluated
        // loop has compacted its state to one lane, per-lane values have one lane too.)
        for (size_t k = 0; k < body_outer_values_; ++k)
          if (detail::node_size(outer[k].index) == 1) values_.push_back(outer[k]);
        for (size_t k = 0; k < in.size(); ++k)
          values_.push_back({in[k].index(), detail::node_type(in[k].index()), "arg" + std::to_string(k)});
        size_t owned = values_.size();
        rng_.seed(seeds[side]);
        ++branch_depth_;
        listing_ << (side == 0 ? "  true:\n" : "  false:\n");
        detail::Values out;
        for (int step = 0; step < steps[side]; ++step) add_step();
        std::string line = "  returns";
        for (VarType t : out_types) {
          Index v = pick(t);
          out.push_back(detail::Handle::borrow(v));
          line += " " + name(v);
        }
        listing_ << line << "\n";
        --branch_depth_;
        for (size_t i = owned; i < values_.size(); ++i) detail::dec_ref(values_[i].index);
        values_ = std::move(outer);
        return out;
      });
    };
    detail::Values out = detail::if_stmt(cond, branch(0), branch(1), args, mode_, "fuzz-if");
    for (size_t k = 0; k < out.size(); ++k) add(out[k].release(), out_types[k], "if result " + std::to_string(k));
    rng_.seed(resume);
  }

  std::mt19937_64 rng_;
  int max_steps_;
  ControlMode mode_ = ControlMode::Symbolic;  ///< of the statements in a loop program
  int branch_depth_ = 0;                      ///< inside an if_stmt branch of a loop body
  size_t size_ = 1;
  bool in_body_ = false;              ///< generating a loop body (see FuzzLoopProgram)
  Index body_lanes_ = 0;              ///< in a body: a per-lane Bool that is always true
  size_t body_outer_values_ = 0;      ///< in a body: values_ before this are from before the loop
  uint64_t serial_ = 0;               ///< next value number of the listing
  std::vector<size_t> body_targets_;  ///< targets_ a loop body may reduce into
  std::vector<FuzzValue> values_, targets_;
  std::vector<Index> sources_;  ///< gather sources (not operands: their size differs)
  std::ostringstream listing_;
};

/// A random symbolic (or evaluated) while_loop: a per-lane trip count bounds a UInt32
/// counter (so every lane stops), 1-4 more state variables of random types are updated by
/// a random body (the expression generator above, over the state, loop-invariant values
/// and literals), the condition may add a random test of the state, and the body may
/// reduce (Add/Min/Max, integers) into targets made before the loop. Random steps before
/// and after the loop use its inputs and results. Running a seed in any mode on any
/// backend must give the same lanes. The body is generated from a seed of its own every
/// time it is traced, so an evaluated loop traces the same body each iteration.
class FuzzLoopProgram : public FuzzProgram {
 public:
  /// `max_body_steps` truncates the body (to find the smallest failing one).
  explicit FuzzLoopProgram(uint64_t seed, int max_body_steps = 1000) : FuzzProgram(seed, max_body_steps) {}

  FuzzResult run(ControlMode mode) {
    mode_ = mode;
    static const size_t kLoopSizes[] = {1, 5, 16, 17, 37, 101};
    size_ = kLoopSizes[rng_() % 6];
    for (VarType t : kTypes) {
      add_input(t, size_);
      if (rng_() % 2) add_input(t, 1);
    }
    int before = int(rng_() % 4);
    for (int step = 0; step < before; ++step) add_step();

    // Targets the body reduces into.
    static constexpr VarType kIntTypes[] = {VarType::Int32, VarType::UInt32, VarType::Int64, VarType::UInt64};
    int targets = int(rng_() % 4);
    for (int k = 0; k < targets; ++k) {
      VarType t = kIntTypes[rng_() % 4];
      body_targets_.push_back(targets_.size());
      std::vector<uint64_t> lanes = random_lanes(t, kMemorySize);
      listing_ << "target" << targets_.size() << " = " << type_name(t) << "[13] input" << lanes_text(lanes) << "\n";
      targets_.push_back({upload(t, lanes), t});
    }

    // The state: counter, trip count (in the state or captured), user variables.
    std::vector<uint64_t> trips(size_);
    for (auto& trip : trips) trip = rng_() % 6;
    Index trip = add(upload(VarType::UInt32, trips), VarType::UInt32, "input (trip counts)" + lanes_text(trips));
    Index counter = add(upload(VarType::UInt32, std::vector<uint64_t>(size_, 0)), VarType::UInt32, "input (counter)");
    bool trip_in_state = rng_() % 2, allow_capture = rng_() % 2;
    size_t vars = 1 + rng_() % 4;
    // The initial state is a copy of each value: an array that is both the initial state
    // and read by the body from outside is not told apart by evaluated loops yet (they
    // compact it as state; test_control.cpp's LoopBodyCapturesItsInitialState covers it).
    auto copy_of = [](Index v) { return detail::Handle::steal(upload(detail::node_type(v), download(v))); };
    detail::Values state{copy_of(counter)};
    if (trip_in_state) state.push_back(copy_of(trip));
    size_t first_var = state.size();
    std::vector<VarType> var_types;
    std::vector<std::string> initial_names;
    for (size_t k = 0; k < vars; ++k) {
      VarType t = kTypes[rng_() % 7];
      var_types.push_back(t);
      std::vector<Index> full;
      for (const FuzzValue& v : values_)
        if (v.type == t && detail::node_size(v.index) == size_) full.push_back(v.index);
      Index init = full[rng_() % full.size()];  // there is always the input of this type
      state.push_back(copy_of(init));
      initial_names.push_back(name(init));
    }
    // The condition's extra test: state variable `cond_var` against a literal.
    bool extra_cond = rng_() % 2;
    size_t cond_var = rng_() % vars;
    uint64_t cond_literal = random_lane(var_types[cond_var]);
    Op cond_op = rng_() % 2 ? Op::Ne : Op::Lt;
    if (var_types[cond_var] == VarType::Bool) cond_op = Op::Ne;
    int body_steps = std::min(max_steps_, 1 + int(rng_() % 14));
    uint64_t body_seed = rng_(), after_seed = rng_();

    listing_ << "while_loop(" << (mode == ControlMode::Symbolic ? "symbolic" : "evaluated") << ") state: counter "
             << name(counter) << (trip_in_state ? ", trip " + name(trip) : std::string());
    for (size_t k = 0; k < vars; ++k) listing_ << ", copy of " << initial_names[k];
    listing_ << (allow_capture ? "; body may capture per-lane values" : "; body reads only its state") << "\n";
    listing_ << "  cond: phi0 < " << (trip_in_state ? "phi1" : name(trip));
    if (extra_cond)
      listing_ << " && " << (cond_op == Op::Ne ? "Ne" : "Lt") << "(phi" << first_var + cond_var << ", 0x"
               << hex(cond_literal) << ")";
    listing_ << "\n";

    detail::ConditionFn cond = [&](const detail::Values& phis) {
      detail::Handle c =
          detail::Handle::steal(detail::trace(Op::Lt, phis[0].index(), trip_in_state ? phis[1].index() : trip));
      if (extra_cond) {
        VarType t = var_types[cond_var];
        detail::Handle lit = detail::Handle::steal(detail::make_literal(t, cond_literal, 1));
        detail::Handle test =
            detail::Handle::steal(detail::trace(cond_op, phis[first_var + cond_var].index(), lit.index()));
        c = detail::Handle::steal(detail::trace(Op::And, c.index(), test.index()));
      }
      return c;
    };
    bool listed = false;
    detail::BodyFn body = [&](const detail::Values& phis) {
      std::string listing_before = listing_.str();
      std::vector<FuzzValue> outer = std::move(values_);
      values_.clear();
      for (const FuzzValue& v : outer)
        if (allow_capture || detail::node_size(v.index) == 1) values_.push_back(v);
      body_outer_values_ = values_.size();
      for (size_t k = 0; k < phis.size(); ++k)
        values_.push_back({phis[k].index(), detail::node_type(phis[k].index()), "phi" + std::to_string(k)});
      size_t owned = values_.size();
      rng_.seed(body_seed);
      in_body_ = true;
      listing_ << "  body:\n";
      body_lanes_ = add(detail::trace(Op::Eq, phis[0].index(), phis[0].index()), VarType::Bool, "Eq phi0, phi0");
      detail::Values next;
      try {
        for (int step = 0; step < body_steps; ++step) add_step();
        next.push_back(detail::Handle::steal(detail::trace(
            Op::Add, phis[0].index(), detail::Handle::steal(detail::make_literal(VarType::UInt32, 1, 1)).index())));
        if (trip_in_state) next.push_back(phis[1]);
        std::string line = std::string("  next: phi0 + 1") + (trip_in_state ? ", phi1" : "");
        for (size_t k = 0; k < vars; ++k) {
          Index v = rng_() % 4 == 0 ? phis[first_var + k].index() : pick(var_types[k]);
          next.push_back(detail::Handle::borrow(v));
          line += ", " + name(v);
        }
        listing_ << line << "\n";
      } catch (...) {
        in_body_ = false;
        throw;
      }
      in_body_ = false;
      for (size_t i = owned; i < values_.size(); ++i) detail::dec_ref(values_[i].index);
      values_ = std::move(outer);
      if (listed) {  // an evaluated loop traces the body again: list it once
        listing_.str("");
        listing_ << listing_before;
      }
      listed = true;
      return next;
    };
    detail::Values results = detail::while_loop(state, cond, body, mode, "fuzz");
    for (size_t k = 0; k < results.size(); ++k) {
      VarType t = detail::node_type(results[k].index());
      add(results[k].release(), t, "loop result " + std::to_string(k));
    }
    rng_.seed(after_seed);
    int after = int(rng_() % 4);
    for (int step = 0; step < after; ++step) add_step();
    return finish();
  }
};

}  // namespace kiln::test
