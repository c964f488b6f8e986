// Recording a symbolic region (see recording.h).
#include "control/recording.h"

#include "ir/node.h"

namespace kiln::detail {

Values record_region(const char* statement, const std::string& name, size_t lanes, const Values& initial,
                     const ConditionFn& cond, const std::function<Values(const Values&, Values& outputs)>& body,
                     bool once) {
  uint32_t id;
  {
    StateLock lock(state().mutex);
    id = open_region(statement, name, lanes, once);
  }
  try {
    Values phis;
    {
      StateLock lock(state().mutex);
      for (const Handle& v : initial) phis.push_back(Handle::steal(make_loop_phi(id, v.index())));
    }
    Handle active;
    {
      Handle in_enclosing = within_enclosing(cond(phis));
      StateLock lock(state().mutex);
      active = Handle::steal(make_loop_cond(id, in_enclosing.index()));
    }
    Values next, outputs;
    {
      MaskScope scope(active.index());
      next = body(phis, outputs);
    }
    std::vector<Index> updates;
    for (const Handle& v : next) updates.push_back(v.index());
    StateLock lock(state().mutex);
    for (const Handle& out : outputs) {  // carried from a zero start
      Handle zero = literal(node_type(out.index()), 0);
      dec_ref(make_loop_phi(id, zero.index()));  // the region holds it
      updates.push_back(out.index());
    }
    Values results;
    for (Index r : close_region(id, updates)) results.push_back(Handle::steal(r));
    return results;
  } catch (...) {
    StateLock lock(state().mutex);
    if (find_region(id) && find_region(id)->open) abandon_region(id);
    throw;
  }
}

}  // namespace kiln::detail
