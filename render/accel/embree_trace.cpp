// Embree's packet queries behind Kiln's host-call signature: a call of any width is traced in
// packets of 16, 8, 4 and 1 rays (rtcIntersect16/8/4/1 and rtcOccluded*), with the lanes
// Kiln marks inactive, and those Embree cannot trace, left out of Embree's valid mask.
#include "accel/embree_trace.h"

#include "accel/accel_shapes.h"

#include <embree3/rtcore.h>

#include <cmath>
#include <cstddef>
#include <cstring>
#include <limits>

namespace kiln::render {
namespace {
/// Rays and hits of one packet in Embree's layout: 20 arrays of N 4-byte fields (org_x,
/// org_y, org_z, tnear, dir_x, dir_y, dir_z, time, tfar, mask, id, flags, then the hit's
/// Ng_x, Ng_y, Ng_z, u, v, primID, geomID, instID). A packet of 1 is RTCRayHit, which is
/// laid out as a packet with N = 1.
union alignas(64) Packet {
  RTCRayHit one;
  RTCRayHit4 four;
  RTCRayHit8 eight;
  RTCRayHit16 sixteen;
};
enum Field {
  kOrgX = 0,
  kTnear = 3,
  kDirX = 4,
  kTime = 7,
  kTfar = 8,
  kMask,
  kId,
  kFlags,
  kU = 15,
  kV,
  kPrimId,
  kGeomId,
  kInstId
};
static_assert(offsetof(RTCRayHit, hit) == 12 * sizeof(float) && offsetof(RTCRayHit4, hit) == 12 * 4 * sizeof(float) &&
                  offsetof(RTCRayHit8, hit) == 12 * 8 * sizeof(float) &&
                  offsetof(RTCRayHit16, hit) == 12 * 16 * sizeof(float) &&
                  offsetof(RTCRayHit16, ray.tfar) == kTfar * 16 * sizeof(float) &&
                  offsetof(RTCRayHit16, hit.u) == kU * 16 * sizeof(float) &&
                  offsetof(RTCRayHit16, hit.geomID) == kGeomId * 16 * sizeof(float) &&
                  offsetof(RTCRayHit16, hit.instID) == kInstId * 16 * sizeof(float),
              "RTCRayHitN is 20 arrays of N 4-byte fields, in the order of Field");

/// The fields of a packet of N lanes, as float or as 32-bit integer arrays.
template <unsigned N> struct Fields {
  float (*f)[N];
  uint32_t (*u)[N];
  explicit Fields(Packet& packet)
      : f(reinterpret_cast<float (*)[N]>(&packet)), u(reinterpret_cast<uint32_t (*)[N]>(&packet)) {}
};

/// Traces lanes [first, first + N) of a host call: the staged columns (ox, oy, oz, dx, dy,
/// dz, maxt) are copied as they are (a packet is a structure of arrays too), and Embree's
/// valid mask holds the active lanes whose ray it may be given: bounded components (NaN
/// fails the test), a nonzero direction and maxt >= 0 (occluded() tells a hit from
/// tfar < 0). The other lanes miss. N is a constant and the lane loops are free of
/// branches, so they become vector code.
template <unsigned N>
void load_packet(const float* const* columns, const int32_t* active, uint32_t first, Packet& packet, int32_t* valid) {
  Fields<N> field(packet);
  for (int k = 0; k < 3; ++k) {
    std::memcpy(field.f[kOrgX + k], columns[k] + first, sizeof(field.f[0]));
    std::memcpy(field.f[kDirX + k], columns[3 + k] + first, sizeof(field.f[0]));
  }
  std::memcpy(field.f[kTfar], columns[6] + first, sizeof(field.f[0]));
  // Into a local array first: the packet's integer fields could alias `active` and `valid`.
  alignas(64) int32_t traced[N];
  for (unsigned i = 0; i < N; ++i) {
    const float ox = field.f[kOrgX][i], oy = field.f[kOrgX + 1][i], oz = field.f[kOrgX + 2][i];
    const float dx = field.f[kDirX][i], dy = field.f[kDirX + 1][i], dz = field.f[kDirX + 2][i];
    bool bounded = (std::fabs(ox) <= kLargestComponent) & (std::fabs(oy) <= kLargestComponent) &
                   (std::fabs(oz) <= kLargestComponent) & (std::fabs(dx) <= kLargestComponent) &
                   (std::fabs(dy) <= kLargestComponent) & (std::fabs(dz) <= kLargestComponent);
    bool nonzero = (dx != 0.0f) | (dy != 0.0f) | (dz != 0.0f);
    traced[i] = -int32_t(bounded & nonzero & (field.f[kTfar][i] >= 0.0f));
  }
  for (unsigned i = 0; i < N; ++i) valid[i] = traced[i] & -int32_t(active[first + i] != 0);
  for (unsigned i = 0; i < N; ++i) {
    field.f[kTnear][i] = field.f[kTime][i] = 0.0f;
    field.u[kMask][i] = ~0u;
    field.u[kId][i] = field.u[kFlags][i] = 0;
    field.u[kGeomId][i] = field.u[kInstId][i] = RTC_INVALID_GEOMETRY_ID;
  }
}

/// Embree's query for a packet of N: the closest hit, or with `occlusion` whether there is any.
template <unsigned N, bool occlusion>
void query_packet(RTCScene scene, RTCIntersectContext& context, const int32_t* valid, Packet& packet) {
  if constexpr (N == 1) {
    if (!valid[0]) return;
    occlusion ? rtcOccluded1(scene, &context, &packet.one.ray) : rtcIntersect1(scene, &context, &packet.one);
  } else if constexpr (N == 4) {
    occlusion ? rtcOccluded4(valid, scene, &context, &packet.four.ray)
              : rtcIntersect4(valid, scene, &context, &packet.four);
  } else if constexpr (N == 8) {
    occlusion ? rtcOccluded8(valid, scene, &context, &packet.eight.ray)
              : rtcIntersect8(valid, scene, &context, &packet.eight);
  } else {
    occlusion ? rtcOccluded16(valid, scene, &context, &packet.sixteen.ray)
              : rtcIntersect16(valid, scene, &context, &packet.sixteen);
  }
}

/// Traces lanes [first, first + N) of a host call. Host function "embree_intersect": the
/// closest hit of each lane (a miss, and any lane not traced: t = inf, u = v = 0, prim 0,
/// shape ~0u). With `occlusion`, "embree_occluded": whether each lane hits anything
/// (Embree sets tfar to -inf when it does); false where it was not traced.
template <unsigned N, bool occlusion> void trace_packet(RTCScene scene, RTCIntersectContext& context,
                                                        const float* const* columns, const int32_t* active,
                                                        uint32_t first, void* const* outputs) {
  Packet packet;
  alignas(64) int32_t valid[N];
  load_packet<N>(columns, active, first, packet, valid);
  query_packet<N, occlusion>(scene, context, valid, packet);
  Fields<N> field(packet);
  if constexpr (occlusion) {
    bool* hit = static_cast<bool*>(outputs[0]) + first;
    for (unsigned i = 0; i < N; ++i) hit[i] = (valid[i] != 0) & (field.f[kTfar][i] < 0.0f);
  } else {
    float* t = static_cast<float*>(outputs[0]) + first;
    float* u = static_cast<float*>(outputs[1]) + first;
    float* v = static_cast<float*>(outputs[2]) + first;
    uint32_t* prim_index = static_cast<uint32_t*>(outputs[3]) + first;
    uint32_t* shape_index = static_cast<uint32_t*>(outputs[4]) + first;
    for (unsigned i = 0; i < N; ++i) {
      bool found = (valid[i] != 0) & (field.u[kGeomId][i] != RTC_INVALID_GEOMETRY_ID);
      t[i] = found ? field.f[kTfar][i] : std::numeric_limits<float>::infinity();
      u[i] = found ? field.f[kU][i] : 0.0f;
      v[i] = found ? field.f[kV][i] : 0.0f;
      prim_index[i] = found ? field.u[kPrimId][i] : 0;
      shape_index[i] = found ? field.u[kGeomId][i] : RTC_INVALID_GEOMETRY_ID;
    }
  }
}

/// A host call of any width, traced in packets of 16, 8, 4 and 1 lanes (see trace_packet).
template <bool occlusion> void trace_in_packets(void* scene, uint32_t width, const int32_t* active,
                                                const void* const* inputs, void* const* outputs) {
  auto* rtc_scene = static_cast<RTCScene>(scene);
  const auto* columns = reinterpret_cast<const float* const*>(inputs);
  RTCIntersectContext context;
  rtcInitIntersectContext(&context);
  uint32_t first = 0;
  for (; first + 16 <= width; first += 16)
    trace_packet<16, occlusion>(rtc_scene, context, columns, active, first, outputs);
  if (first + 8 <= width) trace_packet<8, occlusion>(rtc_scene, context, columns, active, first, outputs), first += 8;
  if (first + 4 <= width) trace_packet<4, occlusion>(rtc_scene, context, columns, active, first, outputs), first += 4;
  for (; first < width; ++first) trace_packet<1, occlusion>(rtc_scene, context, columns, active, first, outputs);
}

const std::vector<VarType> kRayInputs(7, VarType::Float32);
}  // namespace

const HostFunction& embree_intersect_function() {
  static const HostFunction function(
      "embree_intersect", kRayInputs,
      {VarType::Float32, VarType::Float32, VarType::Float32, VarType::UInt32, VarType::UInt32},
      trace_in_packets</*occlusion=*/false>);
  return function;
}

const HostFunction& embree_occluded_function() {
  static const HostFunction function("embree_occluded", kRayInputs, {VarType::Bool},
                                     trace_in_packets</*occlusion=*/true>);
  return function;
}

}  // namespace kiln::render
