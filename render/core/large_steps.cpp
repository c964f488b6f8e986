// The large steps parameterization: the fused mesh's edges, the sparse product, and a
// conjugate gradient solve wrapped as a differentiable operation.
#include <kiln/autodiff.h>
#include <kiln/construct.h>
#include <kiln/errors.h>
#include <kiln/math.h>
#include <kiln/render/large_steps.h>

#include <array>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace kiln::render {
namespace {

constexpr float kRelativeResidual = 1e-6f;

/// The three components' sums of a·b, on the host.
std::array<double, 3> dots(const Array3f& a, const Array3f& b) {
  Float x = sum(a.x * b.x), y = sum(a.y * b.y), z = sum(a.z * b.z);
  kiln::eval(x, y, z);
  return {x.read(0), y.read(0), z.read(0)};
}

Array3f scaled(const Array3f& v, const std::array<double, 3>& s) {
  return Array3f(v.x * float(s[0]), v.y * float(s[1]), v.z * float(s[2]));
}

/// from_differential()'s solve as an operation whose derivatives are solves too.
class SolveOp : public CustomOp<std::tuple<Array3f>, std::tuple<Array3f>> {
 public:
  SolveOp(const LargeSteps& system, Array3f start) : system_(system), start_(std::move(start)) {}
  std::string name() const override { return "LargeSteps.from_differential"; }
  Outputs eval(const Inputs& inputs) override { return {system_.solve(std::get<0>(inputs), start_)}; }
  Outputs forward(const Inputs& tangents) override { return {solve_from_zero(std::get<0>(tangents))}; }
  Inputs backward(const Outputs& adjoints) override { return {solve_from_zero(std::get<0>(adjoints))}; }

 private:
  Array3f solve_from_zero(const Array3f& b) const {
    size_t n = system_.unique_count();
    return system_.solve(b, Array3f(zeros<Float>(n), zeros<Float>(n), zeros<Float>(n)));
  }
  const LargeSteps system_;  // a copy: the operation may outlive the caller's
  Array3f start_;
};

}  // namespace

LargeSteps::LargeSteps(const Float& positions, const UInt32& faces, float lambda)
    : lambda_(lambda), last_solution_(std::make_shared<Array3f>()) {
  if (!(lambda >= 0.0f) || !std::isfinite(lambda))
    throw ValueError("kiln.render: LargeSteps(): lambda_ must be a finite number >= 0, got " + std::to_string(lambda));
  if (positions.size() % 3 != 0 || positions.size() == 0)
    throw ValueError("kiln.render: LargeSteps(): the positions must be 3 values per vertex, got " +
                     std::to_string(positions.size()));
  if (faces.size() % 3 != 0 || faces.size() == 0)
    throw ValueError("kiln.render: LargeSteps(): the faces must be 3 indices per triangle, got " +
                     std::to_string(faces.size()));
  std::vector<float> p = positions.to_vector();
  std::vector<uint32_t> f = faces.to_vector();
  vertex_count_ = p.size() / 3;
  // Fuse coincident vertices (exactly equal coordinates), numbered in order of appearance.
  std::map<std::array<float, 3>, uint32_t> seen;
  std::vector<uint32_t> fused(vertex_count_), first_copy;
  for (size_t i = 0; i < vertex_count_; ++i) {
    auto [at, inserted] = seen.emplace(std::array<float, 3>{p[3 * i], p[3 * i + 1], p[3 * i + 2]}, first_copy.size());
    if (inserted) first_copy.push_back(uint32_t(i));
    fused[i] = at->second;
  }
  unique_count_ = first_copy.size();
  std::set<std::pair<uint32_t, uint32_t>> edges;
  for (size_t t = 0; t < f.size() / 3; ++t)
    for (size_t k = 0; k < 3; ++k) {
      uint32_t a = f[3 * t + k], b = f[3 * t + (k + 1) % 3];
      if (a >= vertex_count_ || b >= vertex_count_)
        throw ValueError("kiln.render: LargeSteps(): face " + std::to_string(t) + " refers to vertex " +
                         std::to_string(std::max(a, b)) + " of " + std::to_string(vertex_count_));
      a = fused[a], b = fused[b];
      if (a != b) edges.insert({std::min(a, b), std::max(a, b)});
    }
  std::vector<uint32_t> from, to;
  std::vector<float> degree(unique_count_, 0.0f);
  for (auto [a, b] : edges) {
    from.insert(from.end(), {a, b});
    to.insert(to.end(), {b, a});
    degree[a] += 1.0f, degree[b] += 1.0f;
  }
  first_copy_ = UInt32::from(first_copy);
  fused_ = UInt32::from(fused);
  edge_from_ = UInt32::from(from);
  edge_to_ = UInt32::from(to);
  degree_ = Float::from(degree);
}

Array3f LargeSteps::apply(const Array3f& x) const {
  size_t n = unique_count_;
  Array3f neighbours(zeros<Float>(n), zeros<Float>(n), zeros<Float>(n));
  if (edge_from_.size() > 0)
    for (size_t c = 0; c < 3; ++c) scatter_add(neighbours[c], gather(x[c], edge_to_), edge_from_);
  return x + (x * degree_ - neighbours) * lambda_;
}

Array3f LargeSteps::solve(const Array3f& b, const Array3f& start) const {
  // Conjugate gradients, the three coordinates at once (each with its own step sizes).
  GradScope detached = suspend_grad();
  Array3f x = start, r = b - apply(start), p = r;
  kiln::eval(x, r, p);
  std::array<double, 3> rr = dots(r, r), bb = dots(b, b);
  for (size_t iteration = 0; iteration < 10 * unique_count_ + 100; ++iteration) {
    bool converged = true;
    for (int c = 0; c < 3; ++c) converged = converged && rr[c] <= kRelativeResidual * kRelativeResidual * bb[c];
    if (converged) break;
    Array3f ap = apply(p);
    std::array<double, 3> pap = dots(p, ap), alpha, beta;
    for (int c = 0; c < 3; ++c) alpha[c] = pap[c] > 0.0 ? rr[c] / pap[c] : 0.0;
    x = x + scaled(p, alpha);
    r = r - scaled(ap, alpha);
    kiln::eval(x, r);
    std::array<double, 3> next = dots(r, r);
    for (int c = 0; c < 3; ++c) beta[c] = rr[c] > 0.0 ? next[c] / rr[c] : 0.0;
    rr = next;
    p = r + scaled(p, beta);
    kiln::eval(p);
  }
  return x;
}

Float LargeSteps::to_differential(const Float& positions) const {
  if (positions.size() != 3 * vertex_count_)
    throw SizeError("kiln.render: LargeSteps.to_differential(): expected " + std::to_string(3 * vertex_count_) +
                    " values (3 per vertex), got " + std::to_string(positions.size()));
  return ravel(apply(gather<Array3f>(positions, first_copy_)));
}

Float LargeSteps::from_differential(const Float& differential) const {
  if (differential.size() != 3 * unique_count_)
    throw SizeError("kiln.render: LargeSteps.from_differential(): expected " + std::to_string(3 * unique_count_) +
                    " values (3 per fused vertex, as to_differential() gives), got " +
                    std::to_string(differential.size()));
  Array3f u = unravel<Array3f>(differential);
  size_t n = unique_count_;
  Array3f start =
      last_solution_->x.valid() ? *last_solution_ : Array3f(zeros<Float>(n), zeros<Float>(n), zeros<Float>(n));
  auto [x] = custom(std::make_shared<SolveOp>(*this, start), u);
  *last_solution_ = detach(x);
  return ravel(gather<Array3f>(ravel(x), fused_));
}

}  // namespace kiln::render
