// Lowering of memory statements to LLVM IR: gathers, scatters (masked stores, atomic
// reductions, compare-exchange loops), scatter-increments, and the bounds mask that keeps
// an out-of-range index from touching memory (and reports it in checked mode).
#include "backend/lowering/lowering.h"

#include <string>

namespace kiln::detail::lowering {

std::string Lowering::addresses(const KernelStatement& buffer, VarType t, const std::string& index,
                                const std::string& index64) {
  std::string mt = memory_type(t);
  if (!target_.rebases_addresses())
    return instr("getelementptr " + mt + ", ptr %buf" + std::to_string(buffer.input_slot) + ", " + vec("i64") + " " +
                 index64);
  // UInt32 indices as signed 32-bit offsets from the buffer plus 2^31 elements: idx ^ 2^31
  // read as signed is idx - 2^31, so every index maps to its element, and x86 gathers and
  // scatters 16 lanes with 32-bit offsets at once (64-bit ones take two instructions).
  std::string rebased =
      instr("getelementptr " + mt + ", ptr %buf" + std::to_string(buffer.input_slot) + ", i64 2147483648");
  std::string offsets = instr("xor " + vec("i32") + " " + index + ", " + splat_const("i32", "-2147483648"));
  return instr("getelementptr " + mt + ", ptr " + rebased + ", " + vec("i32") + " " + offsets);
}

/// Lanes whose index is out of range read 0 or write nothing: a bad index never touches
/// memory, in fast mode too (a compare and an and). Checked mode also reports them (a
/// branch not taken by correct programs, which costs gathers 5-10%).
/// The UInt32 indices `index` are compared with the buffer's last index, computed once per
/// call in the entry block (a 32-bit compare: buffers of 2^32 or more elements take every
/// index; an empty one none).
std::string Lowering::checked_mask(uint32_t position, const KernelStatement& buffer, const std::string& mask,
                                   const std::string& index, const std::string& index64) {
  std::string active = instr("and " + vec("i1") + " %active, " + mask);
  std::string p = "%s" + std::to_string(position);
  std::string size = p + ".size";
  entry_ << "  " << p << ".size.p = getelementptr inbounds i64, ptr %sizes, i64 " << buffer.input_slot << "\n";
  entry_ << "  " << size << " = load i64, ptr " << p << ".size.p, align 8\n";
  entry_ << "  " << p << ".small = icmp ult i64 " << size << ", 4294967296\n";
  entry_ << "  " << p << ".count = select i1 " << p << ".small, i64 " << size << ", i64 4294967296\n";
  entry_ << "  " << p << ".last64 = sub i64 " << p << ".count, 1\n";
  entry_ << "  " << p << ".last.s = trunc i64 " << p << ".last64 to i32\n";
  entry_ << "  " << p << ".empty.s = icmp eq i64 " << size << ", 0\n";
  splat(entry_, "s" + std::to_string(position) + ".last", "i32", p + ".last.s");
  splat(entry_, "s" + std::to_string(position) + ".empty", "i1", p + ".empty.s");
  std::string beyond = instr("icmp ugt " + vec("i32") + " " + index + ", " + p + ".last");
  std::string outside = instr("or " + vec("i1") + " " + beyond + ", " + p + ".empty");
  std::string inside = instr("xor " + vec("i1") + " " + outside + ", " + splat_const("i1", "true"));
  std::string kept = instr("and " + vec("i1") + " " + active + ", " + inside);
  if (!form_.checks) return kept;
  std::string bad = instr("and " + vec("i1") + " " + active + ", " + outside);
  std::string any = call("i1", "llvm.vector.reduce.or." + vmangle("i1"), {{vec("i1"), bad}});
  std::string report = label(position, "report"), resume = label(position, "resume");
  body_ << "  br i1 " << any << ", label %" << report << ", label %" << resume << ", !prof !1\n";  // rarely taken
  start_block(report);
  std::string bits = instr("bitcast " + vec("i1") + " " + bad + " to i" + std::to_string(width_));
  std::string bits64 = width_ == 64 ? bits : instr("zext i" + std::to_string(width_) + " " + bits + " to i64");
  std::string lane = call("i64", "llvm.cttz.i64", {{"i64", bits64}, {"i1", "true"}});
  std::string bad_index = instr("extractelement " + vec("i64") + " " + index64 + ", i64 " + lane);
  std::string lanes = call("i64", "llvm.ctpop.i64", {{"i64", bits64}});
  target_.report_bad_lanes(*this, position, bad_index, size, lanes);
  body_ << "  br label %" << resume << "\n";
  start_block(resume);
  return kept;
}

std::string Lowering::widen_index(const std::string& index) {
  return instr("zext " + vec("i32") + " " + index + " to " + vec("i64"));
}

std::string Lowering::gather(uint32_t position, const KernelStatement& s) {
  const KernelStatement& buffer = form_.statements[s.operands[0]];
  std::string index64 = widen_index(arg(s, 1));
  std::string mask = checked_mask(position, buffer, arg(s, 2), arg(s, 1), index64);
  std::string ptrs = addresses(buffer, s.type, arg(s, 1), index64);
  std::string mt = memory_type(s.type);
  std::string loaded = call(vec(mt), "llvm.masked.gather." + vmangle(mt) + "." + vmangle("p0"),
                            {{vec("ptr"), ptrs},
                             {"i32", std::to_string(type_size(s.type))},
                             {vec("i1"), mask},
                             {vec(mt), "zeroinitializer"}});
  return from_memory(s.type, loaded, body_, "g" + std::to_string(position));
}

/// `per_lane` may return a value to insert into the result vector of `result_type`
/// (ScatterInc); with an empty `result_type` the loop has no result. With `by_index`, one
/// iteration serves every remaining lane whose index equals the first one's: `per_lane`
/// gets their mask as its third argument (otherwise an empty string). At one lane per
/// packet the loop is a branch.
template <typename PerLane> std::string Lowering::lane_loop(uint32_t position, const std::string& mask,
                                                            const std::string& index64, const std::string& result_type,
                                                            bool by_index, PerLane per_lane) {
  if (width_ == 1) {  // one lane (a GPU thread): a branch around its update, no loop
    std::string before = block_, body = label(position, "lane"), done = label(position, "done");
    std::string run = instr("extractelement " + vec("i1") + " " + mask + ", i64 0");
    body_ << "  br i1 " << run << ", label %" << body << ", label %" << done << "\n";
    start_block(body);
    std::string idx = instr("extractelement " + vec("i64") + " " + index64 + ", i64 0");
    std::string value = per_lane("0", idx, by_index ? mask : "");
    std::string lanes =
        result_type.empty() ? "" : instr("insertelement " + result_type + " zeroinitializer, i32 " + value + ", i64 0");
    std::string body_end = block_;  // (per_lane may have opened blocks: a compare-exchange loop)
    body_ << "  br label %" << done << "\n";
    start_block(done);
    if (result_type.empty()) return "";
    std::string result = "%s" + std::to_string(position) + ".acc";
    body_ << "  " << result << " = phi " << result_type << " [ " << lanes << ", %" << body_end
          << " ], [ zeroinitializer, %" << before << " ]\n";
    return result;
  }
  std::string bits = instr("bitcast " + vec("i1") + " " + mask + " to i" + std::to_string(width_));
  std::string bits64 = width_ == 64 ? bits : instr("zext i" + std::to_string(width_) + " " + bits + " to i64");
  std::string before = block_, head = label(position, "head"), body = label(position, "lane"),
              done = label(position, "done");
  std::string p = "%s" + std::to_string(position);
  body_ << "  br label %" << head << "\n";
  start_block(head);
  std::string next = label(position, "next");
  body_ << "  " << p << ".m = phi i64 [ " << bits64 << ", %" << before << " ], [ " << p << ".mnext, %" << next
        << " ]\n";
  if (!result_type.empty())
    body_ << "  " << p << ".acc = phi " << result_type << " [ zeroinitializer, %" << before << " ], [ " << p
          << ".accnext, %" << next << " ]\n";
  body_ << "  " << p << ".none = icmp eq i64 " << p << ".m, 0\n";
  body_ << "  br i1 " << p << ".none, label %" << done << ", label %" << body << "\n";
  start_block(body);
  std::string lane = call("i64", "llvm.cttz.i64", {{"i64", p + ".m"}, {"i1", "true"}});
  std::string idx = instr("extractelement " + vec("i64") + " " + index64 + ", i64 " + lane);
  std::string group, kept;
  if (by_index) {
    std::string first = instr("insertelement " + vec("i64") + " poison, i64 " + idx + ", i64 0");
    std::string splat = instr("shufflevector " + vec("i64") + " " + first + ", " + vec("i64") + " poison, " +
                              vec("i32") + " zeroinitializer");
    std::string same = instr("icmp eq " + vec("i64") + " " + index64 + ", " + splat);
    group = instr("and " + vec("i1") + " " + same + ", " + mask);
    std::string group_bits = instr("bitcast " + vec("i1") + " " + group + " to i" + std::to_string(width_));
    if (width_ != 64) group_bits = instr("zext i" + std::to_string(width_) + " " + group_bits + " to i64");
    kept = instr("xor i64 " + group_bits + ", -1");
  } else {
    kept = instr("sub i64 " + p + ".m, 1");  // clears the lowest set bit
  }
  body_ << "  " << p << ".mnext = and i64 " << p << ".m, " << kept << "\n";
  std::string value = per_lane(lane, idx, group);
  body_ << "  br label %" << next << "\n";
  start_block(next);
  if (!result_type.empty())
    body_ << "  " << p << ".accnext = insertelement " << result_type << " " << p << ".acc, i32 " << value << ", i64 "
          << lane << "\n";
  body_ << "  br label %" << head << "\n";
  start_block(done);
  return result_type.empty() ? "" : p + ".acc";
}

std::string Lowering::packet_sum(VarType t, const std::string& values, const std::string& lanes) {
  std::string scalar = scalar_type(t), reduce = "llvm.vector.reduce." + std::string(is_float(t) ? "fadd." : "add.");
  // -0 is the neutral element of float addition (x + -0 = x, also for x = +0).
  std::string kept = instr("select " + vec("i1") + " " + lanes + ", " + vec(t) + " " + values + ", " + vec(t) + " " +
                           splat_const(scalar, is_float(t) ? "-0.0" : "0"));
  if (!is_float(t)) return call(scalar, reduce + vmangle(scalar), {{vec(t), kept}});
  // reassoc: a tree of additions rather than a chain of 16.
  declarations_.insert("declare " + scalar + " @" + reduce + vmangle(scalar) + "(" + scalar + ", " + vec(t) + ")");
  return instr("call reassoc " + scalar + " @" + reduce + vmangle(scalar) + "(" + scalar + " -0.0, " + vec(t) + " " +
               kept + ")");
}

void Lowering::scatter(uint32_t position, const KernelStatement& s) {
  const KernelStatement& buffer = form_.statements[s.operands[0]];
  std::string index64 = widen_index(arg(s, 2));
  std::string mask = checked_mask(position, buffer, arg(s, 3), arg(s, 2), index64);
  const VarType t = s.type;
  std::string mt = memory_type(t);
  auto reduce = ReduceOp(s.literal);
  if (reduce == ReduceOp::None) {
    std::string ptrs = addresses(buffer, t, arg(s, 2), index64);
    call("void", "llvm.masked.scatter." + vmangle(mt) + "." + vmangle("p0"),
         {{vec(mt), to_memory(t, arg(s, 1))},
          {vec("ptr"), ptrs},
          {"i32", std::to_string(type_size(t))},
          {vec("i1"), mask}});
    return;
  }
  const char* rmw = nullptr;  // none: a compare-exchange loop
  switch (reduce) {
    case ReduceOp::None:
    case ReduceOp::Mul: break;
    case ReduceOp::Add: rmw = is_float(t) ? "fadd" : "add"; break;
    case ReduceOp::Min: rmw = is_float(t) ? nullptr : is_signed_int(t) ? "min" : "umin"; break;
    case ReduceOp::Max: rmw = is_float(t) ? nullptr : is_signed_int(t) ? "max" : "umax"; break;
    case ReduceOp::And: rmw = "and"; break;
    case ReduceOp::Or: rmw = "or"; break;
  }
  std::string slot = std::to_string(buffer.input_slot);
  std::string values = arg(s, 1);
  // Additions go one index at a time: one atomic update adds the sum of every lane of the
  // packet that targets it (a film's samples of one pixel share a packet). Floats are
  // summed in a tree, so their result may differ in rounding from lane-by-lane atomics,
  // as it does between threads.
  bool by_index = reduce == ReduceOp::Add;
  lane_loop(position, mask, index64, "", by_index,
            [&](const std::string& lane, const std::string& idx, const std::string& group) {
              std::string ptr = instr("getelementptr " + mt + ", ptr %buf" + slot + ", i64 " + idx);
              std::string v = by_index ? packet_sum(t, values, group)
                                       : instr("extractelement " + vec(t) + " " + values + ", i64 " + lane);
              if (rmw)
                instr("atomicrmw " + std::string(rmw) + " ptr " + ptr + ", " + mt + " " + v + " monotonic, align " +
                      std::to_string(type_size(t)));
              else
                compare_exchange(position, t, ptr, [&](const std::string& old) { return reduced(reduce, t, old, v); });
              return std::string();
            });
}

std::string Lowering::reduced(ReduceOp reduce, VarType t, const std::string& old_value, const std::string& v) {
  std::string sc = scalar_type(t);
  if (reduce == ReduceOp::Mul)
    return instr(std::string(is_float(t) ? "fmul " : "mul ") + sc + " " + old_value + ", " + v);
  return float_min_max(reduce == ReduceOp::Min, sc, old_value, v);
}

/// Float min/max with the semantics of scalar_ops.h (LLVM's atomicrmw fmin leaves the tie
/// between zeros unspecified), and products (atomicrmw has no multiplication).
template <typename Update>
void Lowering::compare_exchange(uint32_t position, VarType t, const std::string& ptr, Update update) {
  const bool fp = is_float(t);
  std::string sc = scalar_type(t), it = type_size(t) == 4 ? "i32" : "i64";
  std::string align = std::to_string(type_size(t));
  std::string first = instr("load atomic " + it + ", ptr " + ptr + " monotonic, align " + align);
  std::string before = block_, retry = label(position, "cas"), done = label(position, "casdone");
  std::string p = "%s" + std::to_string(position);
  body_ << "  br label %" << retry << "\n";
  start_block(retry);
  body_ << "  " << p << ".old = phi " << it << " [ " << first << ", %" << before << " ], [ " << p << ".seen, %" << retry
        << " ]\n";
  std::string old_value = fp ? instr("bitcast " + it + " " + p + ".old to " + sc) : p + ".old";
  std::string updated = update(old_value);
  std::string updated_bits = fp ? instr("bitcast " + sc + " " + updated + " to " + it) : updated;
  std::string pair = instr("cmpxchg ptr " + ptr + ", " + it + " " + p + ".old, " + it + " " + updated_bits +
                           " monotonic monotonic, align " + align);
  body_ << "  " << p << ".seen = extractvalue { " << it << ", i1 } " << pair << ", 0\n";
  std::string swapped = instr("extractvalue { " + it + ", i1 } " + pair + ", 1");
  body_ << "  br i1 " << swapped << ", label %" << done << ", label %" << retry << "\n";
  start_block(done);
}

std::string Lowering::scatter_inc(uint32_t position, const KernelStatement& s) {
  const KernelStatement& buffer = form_.statements[s.operands[0]];
  std::string index64 = widen_index(arg(s, 1));
  std::string mask = checked_mask(position, buffer, arg(s, 2), arg(s, 1), index64);
  std::string slot = std::to_string(buffer.input_slot);
  return lane_loop(position, mask, index64, vec("i32"), /*by_index=*/false,
                   [&](const std::string&, const std::string& idx, const std::string&) {
                     std::string ptr = instr("getelementptr i32, ptr %buf" + slot + ", i64 " + idx);
                     return instr("atomicrmw add ptr " + ptr + ", i32 1 monotonic, align 4");
                   });
}

}  // namespace kiln::detail::lowering
