// kiln_bench's control-flow group (control_bench.cpp): a path-tracer-shaped loop written
// with while_loop and dispatch over a Registry of materials, in symbolic against evaluated
// mode, and the same paths hand-written in C++.
#pragma once

#include "report.h"

#include <string>
#include <vector>

namespace bench {

/// `control`: 2^20 paths (2^16 with `quick`) of up to 16 bounces at three materials with
/// Russian roulette (bench/path_workload.h). Rows: time per render, peak memory and the
/// first render's compile time, symbolic against evaluated; kernels compiled when a
/// material's parameter changes three times after warm-up, per mode; symbolic against the
/// C++ loop. Appends to `failures` when the two modes' radiance differ in any bit.
void run_control(bool quick, std::vector<Row>& rows, std::vector<std::string>& failures);

}  // namespace bench
