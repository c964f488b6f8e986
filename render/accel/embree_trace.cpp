// Embree's packet queries behind Kiln's host-call signature: a call of any width is traced in
// packets of 16, 8, 4 and 1 rays (rtcIntersect16/8/4/1 and rtcOccluded*), with the lanes
// Kiln marks inactive, and those Embree cannot trace, left out of Embree's valid mask.
#include "accel/embree_trace.h"

#include <embree3/rtcore.h>

#include <cmath>
#include <cstddef>
#include <limits>

namespace kiln::render {
namespace {
/// Embree asserts that a ray's origin and direction components are at most this large
/// (RayK::valid() in Embree's kernels/common/ray.h); NaN fails the comparison too.
constexpr float kLargestComponent = 1.844e18f;

/// The seven staged Float32 inputs of both functions: ox, oy, oz, dx, dy, dz, maxt.
struct StagedRays {
  const float* const* columns;
  explicit StagedRays(const void* const* inputs) : columns(reinterpret_cast<const float* const*>(inputs)) {}
  float origin(int axis, uint32_t lane) const { return columns[axis][lane]; }
  float direction(int axis, uint32_t lane) const { return columns[3 + axis][lane]; }
  float maxt(uint32_t lane) const { return columns[6][lane]; }

  /// Whether Embree may be given this lane's ray: bounded components, a nonzero
  /// direction and maxt >= 0 (not NaN). Other rays miss: occluded() tells a hit from
  /// tfar < 0, so no traced ray may start with a negative tfar.
  bool traceable(uint32_t lane) const {
    bool nonzero_direction = false;
    for (int axis = 0; axis < 3; ++axis) {
      if (!(std::fabs(origin(axis, lane)) <= kLargestComponent)) return false;
      if (!(std::fabs(direction(axis, lane)) <= kLargestComponent)) return false;
      nonzero_direction |= direction(axis, lane) != 0;
    }
    return nonzero_direction && maxt(lane) >= 0.0f;
  }
};

/// Rays and hits of one packet in Embree's layout; a packet of 1 is RTCRayHit, whose
/// layout is that of a packet with N = 1, so RTCRayHitN's accessors serve every size.
union alignas(64) Packet {
  RTCRayHit one;
  RTCRayHit4 four;
  RTCRayHit8 eight;
  RTCRayHit16 sixteen;
  RTCRayHitN* rays_and_hits() { return reinterpret_cast<RTCRayHitN*>(this); }
};
static_assert(offsetof(RTCRayHit, hit) == 12 * sizeof(float) && offsetof(RTCRayHit4, hit) == 12 * 4 * sizeof(float) &&
                  offsetof(RTCRayHit8, hit) == 12 * 8 * sizeof(float) &&
                  offsetof(RTCRayHit16, hit) == 12 * 16 * sizeof(float),
              "the hits of a packet of N follow its 12 × N ray fields, as RTCRayHitN_HitN() assumes");

/// The largest packet Embree offers that fits in `remaining` lanes.
unsigned packet_size(uint32_t remaining) {
  for (unsigned size : {16u, 8u, 4u}) {
    if (remaining >= size) return size;
  }
  return 1;
}

/// Fills `packet` with lanes [first, first + n) and `valid` with Embree's mask: -1 for an
/// active, traceable lane. Other lanes get a harmless ray Embree does not look at.
void load_packet(const StagedRays& rays, const int32_t* active, uint32_t first, unsigned n, Packet& packet,
                 int* valid) {
  RTCRayN* ray = RTCRayHitN_RayN(packet.rays_and_hits(), n);
  RTCHitN* hit = RTCRayHitN_HitN(packet.rays_and_hits(), n);
  for (unsigned i = 0; i < n; ++i) {
    uint32_t lane = first + i;
    bool traced = active[lane] != 0 && rays.traceable(lane);
    valid[i] = traced ? -1 : 0;
    RTCRayN_org_x(ray, n, i) = traced ? rays.origin(0, lane) : 0.0f;
    RTCRayN_org_y(ray, n, i) = traced ? rays.origin(1, lane) : 0.0f;
    RTCRayN_org_z(ray, n, i) = traced ? rays.origin(2, lane) : 0.0f;
    RTCRayN_dir_x(ray, n, i) = traced ? rays.direction(0, lane) : 1.0f;
    RTCRayN_dir_y(ray, n, i) = traced ? rays.direction(1, lane) : 0.0f;
    RTCRayN_dir_z(ray, n, i) = traced ? rays.direction(2, lane) : 0.0f;
    RTCRayN_tnear(ray, n, i) = 0.0f;
    RTCRayN_time(ray, n, i) = 0.0f;
    RTCRayN_tfar(ray, n, i) = traced ? rays.maxt(lane) : 0.0f;
    RTCRayN_mask(ray, n, i) = ~0u;
    RTCRayN_id(ray, n, i) = 0;
    RTCRayN_flags(ray, n, i) = 0;
    RTCHitN_geomID(hit, n, i) = RTC_INVALID_GEOMETRY_ID;
    RTCHitN_instID(hit, n, i, 0) = RTC_INVALID_GEOMETRY_ID;
  }
}

void intersect_packet(RTCScene scene, RTCIntersectContext& context, unsigned n, const int* valid, Packet& packet) {
  switch (n) {
    case 1:
      if (valid[0]) rtcIntersect1(scene, &context, &packet.one);
      break;
    case 4: rtcIntersect4(valid, scene, &context, &packet.four); break;
    case 8: rtcIntersect8(valid, scene, &context, &packet.eight); break;
    case 16: rtcIntersect16(valid, scene, &context, &packet.sixteen); break;
  }
}

void occluded_packet(RTCScene scene, RTCIntersectContext& context, unsigned n, const int* valid, Packet& packet) {
  switch (n) {
    case 1:
      if (valid[0]) rtcOccluded1(scene, &context, &packet.one.ray);
      break;
    case 4: rtcOccluded4(valid, scene, &context, &packet.four.ray); break;
    case 8: rtcOccluded8(valid, scene, &context, &packet.eight.ray); break;
    case 16: rtcOccluded16(valid, scene, &context, &packet.sixteen.ray); break;
  }
}

/// Traces the active lanes of a host call in packets with `query` (intersect_packet or
/// occluded_packet), then calls `store(lane, n, i, traced, packet)` for each active lane,
/// found at index i of its packet of n (`traced`: Embree was given its ray).
template <typename Store>
void trace_in_packets(RTCScene scene, void (*query)(RTCScene, RTCIntersectContext&, unsigned, const int*, Packet&),
                      uint32_t width, const int32_t* active, const void* const* inputs, Store store) {
  StagedRays rays(inputs);
  RTCIntersectContext context;
  rtcInitIntersectContext(&context);
  for (uint32_t first = 0; first < width;) {
    unsigned n = packet_size(width - first);
    Packet packet;
    alignas(64) int valid[16];
    load_packet(rays, active, first, n, packet, valid);
    query(scene, context, n, valid, packet);
    for (unsigned i = 0; i < n; ++i) {
      if (active[first + i]) store(first + i, n, i, valid[i] != 0, packet);
    }
    first += n;
  }
}

/// Host function "embree_intersect": the closest hit of each active lane (a miss: t = inf,
/// u = v = 0, prim 0, shape ~0u); inactive lanes' outputs are not written.
void intersect(void* scene, uint32_t width, const int32_t* active, const void* const* inputs, void* const* outputs) {
  float* t = static_cast<float*>(outputs[0]);
  float* u = static_cast<float*>(outputs[1]);
  float* v = static_cast<float*>(outputs[2]);
  uint32_t* prim_index = static_cast<uint32_t*>(outputs[3]);
  uint32_t* shape_index = static_cast<uint32_t*>(outputs[4]);
  trace_in_packets(static_cast<RTCScene>(scene), intersect_packet, width, active, inputs,
                   [&](uint32_t lane, unsigned n, unsigned i, bool traced, Packet& packet) {
                     RTCRayN* ray = RTCRayHitN_RayN(packet.rays_and_hits(), n);
                     RTCHitN* hit = RTCRayHitN_HitN(packet.rays_and_hits(), n);
                     bool found = traced && RTCHitN_geomID(hit, n, i) != RTC_INVALID_GEOMETRY_ID;
                     t[lane] = found ? RTCRayN_tfar(ray, n, i) : std::numeric_limits<float>::infinity();
                     u[lane] = found ? RTCHitN_u(hit, n, i) : 0.0f;
                     v[lane] = found ? RTCHitN_v(hit, n, i) : 0.0f;
                     prim_index[lane] = found ? RTCHitN_primID(hit, n, i) : 0;
                     shape_index[lane] = found ? RTCHitN_geomID(hit, n, i) : RTC_INVALID_GEOMETRY_ID;
                   });
}

/// Host function "embree_occluded": whether each active lane hits anything (Embree sets
/// tfar to -inf when it does); inactive lanes' outputs are not written.
void occluded(void* scene, uint32_t width, const int32_t* active, const void* const* inputs, void* const* outputs) {
  bool* hit = static_cast<bool*>(outputs[0]);
  trace_in_packets(static_cast<RTCScene>(scene), occluded_packet, width, active, inputs,
                   [&](uint32_t lane, unsigned n, unsigned i, bool traced, Packet& packet) {
                     hit[lane] = traced && RTCRayN_tfar(RTCRayHitN_RayN(packet.rays_and_hits(), n), n, i) < 0.0f;
                   });
}

const std::vector<VarType> kRayInputs(7, VarType::Float32);
}  // namespace

const HostFunction& embree_intersect_function() {
  static const HostFunction function(
      "embree_intersect", kRayInputs,
      {VarType::Float32, VarType::Float32, VarType::Float32, VarType::UInt32, VarType::UInt32}, intersect);
  return function;
}

const HostFunction& embree_occluded_function() {
  static const HostFunction function("embree_occluded", kRayInputs, {VarType::Bool}, occluded);
  return function;
}

}  // namespace kiln::render
