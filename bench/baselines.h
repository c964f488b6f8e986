// Hand-written C++ versions of the benchmarked computations: plain loops over raw
// pointers, compiled with -O3 -march=native (see bench/CMakeLists.txt) and parallelized
// with oneTBB over blocks of `block` elements, as Kiln launches its kernels.
#pragma once

#include "path_workload.h"
#include "workloads.h"

#include <cstddef>

namespace bench {

/// The compiler and flags the baselines were built with, for the report.
const char* baseline_build();

void fused10_loop(const float* x, const float* y, const float* z, float* out, size_t n, size_t block);
void triad_loop(const float* a, float s, const float* b, float* out, size_t n, size_t block);

/// Per-pixel loop that leaves as soon as the orbit escapes: the honest baseline, doing
/// only the work each pixel needs.
void mandelbrot_early_exit(const MandelbrotView& view, float* counts, size_t block);
/// The branch-free formulation Kiln runs (every lane does every iteration under a mask),
/// hand-written over small tiles of pixels so the compiler can vectorize across pixels.
void mandelbrot_branch_free(const MandelbrotView& view, float* counts, size_t block);

/// The path tracer of bench/path_workload.h, one lane at a time with early exit (a switch
/// over the material id); writes each lane's radiance to `red`, `green`, `blue` (n floats
/// each) and returns the number of bounces of all lanes together.
uint64_t path_trace_loop(const path::Parameters& params, size_t n, float* red, float* green, float* blue, size_t block);

}  // namespace bench
