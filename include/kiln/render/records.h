// Per-ray, per-vertex records out of rendering and its backward pass (story 2): a
// PathRecorder given to render() collects, for every path vertex, which pixel and sample
// it belongs to, its depth, position, shading normal, the directions in and out, the
// throughput that reached it, and in the backward pass the radiance leaving it and the
// adjoint radiance arriving there.
//
// What an implementation guarantees:
// - `path` and `prb` append one record per vertex (per lane where the path hit a surface)
//   to the render records while rendering; `prb`'s replay appends to the backward records
//   while a reverse-mode traversal differentiates the render. Other integrators, and the
//   backward pass of `path` (plain AD through its loop), record nothing.
// - Render records have `radiance` and `adjoint` zero: a vertex's outgoing radiance is
//   known only once its path ended, which the replay knows (L minus what earlier vertices
//   gave, over the throughput). `adjoint` is δL · throughput, δL being the derivative of
//   the traversal's output with respect to the sample's radiance (the film's splat
//   differentiated, any filter).
// - Records appended past the capacity are an error when read, naming the capacity needed.
// - The fields are Kiln arrays over the recorder's memory: they leave as NumPy or PyTorch
//   arrays without a copy.
#pragma once

#include <kiln/record.h>
#include <kiln/render/common.h>

#include <array>

namespace kiln::render {

/// pixel (index in the crop window, row-major), sample (0..spp-1), depth (0: the camera's
/// hit), p, n (shading normal), wi (towards the previous vertex), wo (the sampled direction
/// on), throughput (from the camera to this vertex), radiance (leaving towards wi),
/// adjoint (δL · throughput).
using PathRecords = Recorder<UInt32, UInt32, UInt32, Array3f, Array3f, Array3f, Array3f, Color3f, Color3f, Color3f>;

class PathRecorder {
 public:
  static constexpr std::array<const char*, 10> kFieldNames = {"pixel", "sample", "depth",      "p",        "n",
                                                              "wi",    "wo",     "throughput", "radiance", "adjoint"};

  /// Room for `capacity` vertices in each pass.
  explicit PathRecorder(size_t capacity) : render_(capacity), backward_(capacity) {}
  PathRecords& render_records() { return render_; }
  PathRecords& backward_records() { return backward_; }
  void clear() {
    render_.clear();
    backward_.clear();
  }

 private:
  PathRecords render_, backward_;
};

}  // namespace kiln::render
