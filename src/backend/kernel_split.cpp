// Pieces of a long kernel and the values that cross between them (see kernel_split.h).
#include "backend/kernel_split.h"

#include "ir/op_info.h"

#include <algorithm>
#include <functional>
#include <queue>

namespace kiln::detail {
namespace {

/// Calls `visit(position)` for each operand of `s` that is read as a value (not the buffer
/// operand of a memory access, which names a buffer slot).
template <typename Visit> void for_each_value_operand(const KernelStatement& s, Visit visit) {
  for (int k = op_has_buffer_operand(s.op) ? 1 : 0; k < op_arity(s.op); ++k) visit(s.operands[k]);
}

/// Per statement: 1 when a piece must not start there because it lies inside a host call,
/// after the call's first argument cell and up to its last HostResult. A backend stages the
/// arguments and results in memory of the function that makes the call.
std::vector<uint8_t> inside_host_calls(const KernelForm& form) {
  const auto& statements = form.statements;
  const uint32_t n = uint32_t(statements.size());
  std::vector<uint32_t> last_read(n);
  for (uint32_t i = 0; i < n; ++i) {
    if (statements[i].op == Op::HostCall) last_read[i] = i;
    if (statements[i].op == Op::HostResult) last_read[statements[i].operands[0]] = i;
  }
  std::vector<int32_t> opened(n + 1, 0);  // +1 where a call's span starts, -1 after it ends
  for (uint32_t call = 0; call < n; ++call) {
    if (statements[call].op != Op::HostCall) continue;
    std::vector<uint32_t> cells = host_argument_cells(form, call);
    uint32_t first = cells.empty() ? call : cells.front();
    opened[first + 1]++;
    opened[last_read[call] + 1]--;
  }
  std::vector<uint8_t> inside(n);
  int32_t open = 0;
  for (uint32_t i = 0; i < n; ++i) inside[i] = (open += opened[i]) > 0;
  return inside;
}

/// Piece boundaries: a new piece starts once the current one has `max_statements`
/// statements, no symbolic loop is open and no host call is being staged.
std::vector<uint32_t> piece_starts(const KernelForm& form, uint32_t max_statements) {
  std::vector<uint32_t> starts{0};
  std::vector<uint8_t> inside_call = inside_host_calls(form);
  uint32_t depth = 0, count = 0;
  for (uint32_t i = 0; i < form.statements.size(); ++i) {
    if (count >= max_statements && depth == 0 && !inside_call[i]) {
      starts.push_back(i);
      count = 0;
    }
    Op op = form.statements[i].op;
    depth += op == Op::LoopBegin;
    depth -= op == Op::LoopEnd;
    ++count;
  }
  return starts;
}

void sort_unique(std::vector<uint32_t>& v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

}  // namespace

bool is_leaf(Op op) { return op == Op::Literal || op == Op::Param || op == Op::Data || op == Op::Counter; }

KernelSplit plan_kernel_split(const KernelForm& form, uint32_t max_statements, uint32_t max_frame_slots) {
  KernelSplit split;
  const auto& statements = form.statements;
  const uint32_t n = uint32_t(statements.size());
  if (max_statements == 0 || n <= max_statements) {
    split.starts = {0};
    return split;
  }
  split.starts = piece_starts(form, max_statements);
  const uint32_t pieces = uint32_t(split.starts.size());
  if (pieces == 1) return split;

  std::vector<uint32_t> piece_of(n);
  for (uint32_t k = 0; k < pieces; ++k) {
    uint32_t end = k + 1 < pieces ? split.starts[k + 1] : n;
    std::fill(piece_of.begin() + split.starts[k], piece_of.begin() + end, k);
  }

  // Imports, input slots and the last piece that reads each value (`pieces`: the outputs).
  std::vector<uint32_t> last_use = piece_of;
  split.imports.resize(pieces + 1);
  split.input_slots.resize(pieces);
  for (uint32_t i = 0; i < n; ++i) {
    const KernelStatement& s = statements[i];
    uint32_t k = piece_of[i];
    if (s.op == Op::Data) split.input_slots[k].push_back(s.input_slot);
    if (op_has_buffer_operand(s.op)) split.input_slots[k].push_back(statements[s.operands[0]].input_slot);
    for_each_value_operand(s, [&](uint32_t p) {
      last_use[p] = std::max(last_use[p], k);
      if (piece_of[p] == k) return;
      split.imports[k].push_back(p);
      if (statements[p].op == Op::Data) split.input_slots[k].push_back(statements[p].input_slot);
    });
    if (s.output_slot != kNoSlot) {
      last_use[i] = pieces;
      split.imports[pieces].push_back(i);
    }
  }
  for (auto& list : split.imports) sort_unique(list);
  for (auto& list : split.input_slots) sort_unique(list);

  // Frame slots, assigned in order of definition: a slot is free again for values defined
  // in the piece that last reads its current value (that piece loads before it stores).
  split.exports.resize(pieces);
  split.frame_slot.assign(n, kNoSlot);
  using Busy = std::pair<uint32_t, uint32_t>;  // (last piece reading it, slot)
  std::priority_queue<Busy, std::vector<Busy>, std::greater<Busy>> busy;
  std::vector<uint32_t> free_slots;
  for (uint32_t p = 0; p < n; ++p) {
    if (is_leaf(statements[p].op) || last_use[p] == piece_of[p]) continue;
    while (!busy.empty() && busy.top().first <= piece_of[p]) {
      free_slots.push_back(busy.top().second);
      busy.pop();
    }
    uint32_t slot = split.frame_slots;
    if (free_slots.empty())
      ++split.frame_slots;
    else
      slot = free_slots.back(), free_slots.pop_back();
    split.frame_slot[p] = slot;
    busy.push({last_use[p], slot});
    split.exports[piece_of[p]].push_back(p);
  }
  if (split.frame_slots > max_frame_slots) {
    KernelSplit whole;
    whole.starts = {0};
    return whole;
  }
  return split;
}

}  // namespace kiln::detail
