// The hand-written CUDA baseline of kiln_bench's `gpu` group: triad and the fused 10-op
// expression of bench/workloads.h over n floats, one thread per element, compiled by nvcc
// where a GPU is (kiln_bench builds and runs it). Prints "triad_s fused_s": the median of
// 10 launches after 3 warm-ups, timed with CUDA events.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

__global__ void triad_kernel(const float* a, const float* b, float* out, float s, size_t n) {
  size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a[i] * s + b[i];
}

/// fused10() of bench/workloads.h, written out.
__global__ void fused_kernel(const float* x, const float* y, const float* z, float* out, size_t n) {
  size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float t = x[i] * y[i] + z[i];
  t = t * 0.5f - sqrtf(fabsf(x[i]));
  t = fminf(t, y[i]);
  t = t * t;
  out[i] = fmaxf(t, z[i]) + 1.0f;
}

template <typename Launch> double median_seconds(Launch launch) {
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  std::vector<double> samples;
  for (int r = 0; r < 13; ++r) {
    cudaEventRecord(start);
    launch();
    cudaEventRecord(stop);
    cudaEventSynchronize(stop);
    float ms = 0;
    cudaEventElapsedTime(&ms, start, stop);
    if (r >= 3) samples.push_back(ms / 1e3);
  }
  std::sort(samples.begin(), samples.end());
  return samples[samples.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  size_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : size_t(1) << 28;
  float *x, *y, *z, *out;
  for (float** p : {&x, &y, &z, &out})
    if (cudaMalloc(p, n * sizeof(float)) != cudaSuccess) return std::fprintf(stderr, "cudaMalloc failed\n"), 1;
  cudaMemset(x, 0, n * sizeof(float));
  cudaMemset(y, 0, n * sizeof(float));
  cudaMemset(z, 0, n * sizeof(float));
  unsigned block = 256, grid = unsigned((n + block - 1) / block);
  double triad = median_seconds([&] { triad_kernel<<<grid, block>>>(x, y, out, 3.0f, n); });
  double fused = median_seconds([&] { fused_kernel<<<grid, block>>>(x, y, z, out, n); });
  if (cudaGetLastError() != cudaSuccess) return std::fprintf(stderr, "a kernel failed\n"), 1;
  std::printf("%.9f %.9f\n", triad, fused);
  return 0;
}
