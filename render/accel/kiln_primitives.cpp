// The primitive tests of kiln_primitives.h. Each leaf test derives what it needs of the ray
// once (outside the traversal loop) and captures it; inside the loop it gathers one
// primitive's data by leaf slot and solves the ray against it.
#include "accel/kiln_primitives.h"

#include <kiln/elementwise.h>
#include <kiln/vector_math.h>

namespace kiln::render {
namespace {

/// Component `component` of each `stride`-float record of `values`, in leaf order.
template <typename T> Array<T> in_leaf_order(const std::vector<T>& values, size_t stride, size_t component,
                                             const std::vector<uint32_t>& leaf_order) {
  std::vector<T> ordered;
  ordered.reserve(leaf_order.size());
  for (uint32_t primitive : leaf_order) ordered.push_back(values[stride * primitive + component]);
  return Array<T>::from(ordered);
}

template <typename T> Array3<Array<T>> vector_in_leaf_order(const std::vector<T>& values, size_t stride, size_t first,
                                                            const std::vector<uint32_t>& leaf_order) {
  return {in_leaf_order(values, stride, first, leaf_order), in_leaf_order(values, stride, first + 1, leaf_order),
          in_leaf_order(values, stride, first + 2, leaf_order)};
}

/// One of x, y, z per lane, chosen by three exclusive masks.
struct Axis {
  Bool is_x, is_y;
  Float pick(const Array3f& v) const { return select(is_x, v.x, select(is_y, v.y, v.z)); }
};

/// Woop, Benthin and Wald's ray-dependent transform: a permutation making the ray's largest
/// direction component z (keeping the winding), and a shear making the ray the z axis.
struct WatertightRay {
  Array3f o;
  Axis x, y, z;
  Float shear_x, shear_y, shear_z;

  explicit WatertightRay(const TraversalRay& ray) : o(ray.o) {
    Array3f magnitude = abs(ray.d);
    Bool z_is_x = (magnitude.x >= magnitude.y) & (magnitude.x >= magnitude.z);
    Bool z_is_y = !z_is_x & (magnitude.y >= magnitude.z);
    z = {z_is_x, z_is_y};
    Float dz = z.pick(ray.d);
    // x follows z cyclically and y follows x; a negative dz swaps them.
    Axis next{!z_is_x & !z_is_y, z_is_x}, after{z_is_y, !z_is_x & !z_is_y};
    Bool swap = dz < 0.0f;
    x = {select(swap, after.is_x, next.is_x), select(swap, after.is_y, next.is_y)};
    y = {select(swap, next.is_x, after.is_x), select(swap, next.is_y, after.is_y)};
    shear_x = x.pick(ray.d) / dz;
    shear_y = y.pick(ray.d) / dz;
    shear_z = 1.0f / dz;
  }

  /// A corner in the ray's sheared frame: (x, y) in the plane across the ray, z along it.
  Array3f64 transform(const Array3f& corner) const {
    Array3f p = corner - o;
    Float pz = z.pick(p);
    return {cast<double>(fma(-shear_x, pz, x.pick(p))), cast<double>(fma(-shear_y, pz, y.pick(p))),
            cast<double>(shear_z * pz)};
  }
};

/// The 2-D edge function of (a, b) in double: products of floats are exact there, so its
/// sign is exact, and the edge seen from the neighbouring triangle gives exactly its
/// negative — whether or not a compiler fuses the multiply and the subtraction.
Float64 edge(const Array3f64& a, const Array3f64& b) { return a.x * b.y - a.y * b.x; }

/// t in [0, tmax] from a numerator and a denominator in double (rounding to float keeps it
/// in range: tmax is a float).
Bool within(const Float64& t, const Float& tmax) { return (t >= 0.0) & (t <= cast<double>(tmax)); }

}  // namespace

TriangleArrays::TriangleArrays(const std::vector<float>& corners, const std::vector<uint32_t>& shapes,
                               const std::vector<uint32_t>& faces, const std::vector<uint32_t>& leaf_order)
    : p0(vector_in_leaf_order(corners, 9, 0, leaf_order)),
      p1(vector_in_leaf_order(corners, 9, 3, leaf_order)),
      p2(vector_in_leaf_order(corners, 9, 6, leaf_order)),
      shape(in_leaf_order(shapes, 1, 0, leaf_order)),
      face(in_leaf_order(faces, 1, 0, leaf_order)) {}

LeafTest TriangleArrays::leaf_test(const TraversalRay& ray) const {
  WatertightRay sheared(ray);
  return [arrays = *this, sheared](const UInt32& slot, const Float& tmax, const Bool& active) {
    auto corner = [&](const Array3f& p) {
      return sheared.transform(
          Array3f(gather(p.x, slot, active), gather(p.y, slot, active), gather(p.z, slot, active)));
    };
    Array3f64 a = corner(arrays.p0), b = corner(arrays.p1), c = corner(arrays.p2);
    // Barycentric weights (unnormalized) of a, b and c.
    Float64 wa = edge(c, b), wb = edge(a, c), wc = edge(b, a);
    Bool outside = ((wa < 0.0) | (wb < 0.0) | (wc < 0.0)) & ((wa > 0.0) | (wb > 0.0) | (wc > 0.0));
    Float64 determinant = wa + wb + wc;
    Float64 t = (wa * a.z + wb * b.z + wc * c.z) / determinant;
    Bool found = active & !outside & (determinant != 0.0) & within(t, tmax);
    return PrimitiveHit{found, cast<float>(t), cast<float>(wb / determinant), cast<float>(wc / determinant)};
  };
}

SphereArrays::SphereArrays(const std::vector<AnalyticSphere>& spheres, const std::vector<uint32_t>& shapes,
                           const std::vector<uint32_t>& leaf_order)
    : shape(in_leaf_order(shapes, 1, 0, leaf_order)) {
  std::vector<double> values;
  for (const AnalyticSphere& sphere : spheres)
    values.insert(values.end(), {sphere.center[0], sphere.center[1], sphere.center[2], sphere.radius});
  center = vector_in_leaf_order(values, 4, 0, leaf_order);
  radius = in_leaf_order(values, 4, 3, leaf_order);
}

LeafTest SphereArrays::leaf_test(const TraversalRay& ray) const {
  Array3f64 o(cast<double>(ray.o.x), cast<double>(ray.o.y), cast<double>(ray.o.z));
  Array3f64 d(cast<double>(ray.d.x), cast<double>(ray.d.y), cast<double>(ray.d.z));
  Float64 dd = dot(d, d);
  return [arrays = *this, o, d, dd](const UInt32& slot, const Float& tmax, const Bool& active) {
    const Array3f64& center = arrays.center;
    Array3f64 c(gather(center.x, slot, active), gather(center.y, slot, active), gather(center.z, slot, active));
    Float64 r = gather(arrays.radius, slot, active);
    // From the point of the ray closest to the center, as the Embree callback solves it: the
    // terms stay the size of the sphere however far away the origin is.
    Array3f64 to_origin = o - c;
    Float64 t_closest = -dot(to_origin, d) / dd;
    Array3f64 closest = to_origin + d * t_closest;
    Float64 half_chord_squared = (r * r - dot(closest, closest)) / dd;
    Float64 half_chord = sqrt(max(half_chord_squared, 0.0));
    Float64 t_in = t_closest - half_chord, t_out = t_closest + half_chord;
    Bool meets = active & (half_chord_squared >= 0.0);
    Bool in_hit = within(t_in, tmax);
    Bool found = meets & (in_hit | within(t_out, tmax));
    return PrimitiveHit{found, cast<float>(select(in_hit, t_in, t_out)), Float(0.0f), Float(0.0f)};
  };
}

DiskArrays::DiskArrays(const std::vector<AnalyticDisk>& disks, const std::vector<uint32_t>& shapes,
                       const std::vector<uint32_t>& leaf_order)
    : shape(in_leaf_order(shapes, 1, 0, leaf_order)) {
  std::vector<double> values;
  for (const AnalyticDisk& disk : disks) {
    for (const double* v : {disk.origin, disk.normal, disk.to_local_x, disk.to_local_y})
      values.insert(values.end(), v, v + 3);
  }
  origin = vector_in_leaf_order(values, 12, 0, leaf_order);
  normal = vector_in_leaf_order(values, 12, 3, leaf_order);
  to_local_x = vector_in_leaf_order(values, 12, 6, leaf_order);
  to_local_y = vector_in_leaf_order(values, 12, 9, leaf_order);
}

LeafTest DiskArrays::leaf_test(const TraversalRay& ray) const {
  Array3f64 o(cast<double>(ray.o.x), cast<double>(ray.o.y), cast<double>(ray.o.z));
  Array3f64 d(cast<double>(ray.d.x), cast<double>(ray.d.y), cast<double>(ray.d.z));
  return [arrays = *this, o, d](const UInt32& slot, const Float& tmax, const Bool& active) {
    auto at_slot = [&](const Array3f64& v) {
      return Array3f64(gather(v.x, slot, active), gather(v.y, slot, active), gather(v.z, slot, active));
    };
    Array3f64 p = at_slot(arrays.origin), n = at_slot(arrays.normal);
    Float64 t = dot(n, p - o) / dot(n, d);
    Array3f64 in_plane = o + d * t - p;
    Float64 x = dot(at_slot(arrays.to_local_x), in_plane), y = dot(at_slot(arrays.to_local_y), in_plane);
    Bool found = active & within(t, tmax) & (x * x + y * y <= 1.0);
    return PrimitiveHit{found, cast<float>(t), cast<float>(x), cast<float>(y)};
  };
}

}  // namespace kiln::render
