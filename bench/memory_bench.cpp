// The memory group of kiln_bench (see memory_bench.h).
#include "memory_bench.h"

#include "harness.h"

#include <kiln/kiln.h>

#include <tbb/parallel_for.h>

#include <atomic>
#include <cstdint>

namespace bench {
namespace {

constexpr uint32_t kTableSize = 1u << 20, kBins = 4096;

uint32_t hashed(uint32_t i) {
  i ^= i >> 16, i *= 0x7feb352du, i ^= i >> 15, i *= 0x846ca68bu, i ^= i >> 16;
  return i;
}

/// Gathers table[index[i]]; with `checked`, lanes out of range read 0 as in Kiln.
template <bool checked>
void gather_loop(const float* table, uint32_t table_size, const uint32_t* index, float* out, size_t n) {
  tbb::parallel_for(tbb::blocked_range<size_t>(0, n, 16384), [&](const tbb::blocked_range<size_t>& r) {
    for (size_t i = r.begin(); i < r.end(); ++i) {
      uint32_t k = index[i];
      if constexpr (checked)
        out[i] = k < table_size ? table[k] : 0.f;
      else
        out[i] = table[k];
    }
  });
}

/// Atomically adds 1 to bins[index[i]]; with `checked`, lanes out of range add nothing.
template <bool checked>
void histogram_loop(const uint32_t* index, std::atomic<uint32_t>* bins, uint32_t bin_count, size_t n) {
  tbb::parallel_for(tbb::blocked_range<size_t>(0, n, 16384), [&](const tbb::blocked_range<size_t>& r) {
    for (size_t i = r.begin(); i < r.end(); ++i) {
      uint32_t k = index[i];
      if (checked && k >= bin_count) continue;
      bins[k].fetch_add(1, std::memory_order_relaxed);
    }
  });
}

}  // namespace

void run_memory(bool quick, std::vector<Row>& rows, std::vector<std::string>& failures) {
  size_t n = quick ? size_t(1) << 20 : size_t(1) << 24;
  int warmup = quick ? 1 : 2, reps = quick ? 5 : 11;
  std::vector<float> table(kTableSize);
  for (uint32_t i = 0; i < kTableSize; ++i) table[i] = float(hashed(i) >> 8);
  std::vector<uint32_t> gather_index(n), bin_index(n);
  for (size_t i = 0; i < n; ++i) {
    gather_index[i] = hashed(uint32_t(i)) % kTableSize;
    bin_index[i] = hashed(uint32_t(i) + 12345u) % kBins;
  }
  std::string lanes = quick ? "2^20" : "2^24";
  kiln::Float kiln_table = kiln::Float::wrap(table.data(), table.size());
  kiln::UInt32 kiln_gather_index = kiln::UInt32::wrap(gather_index.data(), n);
  kiln::UInt32 kiln_bin_index = kiln::UInt32::wrap(bin_index.data(), n);

  // Gathers.
  std::vector<float> out(n);
  kiln::Float gathered;
  auto kiln_gather = [&] {
    gathered = kiln::Float();
    kiln::Float g = kiln::gather(kiln_table, kiln_gather_index);
    double s = time_once([&] { kiln::eval(g); });
    gathered = g;
    return s;
  };
  auto plain_gather = [&] {
    return time_once([&] { gather_loop<false>(table.data(), kTableSize, gather_index.data(), out.data(), n); });
  };
  auto checked_gather = [&] {
    return time_once([&] { gather_loop<true>(table.data(), kTableSize, gather_index.data(), out.data(), n); });
  };
  std::vector<double> t = alternate(warmup, reps, {kiln_gather, plain_gather, checked_gather});
  if (gathered.to_vector() != out) failures.push_back("memory: Kiln's gather differs from the loop's");
  rows.push_back({"gather " + lanes + " lanes from 2^20 f32", t[0], t[1], Goal::RatioAtLeast, 0.9,
                  "vs the unchecked C++ loop (Kiln drops out-of-range lanes)"});
  rows.push_back(
      {"  C++ loop: bounds-checked vs unchecked", t[2], t[1], Goal::None, 0, "what the check costs native code"});

  // Scatter-adds (a histogram).
  std::vector<std::atomic<uint32_t>> bins(kBins);
  kiln::UInt32 histogram;
  auto kiln_scatter = [&] {
    kiln::UInt32 h = kiln::zeros<kiln::UInt32>(kBins);
    kiln::eval(h);
    kiln::scatter_add(h, kiln::UInt32(1), kiln_bin_index);
    double s = time_once([&] { kiln::eval(h); });
    histogram = h;
    return s;
  };
  auto clear_bins = [&] {
    for (auto& b : bins) b.store(0, std::memory_order_relaxed);
  };
  auto plain_scatter = [&] {
    clear_bins();
    return time_once([&] { histogram_loop<false>(bin_index.data(), bins.data(), kBins, n); });
  };
  auto checked_scatter = [&] {
    clear_bins();
    return time_once([&] { histogram_loop<true>(bin_index.data(), bins.data(), kBins, n); });
  };
  t = alternate(warmup, reps, {kiln_scatter, plain_scatter, checked_scatter});
  for (uint32_t b = 0; b < kBins; ++b)
    if (histogram.read(b) != bins[b].load()) {
      failures.push_back("memory: Kiln's histogram differs from the loop's at bin " + std::to_string(b));
      break;
    }
  rows.push_back({"scatter_add " + lanes + " lanes into 4096 u32 bins", t[0], t[1], Goal::RatioAtLeast, 0.9,
                  "vs the unchecked C++ loop (atomic adds; Kiln drops out-of-range lanes)"});
  rows.push_back(
      {"  C++ loop: bounds-checked vs unchecked", t[2], t[1], Goal::None, 0, "what the check costs native code"});
}

}  // namespace bench
