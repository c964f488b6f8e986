// CustomOp: user-supplied derivatives. The outputs are connected to the inputs through one
// hub node; traversals that reach the hub call the op's forward() or backward() instead of
// following edges (src/ad/traverse.cpp).
#include "ad/graph.h"

#include <kiln/errors.h>

namespace kiln::detail {

using namespace ad;

std::vector<AdValue> ad_custom(std::shared_ptr<CustomCallbacks> op, const std::vector<AdOperand>& inputs,
                               const std::vector<Index>& outputs) {
  std::vector<AdValue> result;
  for (Index out : outputs) {
    inc_ref(out);
    result.push_back({out, 0});
  }
  bool any_input = false;
  for (const AdOperand& in : inputs) any_input |= in.ad != 0;
  if (!any_input || !ad_recording()) return result;

  GraphLock lock(graph().mutex);
  AdIndex hub = new_node(VarType::Float32, 1);
  auto info = std::make_unique<CustomHub>();
  info->op = std::move(op);
  for (const AdOperand& in : inputs) {
    info->inputs.push_back(in.ad);
    if (in.ad) add_edge(in.ad, hub, EdgeKind::Structural);
  }
  for (AdValue& out : result) {
    if (!is_float(node_type(out.value))) {
      info->outputs.push_back(0);
      continue;
    }
    out.ad = new_node(node_type(out.value), node_size(out.value));
    add_edge(hub, out.ad, EdgeKind::Structural);
    info->outputs.push_back(out.ad);
  }
  graph().nodes[hub].hub = std::move(info);
  ad_dec_ref(hub);  // the outputs' edges keep it alive
  return result;
}

}  // namespace kiln::detail
