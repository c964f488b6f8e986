// Derivatives of symbolic statements: what they share (differentiate_statement.h), and
// branches and calls, whose derivatives record the choices again with their functions
// wrapped.
#include "control/differentiate_statement.h"

#include <kiln/errors.h>

#include "ir/node.h"
#include "ir/region.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace kiln::detail {

bool is_float_value(const Handle& v) { return is_float(node_type(v.index())); }

bool inside_statement() {
  StateLock lock(state().mutex);
  return current_region() != 0;
}

Handle zeros_of(VarType type, size_t size) { return literal(type, 0, size); }

Values detached(const Values& values) {
  Values out;
  for (const Handle& v : values) out.push_back(v.detached());
  return out;
}

Handle plus(const Handle& total, const Handle& part) { return total ? traced(Op::Add, total, part) : part; }

size_t float_count(const Values& values) { return size_t(std::count_if(values.begin(), values.end(), is_float_value)); }

Values concat(Values a, const Values& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

bool any_derivative(const Values& values) {
  return std::any_of(values.begin(), values.end(), [](const Handle& v) { return v.ad() != 0; });
}

BodyFn discovering(const BodyFn& fn, Values& captures) {
  return [fn, &captures](const Values& in) {
    uint64_t first = ad_next_serial();
    Values out = fn(in);
    std::vector<AdIndex> roots;
    for (const Handle& v : out)
      if (v.ad()) roots.push_back(v.ad());
    for (AdIndex c : ad_frontier(roots.data(), roots.size(), first)) {
      bool known = std::any_of(captures.begin(), captures.end(), [&](const Handle& h) { return h.ad() == c; });
      if (!known) captures.push_back(Handle::borrow(AdOperand{0, c}));
    }
    return detached(out);
  };
}

namespace {

/// Fresh AD leaves for the floating-point values among the first `n` of `in`.
Values leaves_of(const Values& in, size_t n) {
  Values leaves;
  for (size_t k = 0; k < n; ++k) {
    if (!is_float_value(in[k])) {
      leaves.push_back(in[k].detached());
      continue;
    }
    Handle value = in[k].detached();
    AdIndex ad = ad_enable(value.index());
    leaves.push_back(Handle::steal(AdValue{value.release(), ad}));
  }
  return leaves;
}

/// Adds capture `c`'s contributions of one evaluated iteration to its running buffer.
void add_whole_array(CaptureCollection& collection, size_t c, const Handle& capture, Handle contribution) {
  for (Index b : ad_collected_buffers(capture.ad())) contribution = plus(contribution, Handle::steal(b));
  if (!contribution) return;
  if (ad_size(capture.ad()) == 1 && node_size(contribution.index()) != 1)
    contribution = Handle::steal(reduce(Reduction::Sum, contribution.index()));
  Values& running = collection.buffers[c];
  if (running.empty()) running.emplace_back();
  running[0] = plus(running[0], contribution);
  Index total = running[0].index();
  eval(&total, 1);
}

}  // namespace

BodyFn tangent_function(const BodyFn& fn, size_t n) {
  return [fn, n](const Values& in) {
    RecordingScope on(true);
    IsolationScope scope(/*collect=*/false);
    Values leaves = leaves_of(in, n);
    for (size_t k = 0, t = n; k < n; ++k)
      if (leaves[k].ad()) ad_set_grad(leaves[k].ad(), in[t++].index());
    Values out = fn(leaves);
    std::vector<AdIndex> targets;
    for (const Handle& v : out)
      if (v.ad()) targets.push_back(v.ad());
    if (!targets.empty()) ad_forward_to(targets.data(), targets.size());
    Values result = detached(out);
    for (const Handle& v : out) {
      if (!is_float_value(v)) continue;
      Index g = v.ad() ? ad_grad(v.ad()) : 0;
      result.push_back(g ? Handle::steal(g) : zeros_of(node_type(v.index()), 1));
    }
    return result;
  };
}

BodyFn adjoint_function(const BodyFn& fn, size_t n, const Values& captures, bool with_outputs, CaptureBuffers buffers) {
  return [fn, n, captures, with_outputs, buffers](const Values& in) {
    RecordingScope on(true);
    IsolationScope scope(/*collect=*/true);
    Values leaves = leaves_of(in, n);
    Values out = fn(leaves);
    std::vector<AdIndex> targets;
    size_t seed = n;
    for (const Handle& v : out) {
      if (!is_float_value(v)) continue;
      Handle g = in.at(seed++);
      if (!v.ad()) continue;
      // An evaluated loop's body runs on every lane; the adjoints of lanes that finished are 0.
      if (Index mask = current_mask(); buffers->whole_arrays && mask)
        g = traced(Op::Select, Handle::borrow(mask), g, zeros_of(node_type(g.index()), 1));
      ad_accumulate_grad(v.ad(), g.index());
      targets.push_back(v.ad());
    }
    // retain_graph: this graph is freed with `out` and the leaves anyway, and freeing its
    // edges now would mark the captured arrays' real uses as consumed (forward() from them
    // would raise).
    if (!targets.empty()) ad_backward(targets.data(), targets.size(), /*retain_graph=*/true);
    Values result = with_outputs ? detached(out) : Values{};
    for (const Handle& leaf : leaves) {
      if (!leaf.ad()) continue;
      Index g = ad_grad(leaf.ad());
      result.push_back(g ? Handle::steal(g) : zeros_of(node_type(leaf.index()), 1));
    }
    for (size_t c = 0; c < captures.size(); ++c) {
      Index g = ad_collected(captures[c].ad());
      if (buffers->whole_arrays) {
        add_whole_array(*buffers, c, captures[c], g ? Handle::steal(g) : Handle());
        result.push_back(zeros_of(ad_type(captures[c].ad()), 1));
        continue;
      }
      if (g) buffers->lane_wise[c] = true;
      result.push_back(g ? Handle::steal(g) : zeros_of(ad_type(captures[c].ad()), 1));
      for (Index b : ad_collected_buffers(captures[c].ad())) buffers->buffers[c].push_back(Handle::steal(b));
    }
    return result;
  };
}

Values gradients_for(const Values& like, const std::vector<Index>& grads) {
  Values out;
  for (size_t k = 0; k < like.size(); ++k) {
    if (!is_float_value(like[k])) continue;
    Index g = grads.at(k);
    out.push_back(g ? Handle::borrow(g) : zeros_of(node_type(like[k].index()), node_size(like[k].index())));
  }
  return out;
}

std::vector<Index> by_position(const Values& like, const Values& values, size_t first) {
  std::vector<Index> out;
  size_t j = first;
  for (const Handle& v : like) out.push_back(is_float_value(v) ? Handle(values.at(j++)).release() : 0);
  return out;
}

Values connect(std::shared_ptr<CustomCallbacks> op, const Values& inputs, const Values& captures,
               const Values& outputs) {
  std::vector<AdOperand> operands;
  for (const Handle& v : inputs) operands.push_back(v.operand());
  for (const Handle& c : captures) operands.push_back(c.operand());
  std::vector<Index> values;
  for (const Handle& v : outputs) values.push_back(v.index());
  Values result;
  for (const AdValue& v : ad_custom(std::move(op), operands, values)) result.push_back(Handle::steal(v));
  return result;
}

StatementDerivative::StatementDerivative(std::string what, Values inputs, Values outputs, Values captures)
    : what_(std::move(what)),
      inputs_(detached(inputs)),
      outputs_(detached(outputs)),
      captures_(std::move(captures)),
      primal_default_(default_mode()) {}

CaptureBuffers StatementDerivative::new_buffers(bool whole_arrays) const {
  return std::make_shared<CaptureCollection>(captures_.size(), whole_arrays);
}

std::vector<Index> StatementDerivative::input_grads(const Values& grads, size_t first_grad, const Values& contributions,
                                                    size_t first_contribution, const CaptureBuffers& buffers) const {
  std::vector<Index> out = by_position(inputs_, grads, first_grad);
  for (size_t c = 0; c < captures_.size(); ++c) {
    Handle total = contributions.at(first_contribution + c);
    size_t lanes = node_size(total.index()), size = ad_size(captures_[c].ad());
    // Lane-wise zeros: for a capture of another size, or one that got no lane-wise contribution.
    if (buffers->whole_arrays || (size != 1 && lanes != 1 && (lanes != size || !buffers->lane_wise[c])))
      total = Handle();
    if (inside_statement()) {
      // Nested in another statement's adjoint: hand each buffer to the enclosing
      // collection as it is (a scatter buffer, kept apart there), since a sum of buffers
      // is not one; only the lane-wise part is this input's gradient.
      for (const Handle& b : buffers->buffers[c]) ad_accumulate_grad(captures_[c].ad(), b.index());
      out.push_back(total.release());
      continue;
    }
    for (const Handle& b : buffers->buffers[c]) total = plus(total, b);
    out.push_back(total.release());
  }
  return out;
}

Values StatementDerivative::with_only_this_traversal(const std::vector<Index>& g, size_t first,
                                                     const std::function<Values()>& trace) const {
  std::vector<std::pair<AdIndex, Handle>> kept;
  for (size_t c = 0; c < captures_.size(); ++c) {
    if (g.at(first + c)) continue;
    Handle grad = Handle::steal(ad_grad(captures_[c].ad()));
    size_t lanes = grad ? node_size(grad.index()) : 0;
    if (!grad || (lanes != 1 && lanes != ad_size(captures_[c].ad()))) continue;  // (restorable ones only)
    ad_set_grad(captures_[c].ad(), 0);
    kept.emplace_back(captures_[c].ad(), std::move(grad));
  }
  auto restore = [&] {
    for (auto& [ad, grad] : kept) ad_set_grad(ad, grad.index());
  };
  Values result;
  try {
    result = trace();
  } catch (...) {
    restore();
    throw;
  }
  restore();
  return result;
}

namespace {

class ChoicesDerivative final : public StatementDerivative {
 public:
  ChoicesDerivative(std::string what, Values args, Values outputs, Values captures, ChoicesRun run)
      : StatementDerivative(std::move(what), std::move(args), std::move(outputs), std::move(captures)),
        run_(std::move(run)) {}

  std::vector<Index> forward_grads(const std::vector<Index>& g) override {
    ControlModeScope primal_default = derivative_scope();
    size_t n = inputs_.size();
    Values all = with_only_this_traversal(g, n, [&] {
      return run_(concat(inputs_, gradients_for(inputs_, g)),
                  [n](const BodyFn& fn) { return tangent_function(fn, n); });
    });
    return by_position(outputs_, all, outputs_.size());
  }
  std::vector<Index> backward_grads(const std::vector<Index>& g) override {
    ControlModeScope primal_default = derivative_scope();
    size_t n = inputs_.size();
    const Values& captures = captures_;
    CaptureBuffers buffers = new_buffers();
    Values all = run_(concat(inputs_, gradients_for(outputs_, g)), [n, &captures, buffers](const BodyFn& fn) {
      return adjoint_function(fn, n, captures, false, buffers);
    });
    return input_grads(all, 0, all, float_count(inputs_), buffers);
  }

 private:
  ChoicesRun run_;
};

}  // namespace

bool derivatives_possible() { return ad_recording() && ad_node_count() > 0; }

void ad_check_traversal_allowed(const char* what) {
  StateLock lock(state().mutex);
  std::string statement;
  if (uint32_t id = current_region()) {
    statement = statement_title(region(id).statement, region(id).name);
  } else if (!state().input_watches.empty() && state().input_watches.back()) {
    const InputWatch& watch = *state().input_watches.back();
    statement = statement_title(watch.statement, watch.name);
  } else {
    return;
  }
  throw ValueError(std::string("kiln: ") + what + ": called inside " + statement +
                   ", which is tracing its functions; a traversal cannot start inside a loop, branch or call "
                   "(symbolic statements trace their functions once for every lane and iteration, evaluated ones "
                   "run them on the active lanes only). Start it after the statement, from its results");
}

Values differentiable_choices(const Values& args, const ChoicesRun& run, const std::string& what) {
  Values captures;
  Values outputs = run(detached(args), [&captures](const BodyFn& fn) { return discovering(fn, captures); });
  if (!any_derivative(args) && captures.empty()) return outputs;
  auto op = std::make_shared<ChoicesDerivative>(what, args, outputs, captures, run);
  return connect(op, args, captures, outputs);
}

}  // namespace kiln::detail
