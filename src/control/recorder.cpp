// RecorderCore (detail/control_api.h): records appended per active lane through an atomic
// counter, from any kernel, loop body or call.
#include "control/lanes.h"

#include "ir/node.h"

#include <algorithm>

namespace kiln::detail {

RecorderCore::RecorderCore(std::vector<VarType> columns, size_t capacity, std::vector<size_t> widths)
    : columns_(std::move(columns)), capacity_(capacity), widths_(std::move(widths)) {
  if (columns_.empty()) throw ValueError("kiln: Recorder(): no fields; give the type of each value a record holds");
  if (widths_.empty()) widths_.assign(columns_.size(), 1);
  size_t widest = 0;
  for (size_t f = 0; f < widths_.size(); ++f) {
    size_t first = field_of_column_.size();
    if (widths_[f] == 0 || first + widths_[f] > columns_.size())
      throw InternalError("RecorderCore: field widths do not add up to the number of columns");
    for (size_t j = 0; j < widths_[f]; ++j) {
      if (columns_[first + j] != columns_[first])
        throw InternalError("RecorderCore: the columns of one field must have one type");
      field_of_column_.push_back(f);
    }
    widest = std::max(widest, widths_[f]);
  }
  if (field_of_column_.size() != columns_.size())
    throw InternalError("RecorderCore: field widths do not add up to the number of columns");
  if (capacity >= UINT32_MAX / widest)
    throw SizeError("kiln: Recorder(): a capacity of " + std::to_string(capacity) + " records of " +
                    std::to_string(widest) +
                    " values is more than the 2^32 - 1 values a UInt32 index addresses; "
                    "use several recorders");
  clear();
  for (size_t f = 0, first = 0; f < widths_.size(); first += widths_[f], ++f)
    fields_.push_back(Handle::steal(make_empty(columns_[first], capacity * widths_[f])));
}

void RecorderCore::clear() {
  uint32_t zero = 0;
  counter_ = Handle::steal(make_copy(VarType::UInt32, &zero, 1));
}

void RecorderCore::append(Index active_index, const Values& values) {
  if (values.size() != columns_.size())
    throw TypeError("kiln: Recorder.append(): " + std::to_string(values.size()) + " values for " +
                    std::to_string(columns_.size()) + " fields; pass one value per field");
  for (size_t k = 0; k < values.size(); ++k) {
    if (!values[k]) throw ValueError("kiln: Recorder.append(): value " + std::to_string(k) + " is empty");
    if (node_type(values[k].index()) != columns_[k])
      throw TypeError("kiln: Recorder.append(): value " + std::to_string(k) + " is " +
                      type_name(node_type(values[k].index())) + " but the field holds " + type_name(columns_[k]));
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
  for (size_t k = 0, j = 0; k < columns_.size(); ++k) {
    size_t f = field_of_column_[k];
    j = k > 0 && field_of_column_[k - 1] == f ? j + 1 : 0;  // the column's place within its field
    Handle position = widths_[f] == 1 ? slot
                                      : traced(Op::Add, traced(Op::Mul, slot, literal(VarType::UInt32, widths_[f])),
                                               literal(VarType::UInt32, j));
    Index buffer = fields_[f].index();
    trace_scatter(ReduceOp::None, buffer, values[k].index(), position.index(), fits.index());
    if (buffer != fields_[f].index()) fields_[f] = Handle::steal(buffer);
  }
}

bool RecorderCore::pending() const {
  StateLock lock(state().mutex);
  return node(counter_.index()).dirty_size != 0;
}

size_t RecorderCore::count() const {
  uint32_t n = 0;
  read(counter_.index(), 0, &n);
  return n;
}

Handle RecorderCore::stored(size_t f) const {
  if (f >= fields_.size())
    throw IndexError("kiln: Recorder.field(): field " + std::to_string(f) + " of " + std::to_string(fields_.size()));
  return Handle::steal(make_prefix(fields_[f].index(), std::min(count(), capacity_) * widths_[f]));
}

Handle RecorderCore::field(size_t f) const {
  size_t n = count();
  if (n > capacity_)
    throw SizeError("kiln: Recorder: " + std::to_string(n) + " records were appended but the capacity is " +
                    std::to_string(capacity_) + ", so " + std::to_string(n - capacity_) +
                    " were not stored; create the Recorder with a capacity of at least " + std::to_string(n) +
                    " and run again");
  return stored(f);
}

}  // namespace kiln::detail
