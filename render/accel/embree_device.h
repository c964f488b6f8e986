// The process's one Embree device, Embree's errors turned into Kiln's, and owning handles
// of Embree objects. Private to render/accel/.
#pragma once

#include <embree3/rtcore.h>

#include <memory>

namespace kiln::render {

struct ReleaseEmbreeGeometry {
  void operator()(RTCGeometry geometry) const { rtcReleaseGeometry(geometry); }
};
struct ReleaseEmbreeScene {
  void operator()(RTCScene scene) const { rtcReleaseScene(scene); }
};
/// An Embree geometry released when the handle goes.
using GeometryHandle = std::unique_ptr<RTCGeometryTy, ReleaseEmbreeGeometry>;
/// An Embree scene released when the handle goes.
using SceneHandle = std::unique_ptr<RTCSceneTy, ReleaseEmbreeScene>;

/// The process's Embree device, created on first use (thread-safe); InternalError when
/// Embree cannot create it.
RTCDevice embree_device();

/// Throws InternalError naming `operation` and Embree's message when the calling thread's
/// last Embree call failed (Embree keeps one error per thread).
void throw_on_embree_error(const char* operation);

}  // namespace kiln::render
