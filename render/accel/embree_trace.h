// The shim between Kiln's host calls and Embree's ray queries: two host functions whose
// context is an RTCScene, each copying a kernel's staged lanes into Embree's ray packets
// and the hits back. Private to render/accel/.
#pragma once

#include <kiln/host_call.h>

namespace kiln::render {

/// "embree_intersect": Accel::intersect_target()'s signature; the context is an RTCScene.
const HostFunction& embree_intersect_function();

/// "embree_occluded": Accel::occluded_target()'s signature; the context is an RTCScene.
const HostFunction& embree_occluded_function();

}  // namespace kiln::render
