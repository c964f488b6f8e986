// Kernel form -> LLVM IR text. Each statement becomes one vector SSA value of
// form.packet_width lanes; every memory access is masked by the lanes still inside
// [start, end), so one loop body serves full packets and the tail. Edge-case semantics
// match src/ir/scalar_ops.h (the fuzzer checks it): guarded integer division, shifts that
// saturate, saturating float->int casts.
#include "backend/llvm/llvm_render.h"

#include <kiln/errors.h>

#include "backend/kernel_split.h"
#include "ir/op_info.h"

#include <algorithm>
#include <set>
#include <sstream>
#include <utility>
#include <vector>

namespace kiln::detail {
namespace {

/// Scalar LLVM type of a value in registers (Bool is i1).
const char* scalar_type(VarType t) {
  switch (t) {
    case VarType::Bool: return "i1";
    case VarType::Int32: case VarType::UInt32: return "i32";
    case VarType::Int64: case VarType::UInt64: return "i64";
    case VarType::Float32: return "float";
    case VarType::Float64: return "double";
  }
  return "?";
}
/// Scalar LLVM type of a value in memory (Bool is one byte).
const char* memory_type(VarType t) { return t == VarType::Bool ? "i8" : scalar_type(t); }
/// Suffix of overloaded intrinsic names ("f32", "i1", ...).
std::string mangle(const char* scalar) {
  std::string s = scalar;
  if (s == "float") return "f32";
  if (s == "double") return "f64";
  return s;
}
unsigned bit_width(VarType t) { return t == VarType::Bool ? 1 : unsigned(type_size(t) * 8); }

class Renderer {
 public:
  Renderer(const KernelForm& form, int vector_bits, uint32_t split_statements)
      : form_(form), width_(form.packet_width), vector_bits_(vector_bits), split_statements_(split_statements),
        names_(form.statements.size()) {}

  std::string render(const std::string& name) {
    find_value_uses();
    KernelSplit split = plan_kernel_split(form_, split_statements_, kMaxFrameBytes / (width_ * 8));
    entry_ << "entry:\n";
    for (uint32_t slot = 0; slot < form_.input_count + form_.output_count; ++slot) load_buffer(slot);
    splat(entry_, "end.v", "i64", "%end");
    block_ = "loop";
    body_ << "loop:\n";
    body_ << "  %i = phi i64 [ %start, %entry ], [ %i.next, %latch ]\n";
    lane_mask();
    body_ << "  %i.next = add i64 %i, " << width_ << "\n";
    if (split.pieces() > 1) call_pieces(name, split);
    else for (uint32_t i = 0; i < form_.statements.size(); ++i) emit(i);
    store_outputs();
    body_ << "latch:\n";
    body_ << "  %more = icmp ult i64 %i.next, %end\n";
    body_ << "  br i1 %more, label %loop, label %exit\nexit:\n";
    if (form_.output_count) {
      // Streaming stores are weakly ordered: make them visible before the launch completes.
      body_ << "  br i1 %stream, label %exit.fence, label %exit.return\nexit.fence:\n";
      body_ << "  fence seq_cst\n  br label %exit.return\nexit.return:\n";
    }
    end_function();
    entry_ << "  %stream = icmp ne i64 %stream.flag, 0\n";
    entry_ << "  br label %loop\n";

    std::ostringstream out;
    out << "; kiln kernel, " << width_ << " lanes\n";
    out << "define void @" << name
        << "(i64 %start, i64 %end, ptr noalias nocapture readonly %buffers, ptr noalias nocapture "
           "readonly %sizes, ptr noalias nocapture readonly %params, ptr %check, i64 %stream.flag) #0 {\n";
    out << entry_.str() << body_.str() << pieces_ << "\n";
    for (const std::string& d : declarations_) out << d << "\n";
    if (form_.output_count) out << "\n!0 = !{i32 1}\n";
    if (form_.checks) out << "!1 = !{!\"branch_weights\", i32 1, i32 1048575}\n";  // reports are rare
    out << "\nattributes #0 = { nounwind " << vector_width_attributes() << " }\n";
    if (!pieces_.empty()) out << "attributes #1 = { noinline nounwind " << vector_width_attributes() << " }\n";
    return out.str();
  }

 private:
  // ---- types and constants ----
  std::string vec(const std::string& scalar) const {
    return "<" + std::to_string(width_) + " x " + scalar + ">";
  }
  std::string vec(VarType t) const { return vec(scalar_type(t)); }
  std::string vmangle(const std::string& scalar) const {
    return "v" + std::to_string(width_) + mangle(scalar.c_str());
  }
  /// A vector constant with every lane `value` (LLVM constant syntax).
  std::string splat_const(const std::string& scalar, const std::string& value) const {
    std::string s = "<";
    for (uint32_t i = 0; i < width_; ++i) s += (i ? ", " : "") + scalar + " " + value;
    return s + ">";
  }
  std::string lane_offsets() const {
    std::string s = "<";
    for (uint32_t i = 0; i < width_; ++i) s += (i ? ", i64 " : "i64 ") + std::to_string(i);
    return s + ">";
  }
  /// Writes instructions that broadcast scalar SSA value `value` into vector `%tag`.
  void splat(std::ostringstream& out, const std::string& tag, const std::string& scalar,
             const std::string& value) {
    out << "  %" << tag << ".ins = insertelement " << vec(scalar) << " poison, " << scalar << " "
        << value << ", i64 0\n";
    out << "  %" << tag << " = shufflevector " << vec(scalar) << " %" << tag << ".ins, "
        << vec(scalar) << " poison, " << vec("i32") << " zeroinitializer\n";
  }

  std::string vector_width_attributes() const {
    return "\"min-legal-vector-width\"=\"" + std::to_string(vector_bits_) + "\" \"prefer-vector-width\"=\"" +
           std::to_string(vector_bits_) + "\"";
  }
  void load_buffer(uint32_t slot) {
    entry_ << "  %buf.p" << slot << " = getelementptr inbounds ptr, ptr %buffers, i64 " << slot << "\n";
    entry_ << "  %buf" << slot << " = load ptr, ptr %buf.p" << slot << ", align 8\n";
  }
  /// %lane (the packet's lane indices) and %active (those below %end), from %i.
  void lane_mask() {
    splat(body_, "i.v", "i64", "%i");
    body_ << "  %lane = add " << vec("i64") << " %i.v, " << lane_offsets() << "\n";
    body_ << "  %active = icmp ult " << vec("i64") << " %lane, %end.v\n";
  }

  /// Returns from the function being rendered; a loop latch that saw Ctrl-C returns early.
  void end_function() {
    body_ << "  ret void\n";
    if (polls_interrupt_) body_ << "interrupted:\n  ret void\n";
    body_ << "}\n";
  }

  // ---- pieces of a long kernel (backend/kernel_split.h) ----
  static constexpr const char* kPieceArguments =
      "i64 %i, i64 %end, ptr %buffers, ptr %sizes, ptr %params, ptr %check, ptr %frame";

  /// Renders each piece as a function of its own (into pieces_) and calls them in order;
  /// then loads the outputs for store_outputs().
  void call_pieces(const std::string& name, const KernelSplit& split) {
    entry_ << "  %frame = alloca [" << split.frame_slots * width_ * 8 << " x i8], align 64\n";
    for (uint32_t k = 0; k < split.pieces(); ++k) {
      std::string symbol = name + ".p" + std::to_string(k);
      render_piece(symbol, split, k);
      body_ << "  call void @" << symbol << "(" << kPieceArguments << ")\n";
    }
    import_values(split, split.imports.back());
  }

  /// `define internal void @symbol(i64 %i, i64 %end, ...)`: piece k's statements for the
  /// packet at %i, with the values it imports at the top and those it exports at the end.
  void render_piece(const std::string& symbol, const KernelSplit& split, uint32_t k) {
    std::ostringstream kernel_entry, kernel_body;
    std::swap(entry_, kernel_entry);
    std::swap(body_, kernel_body);
    bool kernel_polls_interrupt = std::exchange(polls_interrupt_, false);
    entry_ << "entry:\n";
    for (uint32_t slot : split.input_slots[k]) load_buffer(slot);
    splat(entry_, "end.v", "i64", "%end");
    block_ = "body";
    body_ << "body:\n";
    lane_mask();
    import_values(split, split.imports[k]);
    uint32_t end = k + 1 < split.pieces() ? split.starts[k + 1] : uint32_t(form_.statements.size());
    for (uint32_t i = split.starts[k]; i < end; ++i) emit(i);
    for (uint32_t p : split.exports[k]) {
      std::string address = frame_address(split, p);
      body_ << "  store " << vec(form_.statements[p].type) << " " << names_[p] << ", ptr " << address << ", align "
            << frame_alignment() << "\n";
    }
    end_function();
    pieces_ += "\ndefine internal void @" + symbol +
               "(i64 %i, i64 %end, ptr noalias nocapture readonly %buffers, ptr noalias nocapture readonly %sizes, "
               "ptr noalias nocapture readonly %params, ptr %check, ptr noalias nocapture %frame) #1 {\n" +
               entry_.str() + "  br label %body\n" + body_.str();
    std::swap(entry_, kernel_entry);
    std::swap(body_, kernel_body);
    polls_interrupt_ = kernel_polls_interrupt;
    block_ = "loop";
  }

  /// Makes the values of `positions` (defined in earlier pieces) available here: leaves
  /// are recomputed, the others loaded from the frame.
  void import_values(const KernelSplit& split, const std::vector<uint32_t>& positions) {
    for (uint32_t p : positions) {
      if (is_leaf(form_.statements[p].op)) emit(p);
      else names_[p] = instr("load " + vec(form_.statements[p].type) + ", ptr " + frame_address(split, p) +
                             ", align " + std::to_string(frame_alignment()));
    }
  }
  std::string frame_address(const KernelSplit& split, uint32_t position) {
    uint64_t offset = uint64_t(split.frame_slot[position]) * width_ * 8;
    return instr("getelementptr inbounds i8, ptr %frame, i64 " + std::to_string(offset));
  }
  uint32_t frame_alignment() const { return std::min(64u, width_ * 8); }

  std::string temp() { return "%t" + std::to_string(next_temp_++); }
  std::string label(uint32_t position, const char* what) {
    return "s" + std::to_string(position) + "." + what;
  }
  void start_block(const std::string& name) {
    body_ << name << ":\n";
    block_ = name;
  }

  /// Calls an intrinsic, declaring it on first use.
  std::string call(const std::string& result_type, const std::string& intrinsic,
                   const std::vector<std::pair<std::string, std::string>>& args) {
    std::string decl = "declare " + result_type + " @" + intrinsic + "(";
    std::string use = "call " + result_type + " @" + intrinsic + "(";
    for (size_t k = 0; k < args.size(); ++k) {
      decl += (k ? ", " : "") + args[k].first;
      use += (k ? ", " : "") + args[k].first + " " + args[k].second;
    }
    declarations_.insert(decl + ")");
    if (result_type == "void") {
      body_ << "  " << use << ")\n";
      return "";
    }
    std::string t = temp();
    body_ << "  " << t << " = " << use << ")\n";
    return t;
  }
  std::string instr(const std::string& text) {
    std::string t = temp();
    body_ << "  " << t << " = " << text << "\n";
    return t;
  }

  // ---- statements ----
  void find_value_uses() {
    value_used_.assign(form_.statements.size(), false);
    for (const KernelStatement& s : form_.statements) {
      bool memory = op_has_buffer_operand(s.op);
      for (int k = memory ? 1 : 0; k < op_arity(s.op); ++k) value_used_[s.operands[k]] = true;
    }
    for (uint32_t i = 0; i < form_.statements.size(); ++i)
      if (form_.statements[i].output_slot != kNoSlot) value_used_[i] = true;
  }

  const std::string& arg(const KernelStatement& s, int k) const { return names_[s.operands[k]]; }

  void emit(uint32_t position) {
    const KernelStatement& s = form_.statements[position];
    std::string& out = names_[position];
    const VarType t = s.type;
    const std::string vt = vec(t);
    const bool fp = is_float(t), sgn = is_signed_int(t);
    switch (s.op) {
      case Op::Literal: out = literal(position, s); return;
      case Op::Param: out = parameter(position, s); return;
      case Op::Counter: out = instr("trunc " + vec("i64") + " %lane to " + vec("i32")); return;
      case Op::Data: if (value_used_[position]) out = load_input(position, s); return;
      case Op::Add: out = instr(std::string(fp ? "fadd " : "add ") + vt + " " + arg(s, 0) + ", " + arg(s, 1)); return;
      case Op::Sub: out = instr(std::string(fp ? "fsub " : "sub ") + vt + " " + arg(s, 0) + ", " + arg(s, 1)); return;
      case Op::Mul: out = instr(std::string(fp ? "fmul " : "mul ") + vt + " " + arg(s, 0) + ", " + arg(s, 1)); return;
      case Op::Div: out = fp ? instr("fdiv " + vt + " " + arg(s, 0) + ", " + arg(s, 1)) : int_divide(s); return;
      case Op::Mod: out = fp ? float_remainder(position, t, arg(s, 0), arg(s, 1)) : int_divide(s); return;
      case Op::Min:
      case Op::Max: {
        bool is_min = s.op == Op::Min;
        if (fp) {
          out = float_min_max(is_min, vt, arg(s, 0), arg(s, 1));
          return;
        }
        std::string fn = sgn ? (is_min ? "smin" : "smax") : (is_min ? "umin" : "umax");
        out = call(vt, "llvm." + fn + "." + vmangle(scalar_type(t)), {{vt, arg(s, 0)}, {vt, arg(s, 1)}});
        return;
      }
      case Op::And: out = instr("and " + vt + " " + arg(s, 0) + ", " + arg(s, 1)); return;
      case Op::Or: out = instr("or " + vt + " " + arg(s, 0) + ", " + arg(s, 1)); return;
      case Op::Xor: out = instr("xor " + vt + " " + arg(s, 0) + ", " + arg(s, 1)); return;
      case Op::Not: out = instr("xor " + vt + " " + arg(s, 0) + ", " + splat_const(scalar_type(t), t == VarType::Bool ? "true" : "-1")); return;
      case Op::Neg: out = fp ? instr("fneg " + vt + " " + arg(s, 0)) : instr("sub " + vt + " zeroinitializer, " + arg(s, 0)); return;
      case Op::Abs:
        if (fp) out = call(vt, "llvm.fabs." + vmangle(scalar_type(t)), {{vt, arg(s, 0)}});
        else if (sgn) out = call(vt, "llvm.abs." + vmangle(scalar_type(t)), {{vt, arg(s, 0)}, {"i1", "false"}});
        else out = arg(s, 0);
        return;
      case Op::Sqrt: out = call(vt, "llvm.sqrt." + vmangle(scalar_type(t)), {{vt, arg(s, 0)}}); return;
      case Op::Rcp: out = instr("fdiv " + vt + " " + splat_const(scalar_type(t), "1.0") + ", " + arg(s, 0)); return;
      case Op::Rsqrt: {
        std::string root = call(vt, "llvm.sqrt." + vmangle(scalar_type(t)), {{vt, arg(s, 0)}});
        out = instr("fdiv " + vt + " " + splat_const(scalar_type(t), "1.0") + ", " + root);
        return;
      }
      case Op::Floor: out = call(vt, "llvm.floor." + vmangle(scalar_type(t)), {{vt, arg(s, 0)}}); return;
      case Op::Ceil: out = call(vt, "llvm.ceil." + vmangle(scalar_type(t)), {{vt, arg(s, 0)}}); return;
      case Op::Trunc: out = call(vt, "llvm.trunc." + vmangle(scalar_type(t)), {{vt, arg(s, 0)}}); return;
      case Op::Round: out = call(vt, "llvm.roundeven." + vmangle(scalar_type(t)), {{vt, arg(s, 0)}}); return;
      case Op::Shl:
      case Op::Shr: out = shift(s); return;
      case Op::Eq: case Op::Ne: case Op::Lt: case Op::Le: case Op::Gt: case Op::Ge: out = compare(s); return;
      case Op::Fma:
        if (fp) out = call(vt, "llvm.fma." + vmangle(scalar_type(t)), {{vt, arg(s, 0)}, {vt, arg(s, 1)}, {vt, arg(s, 2)}});
        else out = instr("add " + vt + " " + instr("mul " + vt + " " + arg(s, 0) + ", " + arg(s, 1)) + ", " + arg(s, 2));
        return;
      case Op::Select: out = instr("select " + vec("i1") + " " + arg(s, 0) + ", " + vt + " " + arg(s, 1) + ", " + vt + " " + arg(s, 2)); return;
      case Op::Cast: out = cast(s); return;
      case Op::Bitcast: out = instr("bitcast " + vec(s.operand_type) + " " + arg(s, 0) + " to " + vt); return;
      case Op::Gather: out = gather(position, s); return;
      case Op::Scatter: scatter(position, s); return;
      case Op::ScatterInc: out = scatter_inc(position, s); return;
      case Op::LoopBegin: loop_begin(position, s); return;
      case Op::LoopPhi: out = loop_phi(position, s); return;
      case Op::LoopCond: out = loop_cond(s); return;
      case Op::LoopUpdate: loop_update(s); return;
      case Op::LoopEnd: loop_end(); return;
      case Op::Loop: case Op::LoopResult: break;  // trace only, never in a form
    }
    throw InternalError(std::string("kiln: LLVM backend: no lowering for ") + op_name(s.op));
  }

  // ---- symbolic loops: LoopBegin k, phis, condition, LoopCond c, body, updates, LoopEnd ----
  // Blocks L<k>.pre -> L<k>.head (phis, condition; exits when no lane is active) ->
  // body -> L<k>.latch -> L<k>.head, then L<k>.exit. Each lane keeps its last state once
  // its condition fails (the updates select on LoopCond), and stays inactive (the mask phi).
  // A loop that runs once (a guarded branch or call) has no back edge: the body is skipped
  // when no lane is active, and its results are phis in L<k>.exit.
  struct OpenLoop {
    uint32_t begin;
    bool once;
    std::string active;       ///< the LoopCond value: lanes active in this iteration
    std::string head_end;     ///< once: the block that branches around the body
    std::vector<std::pair<uint32_t, std::string>> updates;  ///< once: (phi, new value)
  };

  void loop_begin(uint32_t k, const KernelStatement& s) {
    std::string l = "%L" + std::to_string(k);
    loops_.push_back(OpenLoop{k, s.literal != 0, "", "", {}});
    body_ << "  br label " << l << ".pre\n";
    start_block("L" + std::to_string(k) + ".pre");
    body_ << "  br label " << l << ".head\n";
    start_block("L" + std::to_string(k) + ".head");
    if (!loops_.back().once)
      body_ << "  " << l << ".mask = phi " << vec("i1") << " [ %active, " << l << ".pre ], [ " << l
            << ".active, " << l << ".latch ]\n";
  }

  std::string loop_phi(uint32_t position, const KernelStatement& s) {
    std::string l = "%L" + std::to_string(loops_.back().begin), name = "%s" + std::to_string(position);
    if (!loops_.back().once)  // (a run-once loop defines it at its exit)
      body_ << "  " << name << " = phi " << vec(s.type) << " [ " << arg(s, 0) << ", " << l << ".pre ], [ "
            << name << ".next, " << l << ".latch ]\n";
    return name;
  }

  std::string loop_cond(const KernelStatement& s) {
    OpenLoop& loop = loops_.back();
    std::string l = "%L" + std::to_string(loop.begin);
    loop.active = l + ".active";
    body_ << "  " << loop.active << " = and " << vec("i1") << " " << (loop.once ? "%active" : l + ".mask") << ", "
          << arg(s, 0) << "\n";
    std::string any = call("i1", "llvm.vector.reduce.or." + vmangle("i1"), {{vec("i1"), loop.active}});
    loop.head_end = block_;
    body_ << "  br i1 " << any << ", label " << l << ".body, label " << l << ".exit\n";
    start_block("L" + std::to_string(loop.begin) + ".body");
    return loop.active;
  }

  void loop_update(const KernelStatement& s) {
    OpenLoop& loop = loops_.back();
    if (loop.once) {
      loop.updates.emplace_back(s.operands[0], arg(s, 1));
      return;
    }
    std::string vt = vec(s.type);
    body_ << "  " << names_[s.operands[0]] << ".next = select " << vec("i1") << " " << loop.active << ", " << vt
          << " " << arg(s, 1) << ", " << vt << " " << arg(s, 0) << "\n";
  }

  void loop_end() {
    OpenLoop loop = loops_.back();
    loops_.pop_back();
    std::string l = "%L" + std::to_string(loop.begin);
    if (loop.once) {
      std::string body_end = block_;
      body_ << "  br label " << l << ".exit\n";
      start_block("L" + std::to_string(loop.begin) + ".exit");
      for (const auto& [phi, value] : loop.updates) {
        const KernelStatement& p = form_.statements[phi];
        body_ << "  " << names_[phi] << " = phi " << vec(p.type) << " [ " << value << ", %" << body_end << " ], [ "
              << names_[p.operands[0]] << ", %" << loop.head_end << " ]\n";
      }
      return;
    }
    body_ << "  br label " << l << ".latch\n";
    start_block("L" + std::to_string(loop.begin) + ".latch");
    // Ctrl-C: CheckState::interrupt, polled once per iteration, leaves the kernel.
    if (!polls_interrupt_) {
      entry_ << "  %interrupt.p = getelementptr inbounds ptr, ptr %check, i64 1\n";
      entry_ << "  %interrupt = load ptr, ptr %interrupt.p, align 8\n";
      polls_interrupt_ = true;
    }
    body_ << "  " << l << ".stop = load atomic i32, ptr %interrupt monotonic, align 4\n";
    body_ << "  " << l << ".go = icmp eq i32 " << l << ".stop, 0\n";
    body_ << "  br i1 " << l << ".go, label " << l << ".head, label %interrupted\n";
    start_block("L" + std::to_string(loop.begin) + ".exit");
  }

  /// C's fmod, exactly. With q = trunc(x / y), x - q y is one fma and exact while
  /// |x / y| < 2^(p-1): the remainder is a multiple of y's quantum below |y|. When x / y
  /// rounded up to the next integer the result has the wrong sign and |y| is added back
  /// (exact too); the sign of x is copied last (zeros included). Lanes outside that range
  /// (huge quotients, zero or infinite divisors, infinite or NaN operands) take LLVM's frem
  /// (a libm call per lane), only in vectors that have such a lane.
  std::string float_remainder(uint32_t position, VarType t, const std::string& x, const std::string& y) {
    std::string sc = scalar_type(t), vt = vec(t), m = vmangle(sc), mask = vec("i1");
    std::string quotient = instr("fdiv " + vt + " " + x + ", " + y);
    std::string q = call(vt, "llvm.trunc." + m, {{vt, quotient}});
    std::string r = call(vt, "llvm.fma." + m, {{vt, instr("fneg " + vt + " " + q)}, {vt, y}, {vt, x}});
    std::string nonzero = instr("fcmp one " + vt + " " + r + ", zeroinitializer");
    std::string r_negative = instr("fcmp olt " + vt + " " + r + ", zeroinitializer");
    std::string x_negative = instr("fcmp olt " + vt + " " + x + ", zeroinitializer");
    std::string wrong_sign = instr("and " + mask + " " + nonzero + ", " + instr("xor " + mask + " " + r_negative + ", " + x_negative));
    std::string abs_y = call(vt, "llvm.fabs." + m, {{vt, y}});
    std::string toward_x = call(vt, "llvm.copysign." + m, {{vt, abs_y}, {vt, x}});
    std::string fixed = instr("select " + mask + " " + wrong_sign + ", " + vt + " " + instr("fadd " + vt + " " + r + ", " + toward_x) + ", " + vt + " " + r);
    std::string fast_value = call(vt, "llvm.copysign." + m, {{vt, fixed}, {vt, x}});
    std::string limit = splat_const(sc, t == VarType::Float32 ? "8388608.0" : "4503599627370496.0");
    std::string small = instr("fcmp olt " + vt + " " + call(vt, "llvm.fabs." + m, {{vt, quotient}}) + ", " + limit);
    std::string finite_y = instr("fcmp olt " + vt + " " + abs_y + ", " + splat_const(sc, "0x7FF0000000000000"));
    std::string fast = instr("and " + mask + " " + small + ", " + finite_y);
    std::string slow = instr("xor " + mask + " " + fast + ", " + splat_const("i1", "true"));
    std::string any_slow = call("i1", "llvm.vector.reduce.or." + vmangle("i1"), {{mask, slow}});
    std::string before = block_, exact = label(position, "frem"), done = label(position, "fremdone");
    body_ << "  br i1 " << any_slow << ", label %" << exact << ", label %" << done << "\n";
    start_block(exact);
    std::string remainder = instr("frem " + vt + " " + x + ", " + y);
    std::string merged = instr("select " + mask + " " + fast + ", " + vt + " " + fast_value + ", " + vt + " " + remainder);
    body_ << "  br label %" << done << "\n";
    start_block(done);
    return instr("phi " + vt + " [ " + fast_value + ", %" + before + " ], [ " + merged + ", %" + exact + " ]");
  }

  /// (a < b || isnan(b)) ? a : b (and > for max): IEEE minNum with the tie between zeros
  /// defined, as in scalar_ops.h. `type` may be a vector or a scalar type.
  std::string float_min_max(bool is_min, const std::string& type, const std::string& a, const std::string& b) {
    std::string mask_type = type[0] == '<' ? vec("i1") : "i1";
    std::string better = instr(std::string("fcmp ") + (is_min ? "olt " : "ogt ") + type + " " + a + ", " + b);
    std::string b_nan = instr("fcmp uno " + type + " " + b + ", " + b);
    std::string take_a = instr("or " + mask_type + " " + better + ", " + b_nan);
    return instr("select " + mask_type + " " + take_a + ", " + type + " " + a + ", " + type + " " + b);
  }

  std::string literal(uint32_t position, const KernelStatement& s) {
    std::string scalar = scalar_type(s.type);
    std::string tag = "lit" + std::to_string(position);
    std::string value;
    if (s.type == VarType::Bool) {
      value = s.literal ? "true" : "false";
    } else if (is_float(s.type)) {
      const char* int_type = s.type == VarType::Float32 ? "i32" : "i64";
      entry_ << "  %" << tag << ".bits = bitcast " << int_type << " " << int64_t(s.type == VarType::Float32 ? int64_t(int32_t(uint32_t(s.literal))) : int64_t(s.literal))
             << " to " << scalar << "\n";
      value = "%" + tag + ".bits";
    } else {
      value = std::to_string(s.type == VarType::Int32 || s.type == VarType::UInt32 ? int64_t(int32_t(uint32_t(s.literal))) : int64_t(s.literal));
    }
    splat(entry_, tag, scalar, value);
    return "%" + tag;
  }

  /// A parameter: 64 bits read once from the parameter block, narrowed, and broadcast.
  std::string parameter(uint32_t position, const KernelStatement& s) {
    std::string scalar = scalar_type(s.type);
    std::string tag = "par" + std::to_string(position);
    entry_ << "  %" << tag << ".p = getelementptr inbounds i64, ptr %params, i64 " << s.literal << "\n";
    entry_ << "  %" << tag << ".bits = load i64, ptr %" << tag << ".p, align 8\n";
    std::string value = "%" + tag + ".bits";
    if (s.type == VarType::Float64) {
      entry_ << "  %" << tag << ".v = bitcast i64 " << value << " to double\n";
      value = "%" + tag + ".v";
    } else if (s.type != VarType::Int64 && s.type != VarType::UInt64) {
      const char* narrow = s.type == VarType::Bool ? "i1" : "i32";
      entry_ << "  %" << tag << ".n = trunc i64 " << value << " to " << narrow << "\n";
      value = "%" + tag + ".n";
      if (s.type == VarType::Float32) {
        entry_ << "  %" << tag << ".v = bitcast i32 " << value << " to float\n";
        value = "%" + tag + ".v";
      }
    }
    splat(entry_, tag, scalar, value);
    return "%" + tag;
  }

  /// Converts a loaded memory vector (i8 for Bool) to its register form.
  std::string from_memory(VarType t, const std::string& v, std::ostringstream& out, const std::string& tag) {
    if (t != VarType::Bool) return v;
    out << "  %" << tag << ".b = icmp ne " << vec("i8") << " " << v << ", zeroinitializer\n";
    return "%" + tag + ".b";
  }

  std::string load_input(uint32_t position, const KernelStatement& s) {
    std::string slot = std::to_string(s.input_slot);
    std::string tag = "in" + std::to_string(position);
    if (s.broadcast) {
      entry_ << "  %" << tag << ".s = load " << memory_type(s.type) << ", ptr %buf" << slot << ", align " << type_size(s.type) << "\n";
      std::string scalar = "%" + tag + ".s";
      if (s.type == VarType::Bool) {
        entry_ << "  %" << tag << ".sb = icmp ne i8 " << scalar << ", 0\n";
        scalar = "%" + tag + ".sb";
      }
      splat(entry_, tag, scalar_type(s.type), scalar);
      return "%" + tag;
    }
    std::string mt = memory_type(s.type);
    std::string ptr = instr("getelementptr inbounds " + mt + ", ptr %buf" + slot + ", i64 %i");
    std::string loaded = call(vec(mt), "llvm.masked.load." + vmangle(mt) + ".p0",
                              {{"ptr", ptr}, {"i32", std::to_string(type_size(s.type))}, {vec("i1"), "%active"}, {vec(mt), "poison"}});
    return from_memory(s.type, loaded, body_, tag);
  }

  /// Register value -> memory form (Bool widened to i8).
  std::string to_memory(VarType t, const std::string& v) {
    if (t != VarType::Bool) return v;
    return instr("zext " + vec("i1") + " " + v + " to " + vec("i8"));
  }

  /// Stores the outputs of the packet. Full packets of a streaming launch (one whose output
  /// does not fit in the caches) use non-temporal stores, which skip reading the target
  /// lines first; other packets use masked stores. Blocks start at multiples of the packet
  /// width and output buffers are 64-byte aligned, so a full packet is aligned too.
  void store_outputs() {
    std::vector<uint32_t> outputs;
    for (uint32_t i = 0; i < form_.statements.size(); ++i)
      if (form_.statements[i].output_slot != kNoSlot) outputs.push_back(i);
    if (outputs.empty()) {
      body_ << "  br label %latch\n";
      return;
    }
    std::vector<std::pair<std::string, std::string>> targets;  // (memory value, pointer)
    for (uint32_t position : outputs) {
      const KernelStatement& s = form_.statements[position];
      std::string ptr = instr("getelementptr inbounds " + std::string(memory_type(s.type)) + ", ptr %buf" +
                              std::to_string(s.output_slot) + ", i64 %i");
      targets.emplace_back(to_memory(s.type, names_[position]), ptr);
    }
    body_ << "  %full = icmp ule i64 %i.next, %end\n";
    body_ << "  %streaming = and i1 %full, %stream\n";
    body_ << "  br i1 %streaming, label %store.stream, label %store.masked\n";
    start_block("store.stream");
    for (size_t k = 0; k < outputs.size(); ++k) {
      VarType t = form_.statements[outputs[k]].type;
      size_t align = std::min<size_t>(64, type_size(t) * width_);
      body_ << "  store " << vec(memory_type(t)) << " " << targets[k].first << ", ptr " << targets[k].second
            << ", align " << align << ", !nontemporal !0\n";
    }
    body_ << "  br label %latch\n";
    start_block("store.masked");
    for (size_t k = 0; k < outputs.size(); ++k) {
      VarType t = form_.statements[outputs[k]].type;
      std::string mt = memory_type(t);
      call("void", "llvm.masked.store." + vmangle(mt) + ".p0",
           {{vec(mt), targets[k].first}, {"ptr", targets[k].second}, {"i32", std::to_string(type_size(t))},
            {vec("i1"), "%active"}});
    }
    body_ << "  br label %latch\n";
  }

  /// True when the statement's value is the same on every lane of a launch: a parameter
  /// (a literal generalized into the launch's parameter block) or a one-element input.
  bool uniform(uint32_t position) const {
    const KernelStatement& s = form_.statements[position];
    return s.op == Op::Param || (s.op == Op::Data && s.broadcast);
  }

  /// n / d (or n % d) for UInt32 lanes whose divisor d ≥ 1 is the same on every lane but
  /// unknown to LLVM (index arithmetic whose extents became launch parameters): vector
  /// integer division is scalarized, so divide by multiplying instead (Granlund and
  /// Montgomery, "Division by invariant integers using multiplication", 1994, fig. 4.1):
  ///   l = ceil(log2 d), m = floor(2^32 (2^l - d) / d) + 1, t = mulhi(m, n),
  ///   q = (t + ((n - t) >> min(l, 1))) >> max(l - 1, 0).
  /// m and the shifts depend on d only, so LICM computes them once per launch.
  std::string invariant_divide(const std::string& n, const std::string& d, bool quotient) {
    const std::string v32 = vec("i32"), v64 = vec("i64");
    std::string ctlz = call(v32, "llvm.ctlz." + vmangle("i32"),
                            {{v32, instr("sub " + v32 + " " + d + ", " + splat_const("i32", "1"))}, {"i1", "false"}});
    std::string l = instr("sub " + v32 + " " + splat_const("i32", "32") + ", " + ctlz);
    std::string d64 = instr("zext " + v32 + " " + d + " to " + v64), l64 = instr("zext " + v32 + " " + l + " to " + v64);
    std::string pow = instr("shl " + v64 + " " + splat_const("i64", "1") + ", " + l64);
    std::string numerator = instr("shl " + v64 + " " + instr("sub " + v64 + " " + pow + ", " + d64) + ", " + splat_const("i64", "32"));
    std::string m = instr("add " + v64 + " " + instr("udiv " + v64 + " " + numerator + ", " + d64) + ", " + splat_const("i64", "1"));
    std::string product = instr("mul " + v64 + " " + m + ", " + instr("zext " + v32 + " " + n + " to " + v64));
    std::string t = instr("trunc " + v64 + " " + instr("lshr " + v64 + " " + product + ", " + splat_const("i64", "32")) + " to " + v32);
    std::string sh1 = call(v32, "llvm.umin." + vmangle("i32"), {{v32, l}, {v32, splat_const("i32", "1")}});
    std::string sh2 = instr("sub " + v32 + " " + l + ", " + sh1);
    std::string half = instr("lshr " + v32 + " " + instr("sub " + v32 + " " + n + ", " + t) + ", " + sh1);
    std::string q = instr("lshr " + v32 + " " + instr("add " + v32 + " " + t + ", " + half) + ", " + sh2);
    if (quotient) return q;
    return instr("sub " + v32 + " " + n + ", " + instr("mul " + v32 + " " + q + ", " + d));
  }

  std::string int_divide(const KernelStatement& s) {
    const VarType t = s.type;
    const std::string vt = vec(t), sc = scalar_type(t);
    const bool sgn = is_signed_int(t);
    std::string zero = instr("icmp eq " + vt + " " + arg(s, 1) + ", zeroinitializer");
    std::string unsafe = zero;
    if (sgn) {
      std::string min_value = t == VarType::Int32 ? "-2147483648" : "-9223372036854775808";
      std::string is_min = instr("icmp eq " + vt + " " + arg(s, 0) + ", " + splat_const(sc, min_value));
      std::string is_m1 = instr("icmp eq " + vt + " " + arg(s, 1) + ", " + splat_const(sc, "-1"));
      unsafe = instr("or " + vec("i1") + " " + zero + ", " + instr("and " + vec("i1") + " " + is_min + ", " + is_m1));
    }
    std::string divisor = instr("select " + vec("i1") + " " + unsafe + ", " + vt + " " + splat_const(sc, "1") + ", " + vt + " " + arg(s, 1));
    bool div = s.op == Op::Div;
    std::string q = t == VarType::UInt32 && uniform(s.operands[1])
                        ? invariant_divide(arg(s, 0), divisor, div)
                        : instr(std::string(div ? (sgn ? "sdiv " : "udiv ") : (sgn ? "srem " : "urem ")) + vt + " " +
                                arg(s, 0) + ", " + divisor);
    // x / 0 == 0 and x % 0 == x; MIN / -1 == MIN / 1 and MIN % -1 == MIN % 1 == 0 already.
    return instr("select " + vec("i1") + " " + zero + ", " + vt + " " + (div ? "zeroinitializer" : arg(s, 0)) + ", " + vt + " " + q);
  }

  std::string shift(const KernelStatement& s) {
    const VarType t = s.type;
    const std::string vt = vec(t), sc = scalar_type(t);
    std::string bits = std::to_string(bit_width(t));
    if (s.op == Op::Shr && is_signed_int(t)) {
      std::string count = call(vt, "llvm.umin." + vmangle(sc), {{vt, arg(s, 1)}, {vt, splat_const(sc, std::to_string(bit_width(t) - 1))}});
      return instr("ashr " + vt + " " + arg(s, 0) + ", " + count);
    }
    std::string too_far = instr("icmp uge " + vt + " " + arg(s, 1) + ", " + splat_const(sc, bits));
    std::string shifted = instr(std::string(s.op == Op::Shl ? "shl " : "lshr ") + vt + " " + arg(s, 0) + ", " + arg(s, 1));
    return instr("select " + vec("i1") + " " + too_far + ", " + vt + " zeroinitializer, " + vt + " " + shifted);
  }

  std::string compare(const KernelStatement& s) {
    const VarType t = s.operand_type;
    static const char* fcmp[] = {"oeq", "une", "olt", "ole", "ogt", "oge"};
    static const char* icmp_signed[] = {"eq", "ne", "slt", "sle", "sgt", "sge"};
    static const char* icmp_unsigned[] = {"eq", "ne", "ult", "ule", "ugt", "uge"};
    int k = int(s.op) - int(Op::Eq);
    std::string pred = is_float(t) ? fcmp[k] : is_signed_int(t) ? icmp_signed[k] : icmp_unsigned[k];
    return instr(std::string(is_float(t) ? "fcmp " : "icmp ") + pred + " " + vec(t) + " " + arg(s, 0) + ", " + arg(s, 1));
  }

  std::string cast(const KernelStatement& s) {
    const VarType from = s.operand_type, to = s.type;
    const std::string a = arg(s, 0), vf = vec(from), vt = vec(to);
    if (to == VarType::Bool)
      return instr(std::string(is_float(from) ? "fcmp une " : "icmp ne ") + vf + " " + a + ", zeroinitializer");
    if (from == VarType::Bool)
      return instr(std::string(is_float(to) ? "uitofp " : "zext ") + vf + " " + a + " to " + vt);
    if (is_int(from) && is_int(to)) {
      if (bit_width(from) == bit_width(to)) return a;
      if (bit_width(from) > bit_width(to)) return instr("trunc " + vf + " " + a + " to " + vt);
      return instr(std::string(is_signed_int(from) ? "sext " : "zext ") + vf + " " + a + " to " + vt);
    }
    if (is_int(from)) return instr(std::string(is_signed_int(from) ? "sitofp " : "uitofp ") + vf + " " + a + " to " + vt);
    if (is_int(to)) {
      std::string fn = std::string(is_signed_int(to) ? "llvm.fptosi.sat." : "llvm.fptoui.sat.") +
                       vmangle(scalar_type(to)) + "." + vmangle(scalar_type(from));
      return call(vt, fn, {{vf, a}});
    }
    if (from == to) return a;
    return instr(std::string(bit_width(from) < bit_width(to) ? "fpext " : "fptrunc ") + vf + " " + a + " to " + vt);
  }

  /// Lane addresses into the buffer of statement `buffer` at UInt32 indices `index`.
  std::string addresses(const KernelStatement& buffer, VarType t, const std::string& index64) {
    return instr("getelementptr " + std::string(memory_type(t)) + ", ptr %buf" + std::to_string(buffer.input_slot) + ", " + vec("i64") + " " + index64);
  }

  /// The active mask of a memory access without the lanes whose index is out of range, so
  /// that they read 0 or write nothing: a bad index never touches memory, in fast mode too
  /// (a compare and an and). Checked mode also reports them (a branch not taken by correct
  /// programs, which costs gathers 5-10%).
  /// The UInt32 indices `index` are compared with the buffer's last index, computed once per
  /// call in the entry block (a 32-bit compare: buffers of 2^32 or more elements take every
  /// index; an empty one none).
  std::string checked_mask(uint32_t position, const KernelStatement& buffer, const std::string& mask,
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
    std::string fn = instr("load ptr, ptr %check, align 8");
    body_ << "  call void " << fn << "(ptr %check, i32 " << position << ", i64 " << bad_index << ", i64 " << size
          << ", i64 " << lanes << ")\n";
    body_ << "  br label %" << resume << "\n";
    start_block(resume);
    return kept;
  }

  std::string widen_index(const std::string& index) {
    return instr("zext " + vec("i32") + " " + index + " to " + vec("i64"));
  }

  std::string gather(uint32_t position, const KernelStatement& s) {
    const KernelStatement& buffer = form_.statements[s.operands[0]];
    std::string index64 = widen_index(arg(s, 1));
    std::string mask = checked_mask(position, buffer, arg(s, 2), arg(s, 1), index64);
    std::string ptrs = addresses(buffer, s.type, index64);
    std::string mt = memory_type(s.type);
    std::string loaded = call(vec(mt), "llvm.masked.gather." + vmangle(mt) + "." + vmangle("p0"),
                              {{vec("ptr"), ptrs}, {"i32", std::to_string(type_size(s.type))}, {vec("i1"), mask}, {vec(mt), "zeroinitializer"}});
    return from_memory(s.type, loaded, body_, "g" + std::to_string(position));
  }

  /// Emits a loop over the set lanes of `mask`; `per_lane(lane, index64)` writes its body
  /// and may return a value to insert into the result vector (ScatterInc).
  template <typename PerLane>
  std::string lane_loop(uint32_t position, const std::string& mask, const std::string& index64,
                        const std::string& result_type, PerLane per_lane) {
    std::string bits = instr("bitcast " + vec("i1") + " " + mask + " to i" + std::to_string(width_));
    std::string bits64 = width_ == 64 ? bits : instr("zext i" + std::to_string(width_) + " " + bits + " to i64");
    std::string before = block_, head = label(position, "head"), body = label(position, "lane"), done = label(position, "done");
    std::string p = "%s" + std::to_string(position);
    body_ << "  br label %" << head << "\n";
    start_block(head);
    std::string next = label(position, "next");
    body_ << "  " << p << ".m = phi i64 [ " << bits64 << ", %" << before << " ], [ " << p << ".mnext, %" << next << " ]\n";
    if (!result_type.empty())
      body_ << "  " << p << ".acc = phi " << result_type << " [ zeroinitializer, %" << before << " ], [ " << p << ".accnext, %" << next << " ]\n";
    body_ << "  " << p << ".none = icmp eq i64 " << p << ".m, 0\n";
    body_ << "  br i1 " << p << ".none, label %" << done << ", label %" << body << "\n";
    start_block(body);
    std::string lane = call("i64", "llvm.cttz.i64", {{"i64", p + ".m"}, {"i1", "true"}});
    std::string lower = instr("sub i64 " + p + ".m, 1");
    body_ << "  " << p << ".mnext = and i64 " << p << ".m, " << lower << "\n";
    std::string idx = instr("extractelement " + vec("i64") + " " + index64 + ", i64 " + lane);
    std::string value = per_lane(lane, idx);
    body_ << "  br label %" << next << "\n";
    start_block(next);
    if (!result_type.empty())
      body_ << "  " << p << ".accnext = insertelement " << result_type << " " << p << ".acc, i32 " << value << ", i64 " << lane << "\n";
    body_ << "  br label %" << head << "\n";
    start_block(done);
    return result_type.empty() ? "" : p + ".acc";
  }

  void scatter(uint32_t position, const KernelStatement& s) {
    const KernelStatement& buffer = form_.statements[s.operands[0]];
    std::string index64 = widen_index(arg(s, 2));
    std::string mask = checked_mask(position, buffer, arg(s, 3), arg(s, 2), index64);
    const VarType t = s.type;
    std::string mt = memory_type(t);
    auto reduce = ReduceOp(s.literal);
    if (reduce == ReduceOp::None) {
      std::string ptrs = addresses(buffer, t, index64);
      call("void", "llvm.masked.scatter." + vmangle(mt) + "." + vmangle("p0"),
           {{vec(mt), to_memory(t, arg(s, 1))}, {vec("ptr"), ptrs}, {"i32", std::to_string(type_size(t))}, {vec("i1"), mask}});
      return;
    }
    const char* rmw = nullptr;  // none: a compare-exchange loop
    switch (reduce) {
      case ReduceOp::None: case ReduceOp::Mul: break;
      case ReduceOp::Add: rmw = is_float(t) ? "fadd" : "add"; break;
      case ReduceOp::Min: rmw = is_float(t) ? nullptr : is_signed_int(t) ? "min" : "umin"; break;
      case ReduceOp::Max: rmw = is_float(t) ? nullptr : is_signed_int(t) ? "max" : "umax"; break;
      case ReduceOp::And: rmw = "and"; break;
      case ReduceOp::Or: rmw = "or"; break;
    }
    std::string slot = std::to_string(buffer.input_slot);
    std::string values = arg(s, 1);
    lane_loop(position, mask, index64, "", [&](const std::string& lane, const std::string& idx) {
      std::string ptr = instr("getelementptr " + mt + ", ptr %buf" + slot + ", i64 " + idx);
      std::string v = instr("extractelement " + vec(t) + " " + values + ", i64 " + lane);
      if (rmw) instr("atomicrmw " + std::string(rmw) + " ptr " + ptr + ", " + mt + " " + v + " monotonic, align " + std::to_string(type_size(t)));
      else compare_exchange(position, reduce, t, ptr, v);
      return std::string();
    });
  }

  /// An atomic update by a compare-exchange loop: float min/max with the semantics of
  /// scalar_ops.h (LLVM's atomicrmw fmin leaves the tie between zeros unspecified), and
  /// products (atomicrmw has no multiplication).
  void compare_exchange(uint32_t position, ReduceOp reduce, VarType t, const std::string& ptr, const std::string& v) {
    const bool fp = is_float(t);
    std::string sc = scalar_type(t), it = type_size(t) == 4 ? "i32" : "i64";
    std::string align = std::to_string(type_size(t));
    std::string first = instr("load atomic " + it + ", ptr " + ptr + " monotonic, align " + align);
    std::string before = block_, retry = label(position, "cas"), done = label(position, "casdone");
    std::string p = "%s" + std::to_string(position);
    body_ << "  br label %" << retry << "\n";
    start_block(retry);
    body_ << "  " << p << ".old = phi " << it << " [ " << first << ", %" << before << " ], [ " << p << ".seen, %" << retry << " ]\n";
    std::string old_value = fp ? instr("bitcast " + it + " " + p + ".old to " + sc) : p + ".old";
    std::string updated = reduce == ReduceOp::Mul
                              ? instr(std::string(fp ? "fmul " : "mul ") + sc + " " + old_value + ", " + v)
                              : float_min_max(reduce == ReduceOp::Min, sc, old_value, v);
    std::string updated_bits = fp ? instr("bitcast " + sc + " " + updated + " to " + it) : updated;
    std::string pair = instr("cmpxchg ptr " + ptr + ", " + it + " " + p + ".old, " + it + " " + updated_bits + " monotonic monotonic, align " + align);
    body_ << "  " << p << ".seen = extractvalue { " << it << ", i1 } " << pair << ", 0\n";
    std::string swapped = instr("extractvalue { " + it + ", i1 } " + pair + ", 1");
    body_ << "  br i1 " << swapped << ", label %" << done << ", label %" << retry << "\n";
    start_block(done);
  }

  std::string scatter_inc(uint32_t position, const KernelStatement& s) {
    const KernelStatement& buffer = form_.statements[s.operands[0]];
    std::string index64 = widen_index(arg(s, 1));
    std::string mask = checked_mask(position, buffer, arg(s, 2), arg(s, 1), index64);
    std::string slot = std::to_string(buffer.input_slot);
    return lane_loop(position, mask, index64, vec("i32"), [&](const std::string&, const std::string& idx) {
      std::string ptr = instr("getelementptr i32, ptr %buf" + slot + ", i64 " + idx);
      return instr("atomicrmw add ptr " + ptr + ", i32 1 monotonic, align 4");
    });
  }

  /// Frames (values crossing pieces) above this size are not worth a split: the kernel
  /// compiles as one function instead (the frame lives on a worker thread's stack).
  static constexpr uint32_t kMaxFrameBytes = 256 * 1024;

  const KernelForm& form_;
  const uint32_t width_;
  const int vector_bits_;
  const uint32_t split_statements_;
  std::string pieces_;  ///< the functions of a split kernel's pieces
  std::vector<std::string> names_;
  std::vector<bool> value_used_;
  std::ostringstream entry_, body_;
  std::set<std::string> declarations_;
  std::string block_;
  std::vector<OpenLoop> loops_;  ///< loops whose LoopEnd is not emitted yet, innermost last
  bool polls_interrupt_ = false;  ///< a loop's latch reads CheckState::interrupt
  int next_temp_ = 0;
};

}  // namespace

std::string render_llvm_ir(const KernelForm& form, const std::string& name, int vector_bits,
                           uint32_t split_statements) {
  return Renderer(form, vector_bits, split_statements).render(name);
}

}  // namespace kiln::detail
