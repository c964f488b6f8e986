// Lowering of symbolic loops to LLVM IR: LoopBegin k, phis, condition, LoopCond c, body,
// updates, LoopEnd.
// Blocks L<k>.pre -> L<k>.head (phis, condition; exits when no lane is active) ->
// body -> L<k>.latch -> L<k>.head, then L<k>.exit. Each lane keeps its last state once
// its condition fails (the updates select on LoopCond), and stays inactive (the mask phi).
// A loop that runs once (a guarded branch or call) has no back edge: the body is skipped
// when no lane is active, and its results are phis in L<k>.exit.
#include "backend/lowering/lowering.h"

#include <string>

namespace kiln::detail::lowering {

void Lowering::loop_begin(uint32_t k, const KernelStatement& s) {
  std::string l = "%L" + std::to_string(k);
  loops_.push_back(OpenLoop{k, s.literal != 0, "", "", {}});
  body_ << "  br label " << l << ".pre\n";
  start_block("L" + std::to_string(k) + ".pre");
  body_ << "  br label " << l << ".head\n";
  start_block("L" + std::to_string(k) + ".head");
  if (!loops_.back().once)
    body_ << "  " << l << ".mask = phi " << vec("i1") << " [ %active, " << l << ".pre ], [ " << l << ".active, " << l
          << ".latch ]\n";
}

std::string Lowering::loop_phi(uint32_t position, const KernelStatement& s) {
  std::string l = "%L" + std::to_string(loops_.back().begin), name = "%s" + std::to_string(position);
  if (!loops_.back().once)  // (a run-once loop defines it at its exit)
    body_ << "  " << name << " = phi " << vec(s.type) << " [ " << arg(s, 0) << ", " << l << ".pre ], [ " << name
          << ".next, " << l << ".latch ]\n";
  return name;
}

std::string Lowering::loop_cond(const KernelStatement& s) {
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

void Lowering::loop_update(const KernelStatement& s) {
  OpenLoop& loop = loops_.back();
  if (loop.once) {
    loop.updates.emplace_back(s.operands[0], arg(s, 1));
    return;
  }
  std::string vt = vec(s.type);
  body_ << "  " << names_[s.operands[0]] << ".next = select " << vec("i1") << " " << loop.active << ", " << vt << " "
        << arg(s, 1) << ", " << vt << " " << arg(s, 0) << "\n";
}

void Lowering::loop_end() {
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
  poll_interrupt(l);  // Ctrl-C leaves the kernel
  start_block("L" + std::to_string(loop.begin) + ".exit");
}

}  // namespace kiln::detail::lowering
