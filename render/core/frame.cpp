// Orthonormal frames around a normal.
#include <kiln/math.h>
#include <kiln/render/frame.h>

namespace kiln::render {

std::pair<Array3f, Array3f> coordinate_system(const Array3f& n) {
  // Duff et al., "Building an Orthonormal Basis, Revisited" (2017): no branch, no
  // singularity; the sign picks the hemisphere of n.z.
  Float sign = select(n.z >= 0.0f, Float(1.0f), Float(-1.0f));
  Float a = -rcp(sign + n.z);
  Float b = n.x * n.y * a;
  Array3f s(fma(n.x * n.x, a * sign, Float(1.0f)), b * sign, -n.x * sign);
  Array3f t(b, fma(n.y * n.y, a, sign), -n.y);
  return {s, t};
}

Frame3f::Frame3f(const Array3f& normal) : n(normal) { std::tie(s, t) = coordinate_system(normal); }

}  // namespace kiln::render
