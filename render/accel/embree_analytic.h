// Spheres and disks as Embree user geometries, intersected analytically in double precision
// (Embree's own sphere primitive computes t in single precision from the origin, which
// loses digits when the origin is far from the sphere). Private to render/accel/.
#pragma once

#include "accel/accel_shapes.h"
#include "accel/embree_device.h"

#include <deque>

namespace kiln::render {

/// Builds user geometries for spheres and disks and owns the parameters their callbacks
/// read: it must outlive the scenes they are attached to.
class AnalyticShapes {
 public:
  /// A committed user geometry for `sphere`, or none for a radius of 0 (never hit);
  /// ValueError naming `shape_index` for a malformed one.
  GeometryHandle add(const AccelSphere& sphere, size_t shape_index);
  /// A committed user geometry for `disk`, or none when to_world flattens it to a segment
  /// or a point (never hit); ValueError naming `shape_index` for a malformed one.
  GeometryHandle add(const AccelDisk& disk, size_t shape_index);

 private:
  std::deque<AnalyticSphere> spheres_;  // a deque: callbacks hold pointers into it
  std::deque<AnalyticDisk> disks_;
};

}  // namespace kiln::render
