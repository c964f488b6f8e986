// The read barrier: an operation that reads an array's memory (a gather, a scatter into
// it, an operand that pending scatters write) first evaluates what that array still waits
// for. Evaluation lives above the IR, in the driver (src/eval/evaluate.cpp), which installs
// itself here when the library loads, so the IR never includes the layers above it.
#pragma once

#include <kiln/detail/trace_api.h>

#include <cstddef>

namespace kiln::detail {

/// Evaluates the given nodes together with every scheduled node and pending side effect.
using Evaluator = void (*)(const Index* indices, size_t count);

/// Called once, by the evaluation driver.
void install_evaluator(Evaluator evaluator);

/// Runs the installed evaluator (the caller holds the state lock).
void evaluate_for_read(const Index* indices, size_t count);

}  // namespace kiln::detail
