// The installed evaluator behind the read barrier.
#include "ir/read_barrier.h"

#include <kiln/errors.h>

namespace kiln::detail {
namespace {
Evaluator installed_evaluator = nullptr;
}  // namespace

void install_evaluator(Evaluator evaluator) { installed_evaluator = evaluator; }

void evaluate_for_read(const Index* indices, size_t count) {
  if (!installed_evaluator) throw InternalError("kiln: no evaluator installed (src/eval/evaluate.cpp)");
  installed_evaluator(indices, count);
}

}  // namespace kiln::detail
