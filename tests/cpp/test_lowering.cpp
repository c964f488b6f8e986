// Golden tests of the lowering to LLVM IR: one small kernel form each, lowered for the CPU
// at 4 lanes (so the text does not depend on the host) and for NVPTX at one lane per
// thread; the emulated NVPTX module must be the NVPTX one with only its entry replaced.
// A missing reference file fails; run with `--update` (or KILN_UPDATE_GOLDEN=1) to rewrite
// the references, then review the diff.
#include <kiln/errors.h>
#include <kiln/host_call.h>

#include <gtest/gtest.h>

#include "backend/lowering/lower.h"
#include "form/kernel_form.h"

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

using namespace kiln;
using namespace kiln::detail;

namespace {

bool update_golden = std::getenv("KILN_UPDATE_GOLDEN") != nullptr;

KernelStatement statement(Op op, VarType type, std::initializer_list<uint32_t> operands = {}, uint64_t literal = 0) {
  KernelStatement s{};
  s.op = op;
  s.type = s.operand_type = type;
  s.literal = literal;
  s.input_slot = s.output_slot = kNoSlot;
  int k = 0;
  for (uint32_t o : operands) s.operands[k++] = o;
  return s;
}
KernelStatement input(VarType type, uint32_t slot, bool broadcast = false) {
  KernelStatement s = statement(Op::Data, type);
  s.input_slot = slot;
  s.broadcast = broadcast;
  return s;
}
KernelStatement lt_u32(KernelStatement s) {
  s.operand_type = VarType::UInt32;
  return s;
}
KernelStatement output(KernelStatement s, uint32_t slot) {
  s.output_slot = slot;
  return s;
}

void check_text(const std::string& path, const std::string& text, const std::string& what) {
  if (update_golden) {
    std::ofstream(path) << text;
    return;
  }
  std::ifstream file(path);
  ASSERT_TRUE(file.good()) << "missing golden file " << path << " (run test_lowering --update and review it)";
  std::stringstream expected;
  expected << file.rdbuf();
  EXPECT_EQ(text, expected.str()) << "lowering of " << what << " changed; if intended, rerun with --update";
}

/// The module without the function that starts with `header` (its entry), the special
/// registers that reads, its first line (which names the target) and blank lines.
std::string without_entry(const std::string& module, const std::string& header) {
  size_t entry = module.find(header);
  if (entry == std::string::npos) return "no " + header + " in\n" + module;
  size_t first_line = module.find('\n');
  std::istringstream rest(module.substr(first_line, entry - first_line) +
                          module.substr(module.find("\n}\n", entry) + 3));
  std::string kept, line;
  while (std::getline(rest, line))
    if (!line.empty() && line.rfind("declare i32 @llvm.nvvm.read.ptx.sreg.", 0) != 0) kept += line + "\n";
  return kept;
}

void check_golden(const std::string& name, KernelForm form, uint32_t split_statements = 0) {
  std::string symbol = "kiln_kernel_" + name, golden = std::string(KILN_GOLDEN_DIR) + "/lowering/";
  check_text(golden + "cpu/" + name + ".ll",
             lower_to_llvm_ir(form, symbol, lowering::cpu_target(128), split_statements), name + " for the CPU");
  form.packet_width = 1;
  std::string device = lower_to_llvm_ir(form, symbol, lowering::nvptx_target(), split_statements);
  check_text(golden + "nvptx/" + name + ".ll", device, name + " for NVPTX");
  std::string emulated = lower_to_llvm_ir(form, symbol, lowering::nvptx_emulated_target(), split_statements);
  EXPECT_EQ(without_entry(emulated, "define void @" + symbol + "("),
            without_entry(device, "define ptx_kernel void @" + symbol + "("))
      << "the emulated module must differ from the device's only in its entry";
  EXPECT_EQ(emulated.find("llvm.nvvm"), std::string::npos) << "emulation must read no special register";
}

KernelForm form_of(std::vector<KernelStatement> statements, uint32_t inputs, uint32_t outputs, bool checks = false) {
  KernelForm form;
  form.statements = std::move(statements);
  form.input_count = inputs;
  form.output_count = outputs;
  form.checks = checks;
  form.packet_width = 4;
  return form;
}

}  // namespace

TEST(Lowering, FusedArithmetic) {
  // out = fma(a, b, 2.5) + broadcast c
  check_golden("fused_arithmetic",
               form_of({statement(Op::Literal, VarType::Bool), input(VarType::Float32, 0), input(VarType::Float32, 1),
                        statement(Op::Literal, VarType::Float32, {}, 0x40200000),
                        statement(Op::Fma, VarType::Float32, {1, 2, 3}), input(VarType::Float32, 2, true),
                        output(statement(Op::Add, VarType::Float32, {4, 5}), 3)},
                       3, 1));
}

TEST(Lowering, IntegerEdgeCases) {
  // Guarded division, saturating shift, and a cast chain.
  KernelStatement cast = statement(Op::Cast, VarType::Float64, {3});
  cast.operand_type = VarType::Int32;
  check_golden("integer_edge_cases",
               form_of({statement(Op::Literal, VarType::Bool), input(VarType::Int32, 0), input(VarType::Int32, 1),
                        output(statement(Op::Div, VarType::Int32, {1, 2}), 2),
                        output(statement(Op::Shl, VarType::Int32, {1, 2}), 3), output(cast, 4)},
                       2, 3));
}

TEST(Lowering, CheckedGatherAndScatterAdd) {
  KernelStatement counter = statement(Op::Counter, VarType::UInt32);
  check_golden("checked_gather_scatter_add",
               form_of({statement(Op::Literal, VarType::Bool), input(VarType::Float32, 0), counter,
                        statement(Op::Literal, VarType::Bool, {}, 1),
                        statement(Op::Gather, VarType::Float32, {1, 2, 3}), input(VarType::Float32, 1),
                        statement(Op::Scatter, VarType::Float32, {5, 4, 2, 3}, uint64_t(ReduceOp::Add))},
                       2, 0, true));
}

TEST(Lowering, ScatterIncAppend) {
  KernelStatement zero = statement(Op::Literal, VarType::UInt32, {}, 0);
  check_golden("scatter_inc",
               form_of({statement(Op::Literal, VarType::Bool), input(VarType::UInt32, 0), zero, input(VarType::Bool, 1),
                        output(statement(Op::ScatterInc, VarType::UInt32, {1, 2, 3}), 2)},
                       2, 1));
}

TEST(Lowering, SymbolicLoop) {
  // i = 0; acc = in0; while (i < in1) { acc = acc * 2; i += 1 }; out = acc
  check_golden(
      "symbolic_loop",
      form_of({statement(Op::Literal, VarType::Bool), input(VarType::Float32, 0), input(VarType::UInt32, 1),
               statement(Op::Literal, VarType::UInt32, {}, 0), statement(Op::Literal, VarType::UInt32, {}, 1),
               statement(Op::Literal, VarType::Float32, {}, 0x40000000), statement(Op::LoopBegin, VarType::Bool),
               statement(Op::LoopPhi, VarType::UInt32, {3}), output(statement(Op::LoopPhi, VarType::Float32, {1}), 2),
               lt_u32(statement(Op::Lt, VarType::Bool, {7, 2})), statement(Op::LoopCond, VarType::Bool, {9}),
               statement(Op::Add, VarType::UInt32, {7, 4}), statement(Op::LoopUpdate, VarType::UInt32, {7, 11}),
               statement(Op::Mul, VarType::Float32, {8, 5}), statement(Op::LoopUpdate, VarType::Float32, {8, 13}),
               statement(Op::LoopEnd, VarType::Bool, {6})},
              2, 1));
}

TEST(Lowering, GuardedCallRunsOnce) {
  // A symbolic branch: packets where no lane has in1 skip the body; out = in1 ? in0 * 2 : 0
  check_golden(
      "guarded_call",
      form_of(
          {statement(Op::Literal, VarType::Bool), input(VarType::Float32, 0), input(VarType::Bool, 1),
           statement(Op::Literal, VarType::Float32, {}, 0), statement(Op::Literal, VarType::Float32, {}, 0x40000000),
           statement(Op::LoopBegin, VarType::Bool, {}, 1), output(statement(Op::LoopPhi, VarType::Float32, {3}), 2),
           statement(Op::LoopCond, VarType::Bool, {2}), statement(Op::Mul, VarType::Float32, {1, 4}),
           statement(Op::LoopUpdate, VarType::Float32, {6, 8}), statement(Op::LoopEnd, VarType::Bool, {5})},
          2, 1));
}

TEST(Lowering, ParametersAreReadFromTheParameterBlock) {
  // out = a * param#0 (f32) + cast(param#1 (u32)) where param#2 (bool); params are 64-bit slots
  KernelStatement scale = statement(Op::Param, VarType::Float32, {}, 0);
  KernelStatement offset = statement(Op::Param, VarType::UInt32, {}, 1);
  KernelStatement flag = statement(Op::Param, VarType::Bool, {}, 2);
  KernelStatement cast = statement(Op::Cast, VarType::Float32, {3});
  cast.operand_type = VarType::UInt32;
  check_golden("parameters", form_of({input(VarType::Float32, 0), scale, statement(Op::Mul, VarType::Float32, {0, 1}),
                                      offset, cast, statement(Op::Add, VarType::Float32, {2, 4}), flag,
                                      output(statement(Op::Select, VarType::Float32, {6, 5, 0}), 1)},
                                     1, 1));
}

TEST(Lowering, SplitIntoPieces) {
  // Pieces of 3 statements: [0, 3) [3, 6) [6, 9) [9, 10). Products and a Bool cross pieces
  // through the frame (one slot reused once its value is read); inputs and the literal are
  // recomputed where they are read; outputs of any piece are stored by the kernel.
  //   p = a * 2; c = p < b; s = c ? p + b : a; out2 = p; out3 = s; out4 = (s - 2) * a
  KernelStatement less = statement(Op::Lt, VarType::Bool, {4, 2});
  less.operand_type = VarType::Float32;
  check_golden(
      "split_pieces",
      form_of(
          {statement(Op::Literal, VarType::Bool), input(VarType::Float32, 0), input(VarType::Float32, 1, true),
           statement(Op::Literal, VarType::Float32, {}, 0x40000000),
           output(statement(Op::Mul, VarType::Float32, {1, 3}), 2), less, statement(Op::Add, VarType::Float32, {4, 2}),
           output(statement(Op::Select, VarType::Float32, {5, 6, 1}), 3), statement(Op::Sub, VarType::Float32, {7, 3}),
           output(statement(Op::Mul, VarType::Float32, {8, 1}), 4)},
          2, 3),
      3);
}

namespace {
void golden_host_function(void*, uint32_t, const int32_t*, const void* const*, void* const*) {}
}  // namespace

TEST(Lowering, HostCall) {
  // (out3, out4) = f(a, b) on the lanes of mask: arguments, the lanes to run and the pointer
  // arrays are staged in entry-block memory; the call is skipped when no lane is active; the
  // results are zero where it did not run.
  const HostFunction f("golden_host", {VarType::Float32, VarType::UInt32}, {VarType::Float32, VarType::Bool},
                       golden_host_function);
  KernelForm form = form_of(
      {statement(Op::Literal, VarType::Bool), input(VarType::Float32, 0), input(VarType::UInt32, 1),
       statement(Op::Param, VarType::UInt64, {}, 0), statement(Op::Param, VarType::UInt64, {}, 1),
       input(VarType::Bool, 2), statement(Op::HostArg, VarType::Float32, {3, 1}),
       statement(Op::HostArg, VarType::UInt32, {6, 2}), statement(Op::HostCall, VarType::Bool, {3, 4, 5, 7}, f.id()),
       output(statement(Op::HostResult, VarType::Float32, {8}, 0), 3),
       output(statement(Op::HostResult, VarType::Bool, {8}, 1), 4)},
      3, 2);
  check_text(std::string(KILN_GOLDEN_DIR) + "/lowering/cpu/host_call.ll",
             lower_to_llvm_ir(form, "kiln_kernel_host_call", lowering::cpu_target(128)), "host_call for the CPU");
  form.packet_width = 1;
  for (const lowering::Target* target : {&lowering::nvptx_target(), &lowering::nvptx_emulated_target()}) {
    try {
      lower_to_llvm_ir(form, "kiln_kernel_host_call", *target);
      ADD_FAILURE() << "a host call lowered for " << target->name();
    } catch (const ValueError& e) {
      EXPECT_NE(std::string(e.what()).find("host function 'golden_host' cannot run on "), std::string::npos)
          << e.what();
    }
  }
}

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--update") == 0) update_golden = true;
  return RUN_ALL_TESTS();
}
