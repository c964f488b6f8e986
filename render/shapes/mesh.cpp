// Triangle meshes: hits interpolated from vertex data, positions sampled by area.
#include "shapes/mesh.h"

#include "shapes/mesh_silhouette.h"

#include <kiln/construct.h>
#include <kiln/errors.h>
#include <kiln/render/traverse.h>
#include <kiln/render/warp.h>
#include <kiln/tensor.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>

namespace kiln::render {
namespace {

Float kiln_copy(const std::vector<float>& values) { return Float::from(values.data(), values.size()); }

/// A flat host vector of `array` (evaluated).
template <typename T, typename A> std::vector<T> host_copy(const A& array) {
  std::vector<T> values(array.size());
  const T* data = static_cast<const T*>(array.data());
  std::copy(data, data + values.size(), values.begin());
  return values;
}

/// The angle between unit vectors a and b (Mitsuba's unit_angle: accurate near 0 and pi).
Float unit_angle(const Array3f& a, const Array3f& b) {
  Float half_gap = 0.5f * norm(a - b), half_sum = 0.5f * norm(a + b);
  return select(dot(a, b) < 0.0f, kPi - 2.0f * asin(min(half_sum, Float(1.0f))),
                2.0f * asin(min(half_gap, Float(1.0f))));
}

}  // namespace

Mesh::Mesh(const Properties& props, MeshData data)
    : Shape(props),
      orientation_(opaque<Float>(props.get_bool("flip_normals", false) ? -1.0f : 1.0f)),
      first_face_(opaque<UInt32>(0u)) {
  bool face_normals = props.get_bool("face_normals", false);
  if (face_normals) data.normals.clear();
  place_mesh(data, props.get_transform("to_world", kIdentityRows), face_normals, props.describe("to_world"));
  if (data.faces.empty())
    throw ValueError("kiln.render: " + describe_plugin(props.kind(), props.plugin(), props.id(), props.source()) +
                     ": the mesh has no faces");
  has_normals_ = !data.normals.empty();
  has_texcoords_ = !data.uvs.empty();
  positions_ = kiln_copy(data.positions);
  normals_ = has_normals_ ? kiln_copy(data.normals) : Float(0.0f);
  texcoords_ = has_texcoords_ ? kiln_copy(data.uvs) : Float(0.0f);
  faces_ = UInt32::from(data.faces.data(), data.faces.size());
  refresh_host_data();
  for (const auto& [name, attribute] : data.attributes)
    add_attribute(name, attribute.channels, kiln_copy(attribute.values));
}

Float Mesh::computed_vertex_normals() const {
  // The rule mesh_processing.cpp applies when a mesh is read (triangle normals weighted by
  // each corner's angle), in Kiln arrays, so the normals carry the positions' derivatives.
  Array3u face = gather<Array3u>(faces_, arange<UInt32>(face_count()));
  std::array<Array3f, 3> p{gather<Array3f>(positions_, face.x), gather<Array3f>(positions_, face.y),
                           gather<Array3f>(positions_, face.z)};
  std::array<UInt32, 3> index{face.x, face.y, face.z};
  Array3f area_vector = cross(p[1] - p[0], p[2] - p[0]);
  Bool valid = dot(area_vector, area_vector) > 0.0f;  // a degenerate triangle adds nothing
  Array3f n = normalize(area_vector);
  Float sums = zeros<Float>(positions_.size());
  for (size_t k = 0; k < 3; ++k) {
    const Array3f& at = p[k];
    Float angle = unit_angle(normalize(p[(k + 1) % 3] - at), normalize(p[(k + 2) % 3] - at));
    scatter_add(sums, n * angle, index[k], valid);
  }
  Array3f sum = unravel<Array3f>(sums);
  Float length = norm(sum);
  return ravel(select(length > 0.0f, sum / select(length > 0.0f, length, Float(1.0f)), Array3f(1.0f, 0.0f, 0.0f)));
}

void Mesh::refresh_host_data() {
  if (positions_.size() % 3 != 0 || faces_.size() % 3 != 0 || faces_.size() == 0)
    throw ValueError("kiln.render: shape '" + plugin() + "' (" + source() + "): vertex_positions (" +
                     std::to_string(positions_.size()) + " values) and faces (" + std::to_string(faces_.size()) +
                     ") need 3 values per vertex and per triangle, and at least one triangle");
  MeshData host;
  host.positions = host_copy<float>(positions_);
  host.faces = host_copy<uint32_t>(faces_);
  uint32_t vertices = uint32_t(host.vertex_count());
  auto beyond = std::find_if(host.faces.begin(), host.faces.end(), [&](uint32_t v) { return v >= vertices; });
  if (beyond != host.faces.end())
    throw ValueError("kiln.render: shape '" + plugin() + "' (" + source() + "): face " +
                     std::to_string((beyond - host.faces.begin()) / 3) + " names vertex " + std::to_string(*beyond) +
                     " of " + std::to_string(vertices) +
                     " (set vertex_positions and faces together, then params.update())");
  std::vector<float> areas = triangle_areas(host);
  // A mesh made empty (kr.Mesh(...) before its arrays are set) has no area to sample yet.
  bool has_area = std::any_of(areas.begin(), areas.end(), [](float a) { return a > 0.0f; });
  area_ = has_area ? DiscreteDistribution(areas) : DiscreteDistribution();
  host_ = std::move(host);
}

MeshData Mesh::host_data() const {
  MeshData data;
  data.positions = host_copy<float>(positions_);
  if (has_normals_) data.normals = host_copy<float>(normals_);
  if (has_texcoords_) data.uvs = host_copy<float>(texcoords_);
  data.faces = host_copy<uint32_t>(faces_);
  for (const auto& [name, attribute] : attributes_)
    data.attributes[name] = {attribute.channels, host_copy<float>(attribute.values)};
  return data;
}

std::string Mesh::describe_attribute(const std::string& name) const {
  return "kiln.render: shape '" + plugin() + "' (" + source() + "): attribute '" + name + "'";
}

void Mesh::check_attribute(const std::string& name, const Attribute& attribute) const {
  bool per_vertex = name.starts_with("vertex_");
  size_t count = per_vertex ? vertex_count() : face_count();
  if (attribute.values.size() != count * attribute.channels)
    throw ValueError(describe_attribute(name) + " of " + std::to_string(attribute.channels) + " channel(s) needs " +
                     std::to_string(count * attribute.channels) + " values (" + std::to_string(count) +
                     (per_vertex ? " vertices" : " faces") + "), not " + std::to_string(attribute.values.size()));
}

void Mesh::add_attribute(const std::string& name, size_t channels, const Float& values) {
  std::string where = describe_attribute(name);
  if (!name.starts_with("vertex_") && !name.starts_with("face_"))
    throw ValueError(where + ": the name must start with 'vertex_' or 'face_' (as in Mitsuba)");
  if (name == "vertex_positions" || name == "vertex_normals" || name == "vertex_texcoords" || attributes_.count(name))
    throw ValueError(where + ": the mesh has it already");
  if (channels == 0) throw ValueError(where + ": its size must be positive (values per vertex or face), got 0");
  Attribute attribute{channels, values};
  check_attribute(name, attribute);
  attributes_.emplace(name, std::move(attribute));
}

bool Mesh::has_attribute(const std::string& name) const { return attributes_.count(name) != 0; }

Color3f Mesh::eval_attribute(const std::string& name, const SurfaceInteraction& si, const Bool& active) const {
  auto found = attributes_.find(name);
  if (found == attributes_.end()) return Shape::eval_attribute(name, si, active);
  const Attribute& attribute = found->second;
  if (attribute.channels != 1 && attribute.channels != 3)
    throw ValueError(describe_attribute(name) + " has " + std::to_string(attribute.channels) +
                     " channels; a texture reads 1 (gray) or 3 (RGB)");
  auto value_at = [&](const UInt32& index) {
    if (attribute.channels == 3) return gather<Array3f>(attribute.values, index, active);
    Float gray = gather(attribute.values, index, active);
    return Array3f(gray, gray, gray);
  };
  if (name.starts_with("face_")) return value_at(si.prim_index);
  Array3u face = gather<Array3u>(faces_, si.prim_index, active);
  Array3f p0 = gather<Array3f>(positions_, face.x, active), p1 = gather<Array3f>(positions_, face.y, active),
          p2 = gather<Array3f>(positions_, face.z, active);
  // Barycentric coordinates of si.p in the triangle (least squares in its plane).
  Array3f e1 = p1 - p0, e2 = p2 - p0, to_p = si.p - p0;
  Float d11 = dot(e1, e1), d12 = dot(e1, e2), d22 = dot(e2, e2), dp1 = dot(to_p, e1), dp2 = dot(to_p, e2);
  Float det = d11 * d22 - d12 * d12;
  Float inv_det = select(det != 0.0f, rcp(det), Float(0.0f));
  Float b1 = (d22 * dp1 - d12 * dp2) * inv_det, b2 = (d11 * dp2 - d12 * dp1) * inv_det;
  return value_at(face.x) * (1.0f - b1 - b2) + value_at(face.y) * b1 + value_at(face.z) * b2;
}

void Mesh::require_area() const {
  if (area_.size() == 0)
    throw ValueError("kiln.render: shape '" + plugin() + "' (" + source() +
                     "): its triangles have no area, so it cannot be sampled (set vertex_positions and faces, "
                     "then params.update())");
}

std::unique_ptr<Silhouette> Mesh::silhouette(const std::array<float, 3>& eye) const {
  return mesh_silhouette(host_, !has_normals_, positions_, eye);
}

std::unique_ptr<Silhouette> Mesh::silhouettes() const { return mesh_silhouettes(host_, !has_normals_, positions_); }

AccelGeometry Mesh::accel_geometry() const { return AccelTriangles{host_.positions, host_.faces}; }

SurfaceInteraction Mesh::compute_surface_interaction(const Ray3f& ray, const PreliminaryIntersection& hit,
                                                     const Bool& active, const Bool& follow_shape) const {
  const MeshPool arrays = pool_ ? *pool_ : own_arrays();
  Array3u face = gather<Array3u>(arrays.faces, hit.prim_index + first_face_, active);
  Array3f p0 = gather<Array3f>(arrays.positions, face.x, active),
          p1 = gather<Array3f>(arrays.positions, face.y, active),
          p2 = gather<Array3f>(arrays.positions, face.z, active);
  Array3f e1 = p1 - p0, e2 = p2 - p0;
  Float t = hit.t, b1 = hit.prim_uv.x, b2 = hit.prim_uv.y;
  if (grad_enabled(p0) || grad_enabled(ray.o) || grad_enabled(ray.d)) {
    // The hit slides along the ray as the triangle or the ray moves (Mitsuba's default):
    // distance and barycentrics recomputed differentiably (Moller-Trumbore). Values stay
    // the tracer's, derivatives are the recomputation's. A material point keeps its
    // barycentrics.
    Array3f pvec = cross(ray.d, e2), tvec = ray.o - p0, qvec = cross(tvec, e1);
    Float det = dot(e1, pvec);
    Float inv_det = select(det != 0.0f, rcp(det), Float(0.0f));
    auto sliding = [&](const Float& value) { return select(follow_shape, Float(0.0f), value); };
    t = t + derivatives_without_values(sliding(dot(e2, qvec) * inv_det));
    b1 = b1 + derivatives_without_values(sliding(dot(tvec, pvec) * inv_det));
    b2 = b2 + derivatives_without_values(sliding(dot(ray.d, qvec) * inv_det));
  }
  Float b0 = 1.0f - b1 - b2;

  SurfaceInteraction si;
  si.t = t;
  si.p = p0 * b0 + p1 * b1 + p2 * b2;
  si.n = oriented(normalize(cross(e1, e2)));
  si.sh_frame.n = si.n;
  if (has_normals_) {
    Array3f n0 = gather<Array3f>(arrays.normals, face.x, active), n1 = gather<Array3f>(arrays.normals, face.y, active),
            n2 = gather<Array3f>(arrays.normals, face.z, active);
    si.sh_frame.n = oriented(normalize(n0 * b0 + n1 * b1 + n2 * b2));
  }
  if (has_texcoords_) {
    Array2f uv0 = gather<Array2f>(arrays.texcoords, face.x, active),
            uv1 = gather<Array2f>(arrays.texcoords, face.y, active),
            uv2 = gather<Array2f>(arrays.texcoords, face.z, active);
    Array2f duv0 = uv1 - uv0, duv1 = uv2 - uv0;
    si.uv = uv0 + duv0 * b1 + duv1 * b2;
    // dp/du and dp/dv from the edge vectors and the uv differences along them.
    Float det = duv0.x * duv1.y - duv0.y * duv1.x;
    Float inv_det = select(det != 0.0f, rcp(det), Float(0.0f));
    si.dp_du = (e1 * duv1.y - e2 * duv0.y) * inv_det;
    si.dp_dv = (e2 * duv0.x - e1 * duv1.x) * inv_det;
  } else {
    si.uv = Array2f(b1, b2);
    si.dp_du = e1;
    si.dp_dv = e2;
  }
  si.prim_index = hit.prim_index;
  return si;
}

PositionSample3f Mesh::sample_position(const Array2f& sample, const Bool& active) const {
  require_area();
  auto [face_index, reused] = area_.sample_reuse(sample.y, active);
  Array3u face = gather<Array3u>(faces_, face_index, active);
  Array3f p0 = gather<Array3f>(positions_, face.x, active), p1 = gather<Array3f>(positions_, face.y, active),
          p2 = gather<Array3f>(positions_, face.z, active);
  Array2f b = warp::square_to_uniform_triangle(Array2f(sample.x, reused));
  Float b0 = 1.0f - b.x - b.y;
  PositionSample3f ps;
  ps.p = p0 * b0 + p1 * b.x + p2 * b.y;
  ps.pdf = opaque<Float>(area_.normalization()) + zeros<Float>(sample.x.size());
  ps.delta = full<Bool>(false, sample.x.size());
  if (has_texcoords_)
    ps.uv = gather<Array2f>(texcoords_, face.x, active) * b0 + gather<Array2f>(texcoords_, face.y, active) * b.x +
            gather<Array2f>(texcoords_, face.z, active) * b.y;
  else
    ps.uv = b;
  if (has_normals_)
    ps.n = normalize(gather<Array3f>(normals_, face.x, active) * b0 + gather<Array3f>(normals_, face.y, active) * b.x +
                     gather<Array3f>(normals_, face.z, active) * b.y);
  else
    ps.n = normalize(cross(p1 - p0, p2 - p0));
  ps.n = oriented(ps.n);
  return ps;
}

Array3f Mesh::oriented(const Array3f& n) const { return n * orientation_; }

void Mesh::use_pool(std::shared_ptr<const MeshPool> pool, uint32_t first_face) {
  pool_ = std::move(pool);
  first_face_ = opaque<UInt32>(first_face);
}

void pool_meshes(const std::vector<std::shared_ptr<Shape>>& shapes) {
  std::map<std::pair<bool, bool>, std::vector<Mesh*>> by_layout;
  for (const auto& shape : shapes)
    if (auto* mesh = dynamic_cast<Mesh*>(shape.get())) by_layout[mesh->layout()].push_back(mesh);
  for (auto& [layout, meshes] : by_layout) {
    if (meshes.size() < 2) {
      meshes[0]->use_pool(nullptr, 0);
      continue;
    }
    std::vector<Tensor<float>> positions, normals, texcoords;
    std::vector<Tensor<uint32_t>> faces;
    uint32_t vertices = 0, face_count = 0;
    std::vector<uint32_t> first_faces;
    for (Mesh* mesh : meshes) {
      MeshPool own = mesh->own_arrays();
      positions.emplace_back(own.positions, kiln::Shape{own.positions.size()});
      if (layout.first) normals.emplace_back(own.normals, kiln::Shape{own.normals.size()});
      if (layout.second) texcoords.emplace_back(own.texcoords, kiln::Shape{own.texcoords.size()});
      faces.emplace_back(own.faces + vertices, kiln::Shape{own.faces.size()});
      first_faces.push_back(face_count);
      vertices += uint32_t(own.positions.size() / 3);
      face_count += uint32_t(own.faces.size() / 3);
    }
    auto pool = std::make_shared<MeshPool>();
    pool->positions = concatenate(positions).array();
    pool->normals = layout.first ? concatenate(normals).array() : Float(0.0f);
    pool->texcoords = layout.second ? concatenate(texcoords).array() : Float(0.0f);
    pool->faces = concatenate(faces).array();
    kiln::eval(pool->positions, pool->normals, pool->texcoords, pool->faces);
    for (size_t i = 0; i < meshes.size(); ++i) meshes[i]->use_pool(pool, first_faces[i]);
  }
}

Float Mesh::pdf_position(const PositionSample3f&, const Bool& active) const {
  require_area();
  return select(active, opaque<Float>(area_.normalization()), Float(0.0f));
}

Float Mesh::surface_area() const { return opaque<Float>(area_.size() == 0 ? 0.0f : area_.sum()); }

std::pair<std::array<float, 3>, std::array<float, 3>> Mesh::bounding_box() const {
  std::array<float, 3> lower{kInfinity, kInfinity, kInfinity}, upper{-kInfinity, -kInfinity, -kInfinity};
  for (size_t i = 0; i < host_.positions.size(); ++i) {
    lower[i % 3] = std::min(lower[i % 3], host_.positions[i]);
    upper[i % 3] = std::max(upper[i % 3], host_.positions[i]);
  }
  return {lower, upper};
}

void Mesh::traverse(TraversalCallback& callback) {
  Shape::traverse(callback);
  // A remeshed shape takes arrays of other sizes: parameters_changed() checks them together.
  using namespace param_flags;
  callback.put("vertex_positions", &positions_, kDiscontinuous | kResizable);
  if (has_normals_) callback.put("vertex_normals", &normals_, kDifferentiable | kResizable);
  if (has_texcoords_) callback.put("vertex_texcoords", &texcoords_, kDifferentiable | kResizable);
  callback.put("faces", &faces_, kNonDifferentiable | kResizable);
  for (auto& [name, attribute] : attributes_) callback.put(name, &attribute.values, kDifferentiable | kResizable);
}

void Mesh::parameters_changed(const std::vector<std::string>& keys) {
  // The geometry changed unless only the BSDF, the area light or attributes did (no keys:
  // everything may have).
  std::vector<std::string> others;
  std::copy_if(keys.begin(), keys.end(), std::back_inserter(others),
               [&](const std::string& key) { return !attributes_.count(key); });
  if (keys.empty() || (!others.empty() && !only_children_changed(others))) {
    std::vector<uint32_t> old_faces = host_.faces;
    size_t old_vertex_count = host_.vertex_count();
    refresh_host_data();
    bool reshaped = host_.faces != old_faces || vertex_count() != old_vertex_count;
    // What the ray tracer must take in (no less than what an update that failed below left).
    set_geometry_change(
        std::max(geometry_change(), reshaped ? GeometryChange::kReshaped : GeometryChange::kVerticesMoved));
    auto changed = [&](const char* key) { return std::find(keys.begin(), keys.end(), key) != keys.end(); };
    // New positions or faces without new normals: the normals follow them (as Mitsuba's),
    // with their derivatives. Texture coordinates a new vertex count leaves behind are
    // dropped (uv then barycentric, as for a mesh read without them; Mitsuba keeps zeros).
    if (has_normals_ && !changed("vertex_normals") && (changed("vertex_positions") || changed("faces")))
      normals_ = computed_vertex_normals();
    if (has_texcoords_ && !changed("vertex_texcoords") && texcoords_.size() != 2 * vertex_count())
      texcoords_ = kiln_copy({});
    has_normals_ = has_normals_ || changed("vertex_normals");  // given again after being dropped
    has_texcoords_ = has_texcoords_ || changed("vertex_texcoords");
    check_vertex_values("vertex_normals", has_normals_, normals_, 3);
    check_vertex_values("vertex_texcoords", has_texcoords_, texcoords_, 2);
  }
  // Every attribute still fits the mesh (a new vertex count needs new attributes too).
  for (const auto& [name, attribute] : attributes_) check_attribute(name, attribute);
}

void Mesh::check_vertex_values(const char* name, bool& has, const Float& values, size_t per_vertex) {
  if (!has) return;
  if (values.size() == 0) {
    has = false;  // an empty array: none
    return;
  }
  if (values.size() != per_vertex * vertex_count())
    throw ValueError("kiln.render: shape '" + plugin() + "' (" + source() + "): " + name + " holds " +
                     std::to_string(values.size()) + " values; its " + std::to_string(vertex_count()) +
                     " vertices need " + std::to_string(per_vertex * vertex_count()) + " (or none: an empty array)");
}

std::shared_ptr<Shape> make_mesh(size_t vertex_count, size_t face_count, bool vertex_normals, bool vertex_texcoords,
                                 const Properties& props) {
  MeshData data;
  data.positions.assign(3 * vertex_count, 0.0f);
  if (vertex_normals) data.normals.assign(3 * vertex_count, 0.0f);
  if (vertex_texcoords) data.uvs.assign(2 * vertex_count, 0.0f);
  data.faces.assign(3 * face_count, 0u);
  // No normals asked: none computed either (they would come from the zero positions).
  Properties settings = props;
  if (!vertex_normals && !settings.has("face_normals")) settings.set("face_normals", true, props.source());
  auto mesh = std::make_shared<Mesh>(settings, std::move(data));
  mesh->set_origin(props.plugin(), props.id(), props.source());
  return mesh;
}

namespace {

/// `shape` as a mesh; TypeError naming it otherwise.
template <typename S> auto& as_mesh(S& shape) {
  using M = std::conditional_t<std::is_const_v<S>, const Mesh, Mesh>;
  auto* mesh = dynamic_cast<M*>(&shape);
  if (!mesh)
    throw TypeError("kiln.render: shape '" + shape.plugin() + "' (" + shape.source() + ") is not a triangle mesh");
  return *mesh;
}

}  // namespace

MeshData mesh_arrays(const Shape& shape) { return as_mesh(shape).host_data(); }

void add_mesh_attribute(Shape& shape, const std::string& name, size_t channels, const Float& values) {
  as_mesh(shape).add_attribute(name, channels, values);
}

}  // namespace kiln::render
