// Evaluation: turns pending work into kernels and runs them. Callers hold the state lock.
#pragma once

#include <kiln/detail/trace_api.h>

#include <vector>

namespace kiln::detail {

/// Evaluates the given nodes (they become Data) together with every scheduled node and
/// every pending side effect: one kernel per array size.
void evaluate(const Index* indices, size_t count);

/// The nodes among `indices` and `more` that are not evaluated yet, in creation order,
/// each once; `indices` are checked to be live and evaluable for `what` (null ones skipped).
std::vector<Index> unevaluated_roots(const Index* indices, size_t count, const std::vector<Index>& more,
                                     const char* what);

}  // namespace kiln::detail
