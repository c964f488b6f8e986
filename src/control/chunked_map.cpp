// chunked_map (and checkpoint, its one-chunk case): memory-bounded differentiation. The
// primal runs fn chunk by chunk with derivatives suspended, so no chunk's graph or
// intermediates survive it. One CustomCallbacks hub connects the joined outputs to the
// inputs; when a traversal reaches it, each chunk's forward pass is traced again with
// derivatives on, that chunk alone is differentiated, and its gradients are written into
// (mapped inputs) or added onto (whole inputs) buffers that are evaluated before the next
// chunk starts. Chunk offsets are launch parameters, so every chunk (the short last one
// included) runs the kernels the first one compiled.
#include <kiln/detail/control_api.h>
#include <kiln/errors.h>

#include "control/lanes.h"

#include <algorithm>
#include <memory>

namespace kiln::detail {
namespace {

struct MapSpec {
  ChunkFn fn;
  Values mapped;               // detached
  std::vector<size_t> widths;  // lanes per row of each mapped input
  size_t rows = 0, chunk_rows = 0;
  Values whole;     // detached
  Values captures;  // AD nodes fn reads from outside (value index 0)
  std::vector<size_t> out_widths;
  std::string title;
};

/// Lanes offset, offset + 1, ... (`lanes` of them), the offset a launch parameter: every
/// chunk's kernels are the first chunk's.
Handle lanes_from(size_t offset, size_t lanes) {
  return traced(Op::Add, Handle::steal(make_counter(lanes)), Handle::steal(make_param(VarType::UInt32, offset, 1)));
}

/// Rows [first, first + count) of `full` (rows of `width` lanes), gathered. A one-lane
/// value broadcasts and passes as it is.
Handle rows_of(const Handle& full, size_t width, size_t first, size_t count, size_t rows) {
  if ((first == 0 && count == rows) || node_size(full.index()) == 1) return full.detached();
  return traced(Op::Gather, full.detached(), lanes_from(first * width, count * width), literal(VarType::Bool, 1));
}

/// target[first*width ...] = value (rows of one chunk into the joined buffer).
void store_rows(Handle& target, const Handle& value, size_t width, size_t first) {
  Handle index = lanes_from(first * width, node_size(value.index()));
  Index t = target.index();
  trace_scatter(ReduceOp::None, t, value.index(), index.index(), literal(VarType::Bool, 1).index());
  if (t != target.index()) target = Handle::steal(t);
}

/// `total` + `part`, where a gradient wider than its one-lane value is summed first.
Handle added(const Handle& total, Handle part, size_t lanes) {
  if (lanes == 1 && node_size(part.index()) != 1) part = Handle::steal(reduce(Reduction::Sum, part.index()));
  return total ? traced(Op::Add, total, part) : part;
}

/// Checks what chunk `first` of fn returned: one output per output of the first chunk, each
/// `count` rows of that output's width.
void check_outputs(MapSpec& s, const Values& out, size_t first, size_t count) {
  bool learning = s.out_widths.empty() && first == 0;
  if (!learning && out.size() != s.out_widths.size())
    throw ValueError("kiln: " + s.title + ": fn returned " + std::to_string(out.size()) +
                     " outputs for the chunk at row " + std::to_string(first) + " but " +
                     std::to_string(s.out_widths.size()) + " for the first chunk");
  for (size_t k = 0; k < out.size(); ++k) {
    if (!out[k]) throw ValueError("kiln: " + s.title + ": output " + std::to_string(k) + " of fn is empty");
    size_t lanes = node_size(out[k].index());
    if (learning) {
      if (lanes % count != 0)
        throw SizeError("kiln: " + s.title + ": output " + std::to_string(k) + " has " + std::to_string(lanes) +
                        " lanes for a chunk of " + std::to_string(count) + " rows; each output needs a whole " +
                        "number of lanes per row (its leading axis must be the chunk's rows)");
      s.out_widths.push_back(lanes / count);
    } else if (lanes != count * s.out_widths[k]) {
      throw SizeError("kiln: " + s.title + ": output " + std::to_string(k) + " has " + std::to_string(lanes) +
                      " lanes for the chunk of " + std::to_string(count) + " rows at row " + std::to_string(first) +
                      "; expected " + std::to_string(count * s.out_widths[k]) + " (" + std::to_string(s.out_widths[k]) +
                      " per row, as in the first chunk)");
    }
  }
}

/// Calls `visit(first, count)` for each chunk.
template <typename F> void for_each_chunk(const MapSpec& s, F&& visit) {
  for (size_t first = 0; first < s.rows; first += s.chunk_rows) visit(first, std::min(s.chunk_rows, s.rows - first));
}

/// A fresh AD leaf on the same value (`value` must be floating point).
Handle leaf_of(Handle value) {
  AdIndex ad = ad_enable(value.index());
  return Handle::steal(AdValue{value.release(), ad});
}

class ChunkedMapDerivative final : public CustomCallbacks {
 public:
  ChunkedMapDerivative(std::shared_ptr<MapSpec> spec, std::vector<bool> mapped_ad, std::vector<bool> whole_ad)
      : s_(std::move(spec)), mapped_ad_(std::move(mapped_ad)), whole_ad_(std::move(whole_ad)) {}
  std::string name() const override { return s_->title; }

  std::vector<Index> backward_grads(const std::vector<Index>& g) override {
    size_t nm = s_->mapped.size(), nw = s_->whole.size();
    Values mapped_grads(nm), whole_grads(nw + s_->captures.size());
    for_each_chunk(*s_, [&](size_t first, size_t count) {
      RecordingScope on(true);
      IsolationScope isolated(/*collect=*/true);
      Values args = chunk_args(first, count), whole = whole_args();
      Values out = s_->fn(args, whole, count);
      check_outputs(*s_, out, first, count);
      std::vector<AdIndex> targets;
      for (size_t k = 0; k < out.size(); ++k) {
        if (!out[k].ad() || !g.at(k)) continue;
        Handle seed = rows_of(Handle::borrow(g[k]), s_->out_widths[k], first, count, s_->rows);
        ad_accumulate_grad(out[k].ad(), seed.index());
        targets.push_back(out[k].ad());
      }
      // retain_graph: the chunk's graph goes with `out`; freeing edges now would mark the
      // captured arrays' real uses as consumed.
      if (!targets.empty()) ad_backward(targets.data(), targets.size(), /*retain_graph=*/true);
      Values pending;
      for (size_t k = 0; k < nm; ++k) {
        if (!args[k].ad()) continue;
        Handle grad = Handle::steal(ad_grad(args[k].ad()));
        if (!grad) continue;
        if (!mapped_grads[k])
          mapped_grads[k] = literal(node_type(s_->mapped[k].index()), 0, node_size(s_->mapped[k].index()));
        store_rows(mapped_grads[k], grad, s_->widths[k], first);
        pending.push_back(mapped_grads[k]);
      }
      for (size_t k = 0; k < nw + s_->captures.size(); ++k) {
        bool capture = k >= nw;
        AdIndex ad = capture ? s_->captures[k - nw].ad() : whole[k].ad();
        if (!ad) continue;
        Handle grad = Handle::steal(capture ? ad_collected(ad) : ad_grad(ad));
        if (!grad) continue;
        whole_grads[k] = added(whole_grads[k], grad, capture ? ad_size(ad) : node_size(whole[k].index()));
        pending.push_back(whole_grads[k]);
      }
      eval_values(pending);
    });
    std::vector<Index> result;
    for (Values* part : {&mapped_grads, &whole_grads})
      for (Handle& h : *part) result.push_back(h.release());
    return result;
  }

  std::vector<Index> forward_grads(const std::vector<Index>& g) override {
    size_t nm = s_->mapped.size(), nw = s_->whole.size();
    Values tangents;
    for_each_chunk(*s_, [&](size_t first, size_t count) {
      RecordingScope on(true);
      IsolationScope isolated(/*collect=*/false);
      Values args = chunk_args(first, count), whole = whole_args();
      for (size_t k = 0; k < nm; ++k)
        if (args[k].ad() && g.at(k))
          ad_set_grad(args[k].ad(), rows_of(Handle::borrow(g[k]), s_->widths[k], first, count, s_->rows).index());
      for (size_t k = 0; k < nw; ++k)
        if (whole[k].ad() && g.at(nm + k)) ad_set_grad(whole[k].ad(), g[nm + k]);
      Values out = s_->fn(args, whole, count);
      check_outputs(*s_, out, first, count);
      std::vector<AdIndex> targets;
      for (const Handle& v : out)
        if (v.ad()) targets.push_back(v.ad());
      if (!targets.empty()) ad_forward_to(targets.data(), targets.size());
      if (tangents.empty()) tangents.resize(out.size());
      Values pending;
      for (size_t k = 0; k < out.size(); ++k) {
        Handle t = Handle::steal(out[k].ad() ? ad_grad(out[k].ad()) : 0);
        if (!t) continue;
        if (node_size(t.index()) != node_size(out[k].index()))
          t = traced(Op::Add, t, literal(node_type(t.index()), 0, node_size(out[k].index())));
        if (s_->chunk_rows >= s_->rows) {
          tangents[k] = t;
          continue;
        }
        if (!tangents[k]) tangents[k] = literal(node_type(t.index()), 0, s_->rows * s_->out_widths[k]);
        store_rows(tangents[k], t, s_->out_widths[k], first);
        pending.push_back(tangents[k]);
      }
      eval_values(pending);
    });
    std::vector<Index> result;
    for (Handle& h : tangents) result.push_back(h.release());
    return result;
  }

 private:
  /// The chunk's rows of each mapped input; leaves where the input carries derivatives.
  Values chunk_args(size_t first, size_t count) const {
    Values args;
    for (size_t k = 0; k < s_->mapped.size(); ++k) {
      Handle rows = rows_of(s_->mapped[k], s_->widths[k], first, count, s_->rows);
      args.push_back(mapped_ad_[k] ? leaf_of(std::move(rows)) : std::move(rows));
    }
    return args;
  }
  /// The whole inputs; fresh leaves on the same values where they carry derivatives.
  Values whole_args() const {
    Values whole;
    for (size_t k = 0; k < s_->whole.size(); ++k)
      whole.push_back(whole_ad_[k] ? leaf_of(s_->whole[k].detached()) : s_->whole[k].detached());
    return whole;
  }

  std::shared_ptr<MapSpec> s_;
  std::vector<bool> mapped_ad_, whole_ad_;
};

/// The primal: every chunk with derivatives suspended, except that the first is traced with
/// them on, to find the differentiable arrays fn reads from outside (then dropped).
Values run_primal(MapSpec& s, bool discover) {
  Values joined;
  for_each_chunk(s, [&](size_t first, size_t count) {
    Values args;
    for (size_t k = 0; k < s.mapped.size(); ++k)
      args.push_back(rows_of(s.mapped[k], s.widths[k], first, count, s.rows));
    Values out;
    {
      RecordingScope recording(discover && first == 0);
      uint64_t serial = ad_next_serial();
      out = s.fn(args, s.whole, count);
      check_outputs(s, out, first, count);
      std::vector<AdIndex> roots;
      for (const Handle& v : out)
        if (v.ad()) roots.push_back(v.ad());
      if (!roots.empty())
        for (AdIndex c : ad_frontier(roots.data(), roots.size(), serial))
          s.captures.push_back(Handle::borrow(AdOperand{0, c}));
    }
    if (s.chunk_rows >= s.rows) {
      for (const Handle& v : out) joined.push_back(v.detached());
      return;
    }
    if (joined.empty())
      for (size_t k = 0; k < out.size(); ++k)
        joined.push_back(Handle::steal(make_empty(node_type(out[k].index()), s.rows * s.out_widths[k])));
    for (size_t k = 0; k < out.size(); ++k) store_rows(joined[k], out[k].detached(), s.out_widths[k], first);
    eval_values(joined);
  });
  return joined;
}

}  // namespace

Values chunked_map(const ChunkFn& fn, const Values& mapped, const std::vector<size_t>& widths, size_t rows,
                   const Values& whole, size_t chunk_rows, const std::string& title) {
  auto s = std::make_shared<MapSpec>();
  s->title = title;
  if (rows == 0) throw SizeError("kiln: " + s->title + ": the mapped inputs have no rows; there is nothing to map");
  if (chunk_rows == 0) throw ValueError("kiln: " + s->title + ": the chunk size must be at least one row");
  for (size_t k = 0; k < mapped.size(); ++k)
    if (node_size(mapped[k].index()) != rows * widths.at(k))
      throw SizeError("kiln: " + s->title + ": mapped input " + std::to_string(k) + " has " +
                      std::to_string(node_size(mapped[k].index())) + " lanes, expected " + std::to_string(rows) +
                      " rows of " + std::to_string(widths[k]) + "; every mapped input needs the same number of rows");
  s->fn = fn;
  s->widths = widths;
  s->rows = rows;
  s->chunk_rows = chunk_rows;
  for (const Handle& h : mapped) s->mapped.push_back(h.detached());
  for (const Handle& h : whole) s->whole.push_back(h.detached());

  auto carries = [](const Values& values) {
    std::vector<bool> flags;
    for (const Handle& h : values) flags.push_back(h.ad() != 0);
    return flags;
  };
  std::vector<bool> mapped_ad = carries(mapped), whole_ad = carries(whole);
  bool recording = ad_recording();
  Values outputs = run_primal(*s, recording);
  bool differentiable = std::count(mapped_ad.begin(), mapped_ad.end(), true) +
                            std::count(whole_ad.begin(), whole_ad.end(), true) + s->captures.size() >
                        0;
  if (!recording || !differentiable) return outputs;

  std::vector<AdOperand> operands;
  for (const Values* part : {&mapped, &whole, static_cast<const Values*>(&s->captures)})
    for (const Handle& h : *part) operands.push_back(h.operand());
  std::vector<Index> values;
  for (const Handle& h : outputs) values.push_back(h.index());
  auto op = std::make_shared<ChunkedMapDerivative>(s, mapped_ad, whole_ad);
  std::vector<AdValue> connected = ad_custom(op, operands, values);
  Values result;
  for (AdValue& v : connected) result.push_back(Handle::steal(v));
  return result;
}

}  // namespace kiln::detail
