// Kiln's own acceleration structure as an Accel: BVHs built on the host by Embree's builder
// (bvh_build.h), one per kind of primitive, as arrays on the default device, traversed by
// Kiln code fused into the kernels that trace (bvh_traverse.h, kiln_primitives.h), so it
// runs wherever Kiln's kernels run. Private to render/accel/.
#pragma once

#include <kiln/render/accel.h>

namespace kiln::render {

/// make_accel(shapes, AccelKind::Kiln).
std::unique_ptr<Accel> make_kiln_accel(std::vector<AccelGeometry> shapes);

}  // namespace kiln::render
