// One body for alike instances of a symbolic dispatch. Instances of one class usually trace
// the same operations and differ only in their one-element values (a material's colour, a
// roughness): each would otherwise be a region of its own in the kernel, and a packet
// whose lanes hit k of them runs k bodies. body_shape() describes a traced body with those
// values abstracted; instances of equal shape share one region, traced by replaying the
// first one's function with its values replaced by per-lane selections of everyone's
// (OperandSubstitution).
#pragma once

#include "control/lanes.h"

#include <cstdint>
#include <unordered_map>
#include <vector>

namespace kiln::detail {

/// A traced body with its instance values abstracted: two bodies of equal `tokens` compute
/// the same function of their arguments and of their `leaves`, taken in order.
struct BodyShape {
  bool shareable = false;  ///< false: side effects, nested statements, derivatives, ...
  std::vector<uint64_t> tokens;
  std::vector<Index> leaves;  ///< one-element values from before the body, first use first
};

/// The shape of a body that returned `outputs` from `args` (the region's placeholders of
/// the statement's arguments) inside the open region `region`, whose first node has
/// serial `first_serial`. `merged_args[j]`, a placeholder of merged values, must stand
/// where leaf j stood (else the body is not shareable) and is listed as that leaf.
BodyShape body_shape(const Values& outputs, const Values& args, uint32_t region, uint64_t first_serial,
                     const std::vector<Index>& merged_args = {});

/// While alive, trace() replaces every operand that `substitutions` maps (not a gather's
/// source).
class OperandSubstitution {
 public:
  explicit OperandSubstitution(const std::unordered_map<Index, Index>& substitutions);
  ~OperandSubstitution();
  OperandSubstitution(const OperandSubstitution&) = delete;
  OperandSubstitution& operator=(const OperandSubstitution&) = delete;

 private:
  const std::unordered_map<Index, Index>* saved_;
};

}  // namespace kiln::detail
