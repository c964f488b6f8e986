// The CUDA baselines of kiln_bench's `gpu` group, compiled by nvcc where a GPU is
// (kiln_bench builds and runs it): triad and the fused 10-op expression of
// bench/workloads.h over n floats, one thread per element, written by hand; and CUB (the
// toolkit's tuned primitives) for a sum, an inclusive scan and the indices of flagged
// elements over the same floats. Prints "triad_s fused_s sum_s scan_s compress_s": each the
// median of 10 runs after 3 warm-ups, timed with CUDA events.
#include <cub/cub.cuh>
#include <cuda_runtime.h>
#include <thrust/iterator/counting_iterator.h>

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

__global__ void flag_kernel(const float* x, bool* flags, float threshold, size_t n) {
  size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) flags[i] = x[i] > threshold;
}

__global__ void ramp_kernel(float* x, size_t n) {
  size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) x[i] = float(i % 1000) * 1e-3f;
}

/// CUB's temporary storage for one call, sized by a first call with none.
struct Scratch {
  void* memory = nullptr;
  size_t bytes = 0;
  template <typename Call> void run(Call call) {
    size_t needed = 0;
    call(static_cast<void*>(nullptr), needed);
    if (needed > bytes) {
      cudaFree(memory);
      cudaMalloc(&memory, needed);
      bytes = needed;
    }
    call(memory, bytes);
  }
};

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
  unsigned block = 256, grid = unsigned((n + block - 1) / block);
  ramp_kernel<<<grid, block>>>(x, n);
  cudaMemset(y, 0, n * sizeof(float));
  cudaMemset(z, 0, n * sizeof(float));
  double triad = median_seconds([&] { triad_kernel<<<grid, block>>>(x, y, out, 3.0f, n); });
  double fused = median_seconds([&] { fused_kernel<<<grid, block>>>(x, y, z, out, n); });

  float* total;
  bool* flags;
  uint32_t *selected, *count;
  cudaMalloc(&total, sizeof(float));
  cudaMalloc(&flags, n);
  cudaMalloc(&selected, n * sizeof(uint32_t));
  cudaMalloc(&count, sizeof(uint32_t));
  flag_kernel<<<grid, block>>>(x, flags, 0.5f, n);
  Scratch scratch;
  double sum = median_seconds([&] {
    scratch.run([&](void* temp, size_t& bytes) { cub::DeviceReduce::Sum(temp, bytes, x, total, n); });
  });
  double scan = median_seconds([&] {
    scratch.run([&](void* temp, size_t& bytes) { cub::DeviceScan::InclusiveSum(temp, bytes, x, out, n); });
  });
  double compress = median_seconds([&] {
    scratch.run([&](void* temp, size_t& bytes) {
      cub::DeviceSelect::Flagged(temp, bytes, thrust::counting_iterator<uint32_t>(0), flags, selected, count, n);
    });
  });
  if (cudaDeviceSynchronize() != cudaSuccess || cudaGetLastError() != cudaSuccess)
    return std::fprintf(stderr, "a kernel failed\n"), 1;
  std::printf("%.9f %.9f %.9f %.9f %.9f\n", triad, fused, sum, scan, compress);
  return 0;
}
