// Kernel form -> LLVM IR text: the entry to the CPU backend's renderer. Start reading here.
//
// Each statement becomes one vector SSA value of form.packet_width lanes; every memory
// access is masked by the lanes still inside [start, end), so one loop body serves full
// packets and the tail. Edge-case semantics match src/ir/scalar_ops.h (the fuzzer checks
// it): guarded integer division, shifts that saturate, saturating float->int casts.
//
// render_llvm_ir() below runs one llvm_ir::Renderer (llvm_renderer.h), whose members are
// defined by responsibility:
//   llvm_render.cpp             this entry, and the text the other files write with: vector
//                               types, constants, instructions, intrinsic calls;
//   llvm_render_kernel.cpp      the kernel's skeleton: signature, entry block (buffers,
//                               literals, parameters, broadcast inputs), packet loop and lane
//                               mask, output stores (streaming or masked), Ctrl-C polling;
//   llvm_render_arithmetic.cpp  Renderer::emit(), the one switch over ops, and the lowering
//                               of elementwise statements (division, remainders, casts, ...);
//   llvm_render_memory.cpp      gathers, scatters (plain, reducing, incrementing), their
//                               bounds masks and checked-mode reports;
//   llvm_render_host_call.cpp   calls of host functions on a packet's active lanes;
//   llvm_render_loops.cpp       symbolic loops and run-once regions (guarded branches, calls);
//   llvm_render_pieces.cpp      a long kernel as noinline functions, one per piece.
// Rendering is a pure function (no LLVM library calls), golden-tested in tests/golden/llvm/.
#include "backend/llvm/llvm_render.h"

#include "backend/llvm/llvm_renderer.h"

#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace kiln::detail {

std::string render_llvm_ir(const KernelForm& form, const std::string& name, int vector_bits,
                           uint32_t split_statements) {
  return llvm_ir::Renderer(form, vector_bits, split_statements).render(name);
}

}  // namespace kiln::detail

namespace kiln::detail::llvm_ir {

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

std::string Renderer::vec(const std::string& scalar) const {
  return "<" + std::to_string(width_) + " x " + scalar + ">";
}

std::string Renderer::vec(VarType t) const { return vec(scalar_type(t)); }

std::string Renderer::vmangle(const std::string& scalar) const {
  return "v" + std::to_string(width_) + mangle(scalar.c_str());
}

std::string Renderer::splat_const(const std::string& scalar, const std::string& value) const {
  std::string s = "<";
  for (uint32_t i = 0; i < width_; ++i) s += (i ? ", " : "") + scalar + " " + value;
  return s + ">";
}

std::string Renderer::lane_offsets() const {
  std::string s = "<";
  for (uint32_t i = 0; i < width_; ++i) s += (i ? ", i64 " : "i64 ") + std::to_string(i);
  return s + ">";
}

void Renderer::splat(std::ostringstream& out, const std::string& tag, const std::string& scalar,
                     const std::string& value) {
  out << "  %" << tag << ".ins = insertelement " << vec(scalar) << " poison, " << scalar << " " << value << ", i64 0\n";
  out << "  %" << tag << " = shufflevector " << vec(scalar) << " %" << tag << ".ins, " << vec(scalar) << " poison, "
      << vec("i32") << " zeroinitializer\n";
}

std::string Renderer::temp() { return "%t" + std::to_string(next_temp_++); }

std::string Renderer::label(uint32_t position, const char* what) { return "s" + std::to_string(position) + "." + what; }

void Renderer::start_block(const std::string& name) {
  body_ << name << ":\n";
  block_ = name;
}

std::string Renderer::call(const std::string& result_type, const std::string& intrinsic,
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

std::string Renderer::instr(const std::string& text) {
  std::string t = temp();
  body_ << "  " << t << " = " << text << "\n";
  return t;
}

const std::string& Renderer::arg(const KernelStatement& s, int k) const { return names_[s.operands[k]]; }

}  // namespace kiln::detail::llvm_ir
