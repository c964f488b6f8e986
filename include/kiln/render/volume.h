// Volumes (Mitsuba 3's Volume): values over 3D space, read at world positions; what a
// `volume` texture (textures/volume.cpp) evaluates at surface points.
//
// What an implementation guarantees:
// - eval() returns the value at world points as linear RGB (one channel repeated, or a
//   3-channel volume's channels); eval_1() one value (the mean of the channels).
// - Every value is a Kiln array the volume owns, registered in traverse(), so it carries
//   gradients.
#pragma once

#include <kiln/render/common.h>
#include <kiln/render/properties.h>

#include <array>
#include <string>
#include <vector>

namespace kiln::render {

class Volume : public Object {
 public:
  PluginKind kind() const override { return PluginKind::Volume; }
  /// The value at the world points `p`.
  virtual Color3f eval(const Array3f& p, const Bool& active) const = 0;
  /// A scalar value at `p`.
  virtual Float eval_1(const Array3f& p, const Bool& active) const;
  /// The mean over the volume's domain.
  virtual Float mean() const = 0;
};

/// A 3D grid of float values in Mitsuba's binary .vol format (version 3, float32):
/// `values` holds z, y, x, channel, innermost last; the box is where the file places the
/// grid (gridvolume's use_grid_bbox).
struct VolumeGrid {
  size_t size_x = 0, size_y = 0, size_z = 0, channels = 0;
  std::array<float, 3> box_min{}, box_max{};
  std::vector<float> values;
};

/// Reads a .vol file; FileError naming the file for anything but a version 3 float32 grid
/// with a complete payload.
VolumeGrid read_volume_grid(const std::string& path);
/// Writes `grid` as a version 3 float32 .vol file (FileError when it cannot).
void write_volume_grid(const VolumeGrid& grid, const std::string& path);

}  // namespace kiln::render
