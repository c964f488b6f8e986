// The indirect visibility term's guiding distribution (indirect_guiding.h): boxes built on
// the host from training samples, sampled in kernels.
//
// Mitsuba seeds its guiding with projections (`guiding_proj`): its sample space is every
// silhouette segment of the scene, almost all of which no shading point sees, so it projects
// points the camera sees onto nearby silhouettes to find any. Kiln's space starts from a point
// the camera sees and picks an edge of a shape from there, so uniform training samples find
// the silhouettes; `guiding_proj` is read and checked and changes nothing.
#include "integrators/indirect_guiding.h"

#include "core/parameter_checks.h"

#include <kiln/construct.h>
#include <kiln/math.h>

#include <algorithm>
#include <queue>

namespace kiln::render {
namespace {

using Corner = std::array<float, 3>;

/// A box of the sample space, the training points in it (nonzero ones), their summed mass.
struct Box {
  Corner lower{0.0f, 0.0f, 0.0f}, upper{1.0f, 1.0f, 1.0f};
  std::vector<uint32_t> points;
  double mass = 0.0;
  int depth = 0;
};

// A box's mass is estimated from the training points in it, few of which hit anything, and a
// box that holds part of the integrand's support but none of those points gets only the
// uniform share. Where the term's value comes from rare samples (a small lamp's penumbra, a
// mesh's own shadow terminator: tests/python/test_render_grad_references.py's silhouette
// case), the octree must split on few points to find them; coarser boxes (depth 5, splitting
// at 32 points) left those regions to the uniform share, and 16 renders of 32 samples per
// pixel then missed them.
/// The grid's resolution along the pixel position's two axes and the silhouette's.
constexpr std::array<uint32_t, 3> kGridResolution{8, 8, 16};
/// An octree splits a leaf with at least this many nonzero points, up to this depth.
constexpr size_t kPointsToSplit = 8;
constexpr int kOctreeDepth = 6;

std::vector<Box> grid_boxes(const std::vector<Corner>& points, const std::vector<float>& masses) {
  auto [nx, ny, nz] = kGridResolution;
  std::vector<Box> cells(size_t(nx) * ny * nz);
  for (uint32_t i = 0; i < nx; ++i)
    for (uint32_t j = 0; j < ny; ++j)
      for (uint32_t k = 0; k < nz; ++k) {
        Box& cell = cells[(size_t(i) * ny + j) * nz + k];
        cell.lower = {float(i) / nx, float(j) / ny, float(k) / nz};
        cell.upper = {float(i + 1) / nx, float(j + 1) / ny, float(k + 1) / nz};
      }
  auto cell_of = [](float x, uint32_t n) { return std::min(uint32_t(x * float(n)), n - 1); };
  for (size_t p = 0; p < points.size(); ++p) {
    const Corner& q = points[p];
    cells[(size_t(cell_of(q[0], nx)) * ny + cell_of(q[1], ny)) * nz + cell_of(q[2], nz)].mass += masses[p];
  }
  return cells;
}

/// Leaves of an octree refined where the mass is: the leaf of most mass is split first,
/// while it has points enough to say where in it the mass lies, up to kCapacity leaves.
std::vector<Box> octree_boxes(const std::vector<Corner>& points, const std::vector<float>& masses) {
  std::vector<Box> leaves(1);
  for (uint32_t p = 0; p < points.size(); ++p)
    if (masses[p] > 0.0f) {
      leaves[0].points.push_back(p);
      leaves[0].mass += masses[p];
    }
  auto splittable = [](const Box& box) { return box.depth < kOctreeDepth && box.points.size() >= kPointsToSplit; };
  std::priority_queue<std::pair<double, size_t>> queue;
  if (splittable(leaves[0])) queue.push({leaves[0].mass, 0});
  while (!queue.empty() && leaves.size() + 7 <= IndirectGuiding::kCapacity) {
    size_t index = queue.top().second;
    queue.pop();
    Box parent = std::move(leaves[index]);
    Corner middle;
    for (int a = 0; a < 3; ++a) middle[a] = 0.5f * (parent.lower[a] + parent.upper[a]);
    std::array<Box, 8> children;
    for (int octant = 0; octant < 8; ++octant) {
      Box& child = children[octant];
      child.depth = parent.depth + 1;
      for (int a = 0; a < 3; ++a) {
        bool upper_half = (octant >> a) & 1;
        child.lower[a] = upper_half ? middle[a] : parent.lower[a];
        child.upper[a] = upper_half ? parent.upper[a] : middle[a];
      }
    }
    for (uint32_t p : parent.points) {
      int octant = 0;
      for (int a = 0; a < 3; ++a) octant |= int(points[p][a] >= middle[a]) << a;
      children[octant].points.push_back(p);
      children[octant].mass += masses[p];
    }
    for (int octant = 0; octant < 8; ++octant) {
      size_t slot = octant == 0 ? index : leaves.size();
      if (octant != 0) leaves.emplace_back();
      leaves[slot] = std::move(children[octant]);
      if (splittable(leaves[slot])) queue.push({leaves[slot].mass, slot});
    }
  }
  return leaves;
}

Float upload(const std::vector<float>& values) { return Float::from(values.data(), values.size()); }

}  // namespace

GuidingSettings guiding_settings(const Properties& props) {
  GuidingSettings settings;
  std::string kind = one_of(props, "guiding", "octree", {"none", "grid", "octree"});
  settings.kind = kind == "none" ? GuidingKind::None : kind == "grid" ? GuidingKind::Grid : GuidingKind::Octree;
  props.get_bool("guiding_proj", true);
  int64_t rounds = props.get_int("guiding_rounds", 1);
  if (rounds < 1 || rounds > 64) throw_parameter_error(props, "guiding_rounds", "must be between 1 and 64");
  settings.rounds = uint32_t(rounds);
  return settings;
}

IndirectGuiding::IndirectGuiding(GuidingKind kind, const std::vector<Corner>& points,
                                 const std::vector<float>& masses) {
  double total = 0.0;
  for (float mass : masses) total += mass;
  if (kind == GuidingKind::None || !(total > 0.0)) return;
  std::vector<Box> boxes = kind == GuidingKind::Grid ? grid_boxes(points, masses) : octree_boxes(points, masses);
  std::vector<float> lower[3], upper[3], probabilities, rcp_density;
  for (const Box& box : boxes) {
    double volume = 1.0;
    for (int a = 0; a < 3; ++a) {
      lower[a].push_back(box.lower[a]);
      upper[a].push_back(box.upper[a]);
      volume *= double(box.upper[a]) - box.lower[a];
    }
    double probability = (1.0 - kUniformShare) * box.mass / total + kUniformShare * volume;
    probabilities.push_back(float(probability));
    rcp_density.push_back(float(volume / probability));
  }
  for (int a = 0; a < 3; ++a) {
    lower_[a] = upload(lower[a]);
    upper_[a] = upload(upper[a]);
  }
  rcp_density_ = upload(rcp_density);
  boxes_ = DiscreteDistribution(probabilities, kCapacity);
}

std::pair<Array3f, Float> IndirectGuiding::sample(PCG32& rng) const {
  if (uniform()) {
    Float x = rng.next_float32(), y = rng.next_float32(), z = rng.next_float32();
    return {Array3f(x, y, z), full<Float>(1.0f, x.size())};
  }
  auto [box, reused] = boxes_.sample_reuse(rng.next_float32());
  Float within[3] = {reused, rng.next_float32(), rng.next_float32()};
  Float coordinates[3];
  for (int a = 0; a < 3; ++a) {
    Float lower = gather(lower_[a], box), upper = gather(upper_[a], box);
    coordinates[a] = min(lower + (upper - lower) * within[a], Float(0x1.fffffep-1f));
  }
  return {Array3f(coordinates[0], coordinates[1], coordinates[2]), gather(rcp_density_, box)};
}

}  // namespace kiln::render
