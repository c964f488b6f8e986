// print_async(): per-lane output from inside kernels. Each call records (lane, sequence
// number, values...) into a RecorderCore of its own; the sequence numbers come from one
// atomic counter shared by all calls, so they follow program order within a lane. After
// every evaluation, the records of the calls whose kernels have run are merged, grouped by
// lane in lane order (arrays of the same size together), and printed to stdout.
#include "control/format_spec.h"
#include "control/lanes.h"

#include "ir/node.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <tuple>

namespace kiln::detail {
namespace {

/// Lines kept per print_async() call: enough for 16 iterations of every lane of a loop,
/// within [1024, 2^20]; the number of lines beyond it is reported, never dropped silently.
size_t print_capacity(size_t lanes) { return std::clamp<size_t>(lanes * 16, 1024, size_t(1) << 20); }

struct PendingPrint {
  std::vector<std::string> pieces;        ///< the text around the fields
  std::vector<FormatSpec> specs;          ///< one per value
  std::unique_ptr<RecorderCore> records;  ///< fields: lane, sequence number, the values
  size_t lanes = 0;
  uint32_t region = 0;  ///< the loop body it was traced in (printable once that loop ran)
};

/// The counter that numbers every printed line in program order.
Handle& sequence_counter() {
  static Handle counter = [] {
    uint32_t zero = 0;
    return Handle::steal(make_copy(VarType::UInt32, &zero, 1));
  }();
  return counter;
}

std::vector<PendingPrint>& pending_prints() {
  static std::vector<PendingPrint> prints;
  return prints;
}

/// One printed line: which call, which of its records, and where it sorts.
struct Line {
  size_t lanes;
  uint32_t lane, sequence;
  size_t print, record;
};

/// Prints the records of `prints` merged: by array size, lane, then program order.
void print_merged(const std::vector<PendingPrint>& prints) {
  std::vector<std::vector<Handle>> columns(prints.size());
  std::vector<std::vector<std::vector<uint8_t>>> column_data(prints.size());  // on the host
  std::vector<Line> lines;
  std::string overflow;
  for (size_t i = 0; i < prints.size(); ++i) {
    const RecorderCore& records = *prints[i].records;
    size_t count = records.count(), kept = std::min(count, records.capacity());
    for (size_t k = 0; k < records.columns().size(); ++k) {
      columns[i].push_back(records.stored(k));
      Index stored = columns[i].back().index();
      column_data[i].emplace_back(node_size(stored) * type_size(node_type(stored)));
      read_all(stored, column_data[i].back().data());
    }
    const uint32_t* lane = reinterpret_cast<const uint32_t*>(column_data[i][0].data());
    const uint32_t* sequence = reinterpret_cast<const uint32_t*>(column_data[i][1].data());
    for (size_t r = 0; r < kept; ++r) lines.push_back(Line{prints[i].lanes, lane[r], sequence[r], i, r});
    if (count > kept)
      overflow += "... " + std::to_string(count - kept) + " more lines of print_async() were not kept (a call holds " +
                  std::to_string(kept) + " lines); print fewer lanes (use `active`)\n";
  }
  std::sort(lines.begin(), lines.end(), [](const Line& a, const Line& b) {
    return std::tie(a.lanes, a.lane, a.sequence) < std::tie(b.lanes, b.lane, b.sequence);
  });
  std::string out;
  for (const Line& line : lines) {
    const PendingPrint& p = prints[line.print];
    out += p.pieces[0];
    for (size_t k = 2; k < p.records->columns().size(); ++k) {
      VarType t = p.records->columns()[k];
      out += format_value(p.specs[k - 2], t, column_data[line.print][k].data() + line.record * type_size(t));
      out += p.pieces[k - 1];
    }
    out += '\n';
  }
  out += overflow;
  std::fwrite(out.data(), 1, out.size(), stdout);
  std::fflush(stdout);
}

/// After an evaluation: prints every call whose records are complete (its kernel ran).
void flush_prints() {
  static bool flushing = false;
  if (flushing) return;
  flushing = true;
  auto& prints = pending_prints();
  std::vector<PendingPrint> ready;
  try {
    for (size_t i = 0; i < prints.size();) {
      const PendingPrint& p = prints[i];
      bool counter_pending = false;
      {
        StateLock lock(state().mutex);
        if (scope_open(p.region)) {
          ++i;
          continue;
        }
        counter_pending = p.records->pending();
      }
      if (counter_pending) {
        ++i;
        continue;
      }
      ready.push_back(std::move(prints[i]));
      prints.erase(prints.begin() + long(i));
    }
    if (!ready.empty()) print_merged(ready);
  } catch (...) {
    flushing = false;
    throw;
  }
  flushing = false;
}

}  // namespace

void print_async(const std::string& format, const Values& values, Index active_index) {
  ParsedFormat parsed = parse_format(format);
  if (parsed.specs.size() != values.size())
    throw ValueError("kiln: print_async(): the format \"" + format + "\" has " + std::to_string(parsed.specs.size()) +
                     " fields but " + std::to_string(values.size()) + " values were given; use one {} per value");
  Handle active = active_index ? Handle::borrow(active_index) : literal(VarType::Bool, 1);
  Values all = values;
  all.push_back(active);
  size_t lanes = common_size(all, "print_async()");
  std::vector<VarType> fields{VarType::UInt32, VarType::UInt32};
  for (const Handle& v : values) {
    if (!v) throw ValueError("kiln: print_async(): a value is empty (default-constructed)");
    fields.push_back(node_type(v.index()));
  }
  PendingPrint p;
  for (size_t k = 0; k < values.size(); ++k) p.specs.push_back(parse_format_spec(parsed.specs[k], fields[k + 2]));
  p.pieces = std::move(parsed.text);
  p.records = std::make_unique<RecorderCore>(fields, print_capacity(lanes));
  StateLock lock(state().mutex);
  Index sequence = sequence_counter().index();
  Handle first = literal(VarType::UInt32, 0, lanes);
  Values record{Handle::steal(make_counter(lanes)),
                Handle::steal(trace_scatter_inc(sequence, first.index(), active.index()))};
  if (sequence != sequence_counter().index()) sequence_counter() = Handle::steal(sequence);
  record.insert(record.end(), values.begin(), values.end());
  p.records->append(active.index(), record);
  p.lanes = lanes;
  p.region = current_region();
  static bool hooked = false;
  if (!hooked) {
    state().after_evaluation.push_back(flush_prints);
    hooked = true;
  }
  pending_prints().push_back(std::move(p));
}

}  // namespace kiln::detail
