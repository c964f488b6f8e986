// Embree 3 as an Accel: one Embree scene over the shapes, traced from kernels through host
// calls (CPU only). Private to render/accel/.
#pragma once

#include <kiln/render/accel.h>

namespace kiln::render {

/// make_accel(shapes, AccelKind::Embree).
std::unique_ptr<Accel> make_embree_accel(const std::vector<AccelGeometry>& shapes);

}  // namespace kiln::render
