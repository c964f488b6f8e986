// kiln_bench's memory group (memory_bench.cpp): gathers and scatter-adds at random indices,
// Kiln against hand-written C++ loops, and what the bounds check costs native code.
#pragma once

#include "report.h"

#include <string>
#include <vector>

namespace bench {

/// `memory`: a gather of 2^24 lanes (2^20 with `quick`) from a table of 2^20 floats and a
/// scatter-add of as many lanes into 4096 bins, at hashed indices. Rows: Kiln (whose
/// out-of-range lanes read 0 or write nothing, in fast mode too) against the unchecked C++
/// loop, and the same loop with Kiln's bounds check against the unchecked one. Appends to
/// `failures` when Kiln's results differ from the loop's.
void run_memory(bool quick, std::vector<Row>& rows, std::vector<std::string>& failures);

}  // namespace bench
