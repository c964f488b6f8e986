// The evaluation driver: group pending work by size, schedule each group into a canonical
// kernel form, fetch or compile the kernel, launch it, and collapse the results.
#include "eval/evaluate.h"

#include <kiln/errors.h>

#include "backend/backend.h"
#include "cache/kernel_cache.h"
#include "eval/growth_watch.h"
#include "eval/history.h"
#include "eval/interrupt.h"
#include "form/schedule.h"
#include "ir/read_barrier.h"
#include "ir/verify.h"
#include "util/settings.h"
#include "util/stopwatch.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>

namespace kiln::detail {
namespace {

/// "Gather (array `label`, labelled at file:line)": the op that failed and the labelled
/// array it accessed, so a checked-mode error points at user code.
std::string describe_statement(const ScheduledKernel& k, uint32_t position) {
  const KernelStatement& s = k.form.statements[position];
  std::string text = op_name(s.op);
  Index buffer = k.statements[s.operands[0]];
  auto it = state().notes.find(buffer);
  if (it != state().notes.end() && !it->second.label.empty())
    text += " (array `" + it->second.label + "`, labelled at " + it->second.where + ")";
  return text;
}

/// Labels and creation sites of the kernel's statements (while their nodes still live).
StatementNotes statement_notes(const ScheduledKernel& k) {
  StatementNotes notes;
  for (uint32_t position = 0; position < k.statements.size(); ++position) {
    const Node& n = node(k.statements[position]);
    if (!n.labelled && !n.created.line()) continue;
    StatementNote note;
    note.position = position;
    note.created = n.created;
    if (n.labelled) {
      const NodeNote& labelled = state().notes.at(k.statements[position]);
      note.label = labelled.label;
      note.labelled_at = labelled.where;
      note.derived = labelled.derived;
    }
    notes.push_back(std::move(note));
  }
  return notes;
}

/// Whether a launch can take long enough to be interrupted: it runs a loop, or more than
/// one block of lanes.
bool may_run_long(const KernelForm& form, size_t lanes) {
  if (lanes > block_size()) return true;
  return std::any_of(form.statements.begin(), form.statements.end(),
                     [](const KernelStatement& s) { return s.op == Op::LoopBegin && !s.literal; });
}

/// Runs one group's kernel and turns its outputs into Data nodes. Returns the error of a
/// failed bounds check (empty when none) so the caller can finish collapsing first.
std::string run_group(const KernelGroup& group) {
  Backend& backend = backend_for(group.device);
  ScheduledKernel k = schedule_kernel(group, flag(Flag::Checks), backend.packet_width());
  const KernelForm& form = k.form;
  if (log_enabled(LogLevel::Debug))
    log(LogLevel::Debug, "lowering a kernel of " + std::to_string(group.size) + " lanes, after scheduling:\n" +
                             print_kernel_form(form, statement_notes(k)));

  std::vector<void*> buffers(form.input_count + form.output_count);
  std::vector<uint64_t> sizes(buffers.size());
  std::vector<std::shared_ptr<Buffer>> results(form.output_count);
  for (uint32_t i = 0; i < form.input_count; ++i) {
    const Node& n = node(k.inputs[i]);
    buffers[i] = n.buffer->data();
    sizes[i] = n.size;
  }
  for (uint32_t i = 0; i < form.output_count; ++i) {
    const Node& n = node(k.outputs[i]);
    results[i] = Buffer::allocate(group.size * type_size(n.type), group.device);
    buffers[form.input_count + i] = results[i]->data();
    sizes[form.input_count + i] = group.size;
  }

  CheckState check;
  check.report = record_check_failure;
  check.interrupt = &interrupt_flag();
  if (group.size > 0) {
    Stopwatch lookup;
    StatementNoteSource notes{[&] { return statement_notes(k); }, !state().notes.empty()};
    CachedKernel cached = find_or_compile(backend, form, notes);
    double lookup_ms = lookup.elapsed_ms() - cached.times.codegen_ms - cached.times.compile_ms;
    LaunchArgs args;
    args.size = group.size;
    args.buffer_count = buffers.size();
    args.param_count = cached.parameters.size();
    args.buffers = buffers.data();
    args.buffer_sizes = sizes.data();
    args.params = cached.parameters.data();
    args.check = &check;
    for (const auto& result : results) args.output_bytes += result->bytes();
    // Ctrl-C is caught only around launches that can run long (catching it costs two
    // system calls, 8% of a cache-hit round trip).
    std::optional<InterruptScope> interrupt;
    if (may_run_long(form, group.size)) interrupt.emplace();
    Stopwatch launch;
    cached.kernel->launch(args);
    record_launch(form, cached, group.size, group.device, backend.name(), lookup_ms, launch.elapsed_ms());
    throw_if_interrupted();  // the outputs are incomplete: their nodes stay unevaluated
  }

  // Collapsing an output releases its operands, which may hold the last reference to another
  // output (a loop result read only by a value computed from it): hold them all meanwhile.
  for (Index output : k.outputs) inc_ref_int(output);
  for (uint32_t i = 0; i < form.output_count; ++i) collapse_to_data(k.outputs[i], std::move(results[i]));
  for (Index output : k.outputs) dec_ref_int(output);
  if (!check.failed) return {};
  return "kiln: " + describe_statement(k, check.statement) + "(): index " + std::to_string(check.index) +
         " is out of range for an array of " + std::to_string(check.size) + " elements (checked mode; " +
         std::to_string(check.lanes.load()) +
         " lanes out of range in this launch, skipped). Fix the index "
         "computation or mask the lanes.";
}

/// The IR's read barrier evaluates through this driver.
[[maybe_unused]] const bool kEvaluatorInstalled = (install_evaluator(&evaluate), true);

}  // namespace

std::vector<Index> unevaluated_roots(const Index* indices, size_t count, const std::vector<Index>& more,
                                     const char* what) {
  std::vector<Index> roots;
  for (size_t i = 0; i < count; ++i) {
    if (!indices[i]) continue;
    check_live(indices[i], what);
    check_evaluable(indices[i], what);
    if (node(indices[i]).op != Op::Data) roots.push_back(indices[i]);
  }
  for (Index i : more)
    if (node(i).op != Op::Data) roots.push_back(i);
  std::sort(roots.begin(), roots.end());
  roots.erase(std::unique(roots.begin(), roots.end()), roots.end());
  std::sort(roots.begin(), roots.end(), [](Index a, Index b) { return node(a).serial < node(b).serial; });
  return roots;
}

void evaluate(const Index* indices, size_t count) {
  State& s = state();
  std::vector<Index> scheduled = std::move(s.scheduled);
  s.scheduled.clear();
  std::vector<Index> roots = unevaluated_roots(indices, count, scheduled, "eval");

  std::vector<Index> effects = std::move(s.side_effects);
  s.side_effects.clear();
  if (roots.empty() && effects.empty()) {
    for (Index i : scheduled) dec_ref_int(i);
    return;
  }

  // The arrays the side effects write (before running them: a ScatterInc whose old values
  // are stored collapses to Data and forgets its target).
  std::vector<Index> targets;
  for (Index e : effects) {
    if (node(e).op == Op::Loop) {
      const auto& written = region(uint32_t(node(e).literal)).targets;
      targets.insert(targets.end(), written.begin(), written.end());
    } else {
      targets.push_back(node(e).operands[0]);
    }
  }
  std::string error;
  auto release = [&] {
    for (Index target : targets) node(target).dirty_size = 0;
    for (Index e : effects) dec_ref_int(e);
    for (Index i : scheduled) dec_ref_int(i);
  };
  try {
    for (const KernelGroup& group : group_by_size(roots, effects)) {
      std::string group_error = run_group(group);
      if (error.empty()) error = group_error;
    }
  } catch (const Interrupted&) {
    release();
    throw;
  }
  release();
  watch_pending_growth(s.pending_nodes);
#ifndef NDEBUG
  if (std::string problem = verify_ir(); !problem.empty())
    throw InternalError("kiln: IR verifier after evaluation: " + problem);
#endif
  if (!error.empty()) throw IndexError(error);
  for (auto hook : s.after_evaluation) hook();
}

void eval(const Index* indices, size_t count) {
  StateLock lock(state().mutex);
  evaluate(indices, count);
}

void schedule(Index index) {
  if (!index) return;
  StateLock lock(state().mutex);
  check_live(index, "schedule");
  check_evaluable(index, "schedule");
  state().scheduled.push_back(index);
  inc_ref_int(index);
}

const void* data(Index index) {
  StateLock lock(state().mutex);
  check_live(index, "data");
  if (node(index).op != Op::Data || node(index).dirty_size) evaluate(&index, 1);
  return node(index).buffer->data();
}

void read(Index index, size_t i, void* out) {
  StateLock lock(state().mutex);
  check_live(index, "read");
  const Node& n = node(index);
  if (i >= n.size)
    throw IndexError("kiln: read(): index " + std::to_string(i) + " is out of range for an array of " +
                     std::to_string(n.size) + " elements");
  if (n.op == Op::Literal || n.op == Op::Param) {
    std::memcpy(out, &n.literal, type_size(n.type));
    return;
  }
  data(index);
  size_t width = type_size(node(index).type);
  node(index).buffer->to_host(out, width, i * width);
}

void read_all(Index index, void* out) {
  StateLock lock(state().mutex);
  check_live(index, "read");
  const Node& n = node(index);
  if (n.op == Op::Literal || n.op == Op::Param) {
    for (size_t i = 0; i < n.size; ++i)
      std::memcpy(static_cast<char*>(out) + i * type_size(n.type), &n.literal, type_size(n.type));
    return;
  }
  data(index);
  node(index).buffer->to_host(out, node(index).size * type_size(node(index).type));
}

}  // namespace kiln::detail
