// Shared by the control-flow tests: snapshots of every array a program produced (as lane
// bits), running a program in both modes on the JIT and the interpreter, and polymorphic
// instances for dispatch.
#pragma once

#include <kiln/kiln.h>

#include <gtest/gtest.h>

#include "op_test_support.h"

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

using namespace kiln;
using kiln::test::download;
using kiln::test::same_value;

namespace {

constexpr ControlMode kModes[] = {ControlMode::Symbolic, ControlMode::Evaluated};

const char* mode_name(ControlMode mode) { return mode == ControlMode::Symbolic ? "symbolic" : "evaluated"; }

// ---- snapshots: every array a case produced, as lane bits -----------------------------------

struct Column {
  VarType type;
  std::vector<uint64_t> lanes;
};
using Snapshot = std::vector<Column>;

/// Evaluates the values (arrays, vectors, PCG32, ...) and keeps their lanes.
template <typename... Ts> Snapshot snap(const Ts&... values) {
  detail::Values handles = detail::flatten_values(std::tuple<Ts...>(values...));
  std::vector<detail::Index> indices;
  for (const auto& h : handles) indices.push_back(h.index());
  detail::eval(indices.data(), indices.size());
  Snapshot out;
  for (const auto& h : handles) out.push_back({detail::node_type(h.index()), download(h.index())});
  return out;
}

template <typename T> Column column(const std::vector<T>& values) {
  Column c{var_type_v<T>, {}};
  for (const T& v : values) c.lanes.push_back(test::bits_of(v));
  return c;
}

std::string lane_text(VarType type, uint64_t bits) {
  std::ostringstream out;
  switch (type) {
    case VarType::Float32: {
      float f;
      uint32_t b = uint32_t(bits);
      std::memcpy(&f, &b, 4);
      out << f;
      break;
    }
    case VarType::Float64: {
      double d;
      std::memcpy(&d, &bits, 8);
      out << d;
      break;
    }
    case VarType::Int32: out << int32_t(uint32_t(bits)); break;
    case VarType::Int64: out << int64_t(bits); break;
    default: out << bits; break;
  }
  out << " (0x" << std::hex << bits << ")";
  return out.str();
}

/// Empty when equal (bitwise; NaNs of any payload are equal), else the first differences.
std::string differences(const Snapshot& got, const Snapshot& want) {
  std::ostringstream out;
  if (got.size() != want.size()) {
    out << got.size() << " columns, expected " << want.size() << "\n";
    return out.str();
  }
  for (size_t c = 0; c < got.size(); ++c) {
    if (got[c].type != want[c].type) {
      out << "column " << c << ": type " << type_name(got[c].type) << ", expected " << type_name(want[c].type) << "\n";
      continue;
    }
    if (got[c].lanes.size() != want[c].lanes.size()) {
      out << "column " << c << ": " << got[c].lanes.size() << " lanes, expected " << want[c].lanes.size() << "\n";
      continue;
    }
    int shown = 0;
    size_t bad = 0;
    for (size_t i = 0; i < got[c].lanes.size(); ++i)
      if (!same_value(got[c].type, got[c].lanes[i], want[c].lanes[i])) {
        ++bad;
        if (shown++ < 5)
          out << "column " << c << " lane " << i << ": " << lane_text(got[c].type, got[c].lanes[i]) << ", expected "
              << lane_text(want[c].type, want[c].lanes[i]) << "\n";
      }
    if (bad > 5) out << "column " << c << ": " << bad << " lanes differ in all\n";
  }
  return out.str();
}

using test::kModeRuns;
using test::ModeRun;
using test::run_on;

/// Runs `program(mode)` in every mode on both backends; all must agree bit for bit, and
/// with `expected` when given.
void check_runs(const std::function<Snapshot(ControlMode)>& program, const std::function<Snapshot()>& expected = {}) {
  Snapshot reference;
  const char* reference_name = "host reference";
  if (expected) reference = expected();
  for (const ModeRun& run : kModeRuns) {
    SCOPED_TRACE(run.name);
    Snapshot got;
    try {
      got = run_on(run.interpreter, [&] { return program(run.mode); });
    } catch (const std::exception& e) {
      ADD_FAILURE() << run.name << " threw: " << e.what();
      continue;
    }
    if (!expected && &run == &kModeRuns[0]) {
      reference = got;
      reference_name = run.name;
      continue;
    }
    std::string diff = differences(got, reference);
    EXPECT_TRUE(diff.empty()) << run.name << " differs from " << reference_name << ":\n" << diff;
  }
}

UInt32 lanes_of(size_t n) { return arange<UInt32>(n); }

std::vector<uint32_t> host_range(size_t n) {
  std::vector<uint32_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = uint32_t(i);
  return v;
}

// ---- polymorphic instances for dispatch -------------------------------------------------------

/// Base of the instances dispatch() calls in these tests.
struct Material {
  virtual ~Material() = default;
  virtual std::tuple<Float, UInt32> shade(const Float& x, const UInt32& lane) = 0;
};

/// Instance k: (x * k + 0.5, lane * k), and one count per lane in counts[k - 1].
struct Scaled : Material {
  uint32_t k = 1;
  UInt32* counts = nullptr;
  std::tuple<Float, UInt32> shade(const Float& x, const UInt32& lane) override {
    if (counts) scatter_add(*counts, lane * 0u + 1u, lane * 0u + (k - 1));
    return {x * float(k) + 0.5f, lane * k};
  }
};

/// Instances that run a loop of their own (loops inside calls inside loops).
struct Stepper {
  virtual ~Stepper() = default;
  virtual UInt32 advance(const UInt32& x, const UInt32& steps) = 0;
};

struct Affine : Stepper {
  uint32_t mul = 1, add = 0;
  const ControlMode* mode = nullptr;
  UInt32 advance(const UInt32& x, const UInt32& steps) override {
    auto result = while_loop(
        std::tuple(steps * 0u, x, steps), [](const UInt32& k, const UInt32&, const UInt32& n) { return k < n; },
        [this](const UInt32& k, const UInt32& v, const UInt32& n) { return std::tuple(k + 1u, v * mul + add, n); },
        *mode, "affine");
    return std::get<1>(result);
  }
};

}  // namespace
