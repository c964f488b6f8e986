// Kernel form -> LLVM IR text: the entry to the lowering every LLVM target shares. Start
// reading here.
//
// Each statement becomes one vector SSA value of form.packet_width lanes (one lane on a
// GPU, where a thread runs one lane); every memory access is masked by the lanes still
// inside [start, end), so one body serves full packets and the tail. Edge-case semantics
// match src/ir/scalar_ops.h (the fuzzer checks it): guarded integer division, shifts that
// saturate, saturating float->int casts.
//
// lower_to_llvm_ir() below runs one lowering::Lowering (lowering.h), whose members are
// defined by responsibility:
//   lower.cpp             this entry, and the text the other files write with: vector
//                         types, constants, instructions, intrinsic calls;
//   lower_kernel.cpp      one packet's frame: entry block (buffers, literals, parameters,
//                         broadcast inputs), lane mask, output stores, Ctrl-C polling; the
//                         module around it;
//   lower_arithmetic.cpp  Lowering::emit(), the one switch over ops, and the lowering of
//                         elementwise statements (division, remainders, casts, ...);
//   lower_memory.cpp      gathers, scatters (plain, reducing, incrementing), their bounds
//                         masks and checked-mode reports;
//   lower_host_call.cpp   calls of host functions on a packet's active lanes;
//   lower_loops.cpp       symbolic loops and run-once regions (guarded branches, calls);
//   lower_pieces.cpp      a long kernel as noinline functions, one per piece.
// What differs between targets (target.h) lives in target_cpu.cpp (the packet loop,
// streaming stores) and target_nvptx.cpp (a thread per lane, its entry on a GPU or in
// host emulation). Lowering is a pure function (no LLVM library calls), golden-tested in
// tests/golden/lowering/.
#include "backend/lowering/lower.h"
#include "backend/lowering/lowering.h"

#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace kiln::detail {

std::string lower_to_llvm_ir(const KernelForm& form, const std::string& name, const lowering::Target& target,
                             uint32_t split_statements) {
  return lowering::Lowering(form, target, split_statements).lower(name);
}

}  // namespace kiln::detail

namespace kiln::detail::lowering {

const char* scalar_type(VarType t) {
  switch (t) {
    case VarType::Bool: return "i1";
    case VarType::Int32:
    case VarType::UInt32: return "i32";
    case VarType::Int64:
    case VarType::UInt64: return "i64";
    case VarType::Float32: return "float";
    case VarType::Float64: return "double";
  }
  return "?";
}
const char* memory_type(VarType t) { return t == VarType::Bool ? "i8" : scalar_type(t); }
std::string mangle(const char* scalar) {
  std::string s = scalar;
  if (s == "float") return "f32";
  if (s == "double") return "f64";
  return s;
}
unsigned bit_width(VarType t) { return t == VarType::Bool ? 1 : unsigned(type_size(t) * 8); }

std::string Lowering::vec(const std::string& scalar) const {
  return "<" + std::to_string(width_) + " x " + scalar + ">";
}

std::string Lowering::vec(VarType t) const { return vec(scalar_type(t)); }

std::string Lowering::vmangle(const std::string& scalar) const {
  return "v" + std::to_string(width_) + mangle(scalar.c_str());
}

std::string Lowering::splat_const(const std::string& scalar, const std::string& value) const {
  std::string s = "<";
  for (uint32_t i = 0; i < width_; ++i) s += (i ? ", " : "") + scalar + " " + value;
  return s + ">";
}

std::string Lowering::lane_offsets() const {
  std::string s = "<";
  for (uint32_t i = 0; i < width_; ++i) s += (i ? ", i64 " : "i64 ") + std::to_string(i);
  return s + ">";
}

void Lowering::splat(std::ostringstream& out, const std::string& tag, const std::string& scalar,
                     const std::string& value) {
  out << "  %" << tag << ".ins = insertelement " << vec(scalar) << " poison, " << scalar << " " << value << ", i64 0\n";
  out << "  %" << tag << " = shufflevector " << vec(scalar) << " %" << tag << ".ins, " << vec(scalar) << " poison, "
      << vec("i32") << " zeroinitializer\n";
}

std::string Lowering::temp() { return "%t" + std::to_string(next_temp_++); }

std::string Lowering::label(uint32_t position, const char* what) { return "s" + std::to_string(position) + "." + what; }

void Lowering::start_block(const std::string& name) {
  body_ << name << ":\n";
  block_ = name;
}

std::string Lowering::call(const std::string& result_type, const std::string& intrinsic,
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

std::string Lowering::instr(const std::string& text) {
  std::string t = temp();
  body_ << "  " << t << " = " << text << "\n";
  return t;
}

const std::string& Lowering::arg(const KernelStatement& s, int k) const { return names_[s.operands[k]]; }

}  // namespace kiln::detail::lowering
