// The reference interpreter: runs a kernel form one lane at a time with the scalar op
// semantics of src/ir/scalar_ops.h. It is slow and obviously correct, the oracle that the
// LLVM backend is fuzzed against. Lanes run in order on one thread.
#include <kiln/errors.h>
#include <kiln/host_call.h>

#include "backend/backend.h"
#include "ir/host_function.h"
#include "ir/op_info.h"
#include "ir/scalar_ops.h"

#include <string>
#include <unordered_map>
#include <vector>

namespace kiln::detail {
namespace {

class InterpretedKernel final : public Kernel {
 public:
  explicit InterpretedKernel(KernelForm form) : form_(std::move(form)) {
    value_used_ = values_read(form_);
    find_loops();
    find_host_calls();
  }

  void launch(const LaunchArgs& args) const override {
    const auto& statements = form_.statements;
    std::vector<uint64_t> values(statements.size() + host_values_);  // then the outputs of host calls
    for (size_t lane = 0; lane < args.size && !args.check->interrupt->load(std::memory_order_relaxed); ++lane) {
      for (size_t i = 0; i < statements.size();) i = step(uint32_t(i), lane, values, args);
      for (size_t i = 0; i < statements.size(); ++i)  // outputs hold their final values
        if (statements[i].output_slot != kNoSlot)
          store_lane(statements[i].type, slot_pointer(args, statements[i].output_slot, statements[i].type, lane),
                     values[i]);
    }
  }

 private:
  /// Runs the statement at `position` for one lane; returns the next position.
  uint32_t step(uint32_t position, size_t lane, std::vector<uint64_t>& values, const LaunchArgs& args) const {
    const KernelStatement& s = form_.statements[position];
    uint64_t& value = values[position];
    auto operand = [&](int k) { return k < op_arity(s.op) ? values[s.operands[k]] : 0; };
    switch (s.op) {
      case Op::Literal: value = s.literal; break;
      case Op::Param: value = args.params[s.literal]; break;
      case Op::Counter: value = lane; break;
      case Op::Data: {
        size_t element = s.broadcast ? 0 : lane;
        value = value_used_[position] ? load_lane(s.type, slot_pointer(args, s.input_slot, s.type, element)) : 0;
        break;
      }
      case Op::Neg:
      case Op::Not:
      case Op::Abs:
      case Op::Sqrt:
      case Op::Rcp:
      case Op::Rsqrt:
      case Op::Floor:
      case Op::Ceil:
      case Op::Round:
      case Op::Trunc:
      case Op::Cast:
      case Op::Bitcast:
      case Op::Add:
      case Op::Sub:
      case Op::Mul:
      case Op::Div:
      case Op::Mod:
      case Op::Min:
      case Op::Max:
      case Op::And:
      case Op::Or:
      case Op::Xor:
      case Op::Shl:
      case Op::Shr:
      case Op::Eq:
      case Op::Ne:
      case Op::Lt:
      case Op::Le:
      case Op::Gt:
      case Op::Ge:
      case Op::Fma:
      case Op::Select: value = eval_scalar(s.op, s.type, s.operand_type, operand(0), operand(1), operand(2)); break;
      case Op::Gather: value = gather(position, values, args); break;
      case Op::Scatter: value = scatter(position, values, args); break;
      case Op::ScatterInc: value = scatter_inc(position, values, args); break;
      case Op::HostArg: break;  // read by its HostCall
      case Op::HostCall: value = host_call(position, values); break;
      case Op::HostResult: value = values[host_calls_.at(s.operands[0]).outputs + s.literal]; break;
      case Op::LoopBegin: break;
      case Op::LoopPhi: value = values[s.operands[0]]; break;
      case Op::LoopCond:  // a lane leaves the loop the first time its condition fails
        value = values[s.operands[0]];
        return value ? position + 1 : loop_end_of_cond_.at(position) + 1;
      case Op::LoopUpdate: value = values[s.operands[1]]; break;
      case Op::LoopEnd: {
        const LoopShape& loop = loops_.at(s.operands[0]);
        for (uint32_t update : loop.updates) values[form_.statements[update].operands[0]] = values[update];
        if (form_.statements[s.operands[0]].literal) return position + 1;  // once: no second iteration
        if (args.check->interrupt->load(std::memory_order_relaxed)) return uint32_t(form_.statements.size());
        return loop.head;
      }
      case Op::Loop:
      case Op::LoopResult:  // trace only, never in a form
        throw InternalError(std::string("kiln: interpreter: ") + op_name(s.op) + " in a kernel form");
    }
    return position + 1;
  }

  struct LoopShape {
    uint32_t head = 0;              ///< first statement after the phis
    std::vector<uint32_t> updates;  ///< this loop's LoopUpdate statements
  };
  /// Pairs each LoopBegin with its phis, LoopCond, updates and LoopEnd.
  void find_loops() {
    std::vector<uint32_t> open, conds;
    for (uint32_t i = 0; i < form_.statements.size(); ++i) {
      const KernelStatement& s = form_.statements[i];
      if (s.op == Op::LoopBegin) {
        open.push_back(i);
        uint32_t head = i + 1;
        while (head < form_.statements.size() && form_.statements[head].op == Op::LoopPhi) ++head;
        loops_[i].head = head;
      } else if (s.op == Op::LoopCond) {
        conds.push_back(i);
      } else if (s.op == Op::LoopUpdate) {
        loops_[open.back()].updates.push_back(i);
      } else if (s.op == Op::LoopEnd) {
        loop_end_of_cond_[conds.back()] = i;
        conds.pop_back();
        open.pop_back();
      }
    }
  }

  /// A gather's value: the element at the index, or 0 on a masked or out-of-range lane.
  uint64_t gather(uint32_t position, const std::vector<uint64_t>& values, const LaunchArgs& args) const {
    const KernelStatement& s = form_.statements[position];
    uint32_t slot = form_.statements[s.operands[0]].input_slot;
    uint64_t index = values[s.operands[1]];
    if (!values[s.operands[2]] || !in_range(position, slot, index, args)) return 0;
    return load_lane(s.type, slot_pointer(args, slot, s.type, index));
  }

  /// Stores (or reduces) the value at the index; a scatter has no value of its own (0).
  uint64_t scatter(uint32_t position, const std::vector<uint64_t>& values, const LaunchArgs& args) const {
    const KernelStatement& s = form_.statements[position];
    uint32_t slot = form_.statements[s.operands[0]].input_slot;
    uint64_t index = values[s.operands[2]];
    if (values[s.operands[3]] && in_range(position, slot, index, args)) {
      void* p = slot_pointer(args, slot, s.type, index);
      uint64_t old_value = load_lane(s.type, p);
      store_lane(s.type, p, reduce_scalar(ReduceOp(s.literal), s.type, old_value, values[s.operands[1]]));
    }
    return 0;
  }

  /// Increments the UInt32 counter at the index; the value is the counter before.
  uint64_t scatter_inc(uint32_t position, const std::vector<uint64_t>& values, const LaunchArgs& args) const {
    const KernelStatement& s = form_.statements[position];
    uint32_t slot = form_.statements[s.operands[0]].input_slot;
    uint64_t index = values[s.operands[1]];
    uint64_t old_value = 0;
    if (values[s.operands[2]] && in_range(position, slot, index, args)) {
      void* p = slot_pointer(args, slot, VarType::UInt32, index);
      old_value = load_lane(VarType::UInt32, p);
      store_lane(VarType::UInt32, p, uint32_t(old_value + 1));
    }
    return old_value;
  }

  /// Where each host call keeps its outputs: after the statements' values.
  void find_host_calls() {
    for (uint32_t i = 0; i < form_.statements.size(); ++i) {
      const KernelStatement& s = form_.statements[i];
      if (s.op != Op::HostCall) continue;
      HostCallShape& call = host_calls_[i];
      call.outputs = form_.statements.size() + host_values_;
      call.cells = host_argument_cells(form_, i);
      const HostSignature& signature = host_signature(s.literal);
      call.input_types = signature.inputs;
      call.output_types = signature.outputs;
      host_values_ += signature.outputs.size();
    }
  }

  /// Runs the host call at `position` on this lane (width 1) when its mask holds; writes its
  /// outputs, 0 when it does not run. Its value: whether it ran.
  uint64_t host_call(uint32_t position, std::vector<uint64_t>& values) const {
    const KernelStatement& s = form_.statements[position];
    const HostCallShape& call = host_calls_.at(position);
    uint64_t* outputs = values.data() + call.outputs;
    std::fill(outputs, outputs + call.output_types.size(), 0);
    if (!values[s.operands[2]]) return 0;
    std::vector<uint64_t> input_lanes(call.cells.size()), output_lanes(call.output_types.size());
    std::vector<const void*> input_pointers;
    std::vector<void*> output_pointers;
    for (size_t k = 0; k < call.cells.size(); ++k) {
      store_lane(call.input_types[k], &input_lanes[k], values[form_.statements[call.cells[k]].operands[1]]);
      input_pointers.push_back(&input_lanes[k]);
    }
    for (uint64_t& lane : output_lanes) output_pointers.push_back(&lane);
    const int32_t active = -1;
    auto fn = reinterpret_cast<HostFunctionPointer>(values[s.operands[0]]);
    fn(reinterpret_cast<void*>(values[s.operands[1]]), 1, &active, input_pointers.data(), output_pointers.data());
    for (size_t k = 0; k < output_lanes.size(); ++k) outputs[k] = load_lane(call.output_types[k], &output_lanes[k]);
    return 1;
  }

  static void* slot_pointer(const LaunchArgs& args, uint32_t slot, VarType type, uint64_t element) {
    return static_cast<uint8_t*>(args.buffers[slot]) + element * type_size(type);
  }

  bool in_range(uint32_t position, uint32_t slot, uint64_t index, const LaunchArgs& args) const {
    if (index < args.buffer_sizes[slot]) return true;
    if (form_.checks) args.check->report(args.check, position, index, args.buffer_sizes[slot], 1);
    return false;
  }

  KernelForm form_;
  std::vector<bool> value_used_;                             ///< Data statements whose elements are read
  std::unordered_map<uint32_t, LoopShape> loops_;            ///< by LoopBegin position
  std::unordered_map<uint32_t, uint32_t> loop_end_of_cond_;  ///< LoopCond -> its LoopEnd
  struct HostCallShape {
    size_t outputs = 0;           ///< index of its first output in a lane's values
    std::vector<uint32_t> cells;  ///< its HostArg statements, in argument order
    std::vector<VarType> input_types, output_types;
  };
  std::unordered_map<uint32_t, HostCallShape> host_calls_;  ///< by HostCall position
  size_t host_values_ = 0;                                  ///< outputs of all host calls
};

class InterpreterBackend final : public Backend {
 public:
  const char* name() const override { return "interp"; }
  std::string compiler() const override { return "reference interpreter"; }
  std::string cpu() const override { return "any"; }
  uint32_t packet_width() const override { return 1; }
  std::unique_ptr<Kernel> compile(const KernelForm& form, const std::string&, CompileTimes&,
                                  std::vector<uint8_t>&) override {
    return std::make_unique<InterpretedKernel>(form);
  }
};

}  // namespace

Backend& interpreter_backend() {
  static InterpreterBackend backend;
  return backend;
}

}  // namespace kiln::detail
