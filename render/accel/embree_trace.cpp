// Embree's packet queries behind Kiln's host-call signature: a call of any width is traced in
// packets of 16, 8, 4 and 1 rays (rtcIntersect16/8/4/1 and rtcOccluded*), with the lanes
// Kiln marks inactive, and those Embree cannot trace, left out of Embree's valid mask.
#include "accel/embree_trace.h"

#include <embree3/rtcore.h>

#include <cmath>
#include <cstddef>
#include <cstring>
#include <limits>

namespace kiln::render {
namespace {
/// Embree asserts that a ray's origin and direction components are at most this large
/// (RayK::valid() in Embree's kernels/common/ray.h); NaN fails the comparison too.
constexpr float kLargestComponent = 1.844e18f;

/// The seven staged Float32 inputs of both functions: ox, oy, oz, dx, dy, dz, maxt. Embree
/// may be given a lane's ray when its components are bounded, its direction is nonzero
/// and maxt >= 0 (not NaN). Other rays miss: occluded() tells a hit from tfar < 0, so no
/// traced ray may start with a negative tfar.
struct StagedRays {
  const float* const* columns;
  explicit StagedRays(const void* const* inputs) : columns(reinterpret_cast<const float* const*>(inputs)) {}
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
static_assert(offsetof(RTCRayHit16, hit.geomID) == 18 * 16 * sizeof(float) &&
                  offsetof(RTCRayHit16, hit.instID) == 19 * 16 * sizeof(float) &&
                  offsetof(RTCRayHit16, ray.tfar) == 8 * 16 * sizeof(float),
              "RTCRayHitN is 20 arrays of N 4-byte fields, in the order load_packet() writes them");

/// The largest packet Embree offers that fits in `remaining` lanes.
unsigned packet_size(uint32_t remaining) {
  for (unsigned size : {16u, 8u, 4u}) {
    if (remaining >= size) return size;
  }
  return 1;
}

/// Fills `packet` with lanes [first, first + N) and `valid` with Embree's mask: -1 for an
/// active, traceable lane. The staged columns are copied as they are (a packet is a
/// structure of arrays too); other lanes then get a harmless ray Embree does not look at.
/// N is a constant so that the compiler turns the lane loops into vector code.
template <unsigned N>
void load_packet_of(const StagedRays& rays, const int32_t* active, uint32_t first, Packet& packet, int* valid) {
  // RTCRayHitN's fields, each an array of N: org_x, org_y, org_z, tnear, dir_x, dir_y,
  // dir_z, time, tfar, mask, id, flags, then the hit's Ng_x, Ng_y, Ng_z, u, v, primID,
  // geomID, instID.
  float(*field)[N] = reinterpret_cast<float(*)[N]>(&packet);
  uint32_t(*bits)[N] = reinterpret_cast<uint32_t(*)[N]>(&packet);
  for (int k = 0; k < 3; ++k) {
    std::memcpy(field[k], rays.columns[k] + first, sizeof(field[k]));          // org
    std::memcpy(field[4 + k], rays.columns[3 + k] + first, sizeof(field[k]));  // dir
  }
  std::memcpy(field[8], rays.columns[6] + first, sizeof(field[8]));  // tfar
  int untraced = 0;
  for (unsigned i = 0; i < N; ++i) {
    bool bounded = true, nonzero_direction = false;
    for (int k = 0; k < 3; ++k) {
      bounded &= std::fabs(field[k][i]) <= kLargestComponent;
      bounded &= std::fabs(field[4 + k][i]) <= kLargestComponent;
      nonzero_direction |= field[4 + k][i] != 0.0f;
    }
    bool traced = (active[first + i] != 0) & bounded & nonzero_direction & (field[8][i] >= 0.0f);
    valid[i] = -int(traced);
    untraced |= !traced;
    field[3][i] = field[7][i] = 0.0f;                     // tnear, time
    bits[9][i] = ~0u;                                     // mask
    bits[10][i] = bits[11][i] = 0;                        // id, flags
    bits[18][i] = bits[19][i] = RTC_INVALID_GEOMETRY_ID;  // geomID, instID
  }
  if (!untraced) return;
  for (unsigned i = 0; i < N; ++i) {
    if (valid[i]) continue;
    field[0][i] = field[1][i] = field[2][i] = 0.0f;
    field[4][i] = 1.0f;
    field[5][i] = field[6][i] = field[8][i] = 0.0f;
  }
}

void load_packet(const StagedRays& rays, const int32_t* active, uint32_t first, unsigned n, Packet& packet,
                 int* valid) {
  switch (n) {
    case 16: load_packet_of<16>(rays, active, first, packet, valid); break;
    case 8: load_packet_of<8>(rays, active, first, packet, valid); break;
    case 4: load_packet_of<4>(rays, active, first, packet, valid); break;
    default: load_packet_of<1>(rays, active, first, packet, valid); break;
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
