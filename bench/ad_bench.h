// kiln_bench's automatic-differentiation group (ad_bench.cpp): the reverse pass of three
// programs against their primal, measured in the same process.
#pragma once

#include "report.h"

#include <string>
#include <vector>

namespace bench {

/// `ad`: (a) a 20-op elementwise program, (b) an MLP-shaped program (4-16-16-1, weights as
/// one-lane parameters, ReLU, squared loss), (c) a two-bounce path tracer over three
/// materials (symbolic while_loop with a stored trajectory + dispatch). Each row: the
/// reverse pass (backward() and the evaluation of every gradient) against the primal
/// (tracing and evaluating the loss); the goal is a reverse pass within 3x the primal.
/// Appends to `failures` when a gradient disagrees with a finite difference.
void run_ad(bool quick, std::vector<Row>& rows, std::vector<std::string>& failures);

}  // namespace bench
