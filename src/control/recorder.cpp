// RecorderCore (detail/control_api.h): records appended per active lane through an atomic
// counter, from any kernel, loop body or call.
#include "control/lanes.h"

#include "ir/node.h"

#include <algorithm>

namespace kiln::detail {

RecorderCore::RecorderCore(std::vector<VarType> fields, size_t capacity)
    : fields_(std::move(fields)), capacity_(capacity) {
  if (fields_.empty()) throw ValueError("kiln: Recorder(): no fields; give the type of each value a record holds");
  if (capacity >= UINT32_MAX)
    throw SizeError("kiln: Recorder(): a capacity of " + std::to_string(capacity) +
                    " records is more than the 2^32 - 1 a UInt32 counter addresses; use several recorders");
  clear();
  for (VarType t : fields_) columns_.push_back(Handle::steal(make_empty(t, capacity)));
}

void RecorderCore::clear() {
  uint32_t zero = 0;
  counter_ = Handle::steal(make_copy(VarType::UInt32, &zero, 1));
}

void RecorderCore::append(Index active_index, const Values& values) {
  if (values.size() != fields_.size())
    throw TypeError("kiln: Recorder.append(): " + std::to_string(values.size()) + " values for " +
                    std::to_string(fields_.size()) + " fields; pass one value per field");
  for (size_t k = 0; k < values.size(); ++k) {
    if (!values[k]) throw ValueError("kiln: Recorder.append(): value " + std::to_string(k) + " is empty");
    if (node_type(values[k].index()) != fields_[k])
      throw TypeError("kiln: Recorder.append(): value " + std::to_string(k) + " is " +
                      type_name(node_type(values[k].index())) + " but the field holds " + type_name(fields_[k]));
  }
  Handle active = Handle::borrow(active_index);
  Values all = values;
  all.push_back(active);
  size_t lanes = common_size(all, "Recorder.append()");
  Index counter = counter_.index();
  Handle zero = literal(VarType::UInt32, 0, lanes);  // one increment per lane
  Handle slot = Handle::steal(trace_scatter_inc(counter, zero.index(), active.index()));
  if (counter != counter_.index()) counter_ = Handle::steal(counter);
  Handle fits = traced(Op::And, active, traced(Op::Lt, slot, literal(VarType::UInt32, capacity_)));
  for (size_t k = 0; k < fields_.size(); ++k) {
    Index column = columns_[k].index();
    trace_scatter(ReduceOp::None, column, values[k].index(), slot.index(), fits.index());
    if (column != columns_[k].index()) columns_[k] = Handle::steal(column);
  }
}

bool RecorderCore::pending() const {
  StateLock lock(kState->mutex);
  return node(counter_.index()).dirty_size != 0;
}

size_t RecorderCore::count() const {
  uint32_t n = 0;
  read(counter_.index(), 0, &n);
  return n;
}

Handle RecorderCore::stored(size_t k) const {
  if (k >= fields_.size())
    throw IndexError("kiln: Recorder.field(): field " + std::to_string(k) + " of " + std::to_string(fields_.size()));
  return Handle::steal(make_prefix(columns_[k].index(), std::min(count(), capacity_)));
}

Handle RecorderCore::field(size_t k) const {
  size_t n = count();
  if (n > capacity_)
    throw SizeError("kiln: Recorder: " + std::to_string(n) + " records were appended but the capacity is " +
                    std::to_string(capacity_) + ", so " + std::to_string(n - capacity_) +
                    " were not stored; create the Recorder with a capacity of at least " + std::to_string(n) +
                    " and run again");
  return stored(k);
}

}  // namespace kiln::detail
