// Why a kernel is compiled, in words a user can act on: which literal changed (with its
// type, label and creation site, and the old and new value), or, for a shape never seen
// before, the closest kernel compiled earlier and the first statement where they differ.
#pragma once

#include "cache/kernel_key.h"
#include "form/kernel_form.h"

#include <deque>
#include <memory>
#include <string>
#include <vector>

namespace kiln::detail {

/// "literal #3 (u32, label `crop_offset.x`, created at film.cpp:120) changed 0 → 5" for
/// the first of `changed` (slot numbers), then "and 4 more literals" when there are others.
std::string describe_literal_changes(const KernelForm& form, const KernelShape& shape,
                                     const std::vector<size_t>& changed, const std::vector<uint64_t>& old_values,
                                     const StatementNotes& notes);

/// The forms of recently compiled kernels, to explain the compilation of a new shape.
class CompiledShapes {
 public:
  void add(const Hash128& key, std::shared_ptr<const KernelForm> form);
  /// "first time this kernel shape was seen", plus the closest kernel compiled before (the
  /// longest common prefix of statements) and the first statement where they differ.
  std::string explain_new_shape(const KernelForm& form, const StatementNotes& notes) const;

 private:
  static constexpr size_t kRemembered = 64;
  std::deque<std::pair<Hash128, std::shared_ptr<const KernelForm>>> recent_;
};

}  // namespace kiln::detail
