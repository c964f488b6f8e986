// Kernel history: one record per launch (what ran, where the kernel came from, why it was
// compiled, how long each step took) and the log line KILN_LOG=info prints for it.
#pragma once

#include "cache/kernel_cache.h"
#include "form/kernel_form.h"

namespace kiln::detail {

/// Records a launch of `cached` over `size` lanes in kernel_history() and logs it.
void record_launch(const KernelForm& form, const CachedKernel& cached, size_t size, Device device, const char* backend,
                   double lookup_ms, double run_ms);
/// Records a library call that stands between kernels (matmul's GEMM) in kernel_history():
/// source Library, `what` as its reason, `size` output elements.
void record_library_call(const std::string& what, size_t size, size_t inputs, Device device, double run_ms);

}  // namespace kiln::detail
