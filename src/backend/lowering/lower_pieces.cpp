// A long kernel lowered as pieces (backend/kernel_split.h): each piece a noinline
// function of its own that the packet loop calls in order, the values crossing pieces
// passed through a per-packet frame on the stack.
#include "backend/lowering/kernel_abi.h"
#include "backend/lowering/lowering.h"

#include <algorithm>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace kiln::detail::lowering {

void Lowering::call_pieces(const std::string& name, const KernelSplit& split) {
  entry_ << "  %frame = alloca [" << split.frame_slots * width_ * 8 << " x i8], align 64\n";
  for (uint32_t k = 0; k < split.pieces(); ++k) {
    std::string symbol = name + ".p" + std::to_string(k);
    lower_piece(symbol, split, k);
    body_ << "  call void @" << symbol << "(" << kPieceArguments << ")\n";
  }
  import_values(split, split.imports.back());
}

void Lowering::lower_piece(const std::string& symbol, const KernelSplit& split, uint32_t k) {
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
  pieces_ += "\ndefine internal void @" + symbol + "(" + kPieceParameters + ") #1 {\n" + entry_.str() +
             "  br label %body\n" + body_.str();
  std::swap(entry_, kernel_entry);
  std::swap(body_, kernel_body);
  polls_interrupt_ = kernel_polls_interrupt;
  block_ = "loop";
}

void Lowering::import_values(const KernelSplit& split, const std::vector<uint32_t>& positions) {
  for (uint32_t p : positions) {
    if (is_leaf(form_.statements[p].op))
      emit(p);
    else
      names_[p] = instr("load " + vec(form_.statements[p].type) + ", ptr " + frame_address(split, p) + ", align " +
                        std::to_string(frame_alignment()));
  }
}

std::string Lowering::frame_address(const KernelSplit& split, uint32_t position) {
  uint64_t offset = uint64_t(split.frame_slot[position]) * width_ * 8;
  return instr("getelementptr inbounds i8, ptr %frame, i64 " + std::to_string(offset));
}

uint32_t Lowering::frame_alignment() const { return std::min(64u, width_ * 8); }

}  // namespace kiln::detail::lowering
