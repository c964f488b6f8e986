// Evaluation: turns pending work into kernels and runs them. Callers hold the state lock.
#pragma once

#include <kiln/detail/trace_api.h>

namespace kiln::detail {

/// Evaluates the given nodes (they become Data) together with every scheduled node and
/// every pending side effect: one kernel per array size.
void evaluate(const Index* indices, size_t count);

}  // namespace kiln::detail
