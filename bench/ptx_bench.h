// kiln_bench's `ptx` group (ptx_bench.cpp): what generating a GPU kernel costs, measured
// where there is no GPU.
#pragma once

#include "report.h"

#include <vector>

namespace bench {

/// `ptx`: kernel_source() of a 10-, 100- and 1000-op chain for CUDA (scheduling, lowering,
/// LLVM's NVPTX code generator: PTX text) against a cold CPU compile of the same chain
/// (lowering, LLVM x86 code generation, loading into the JIT); ptxas on that PTX (what the
/// driver's JIT does on a GPU) in the note, where the CUDA toolkit is installed.
void run_ptx(bool quick, std::vector<Row>& rows);

}  // namespace bench
