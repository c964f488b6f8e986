// What every shape shares: its BSDF and area light, and direction sampling through
// position sampling (converted from area to solid angle at the reference point).
#include <kiln/render/bsdf.h>
#include <kiln/render/emitter.h>
#include <kiln/render/plugin.h>
#include <kiln/render/shape.h>
#include <kiln/render/traverse.h>

#include <algorithm>

namespace kiln::render {

Shape::Shape(const Properties& props) {
  for (const auto& object : props.objects(PluginKind::Bsdf)) bsdf_ = std::dynamic_pointer_cast<BSDF>(object);
  for (const auto& object : props.objects(PluginKind::Emitter)) emitter_ = std::dynamic_pointer_cast<Emitter>(object);
  // As Mitsuba: a default diffuse BSDF, black on an area light (emitters do not reflect).
  if (!bsdf_) {
    Properties diffuse(PluginKind::Bsdf, "diffuse", "", props.source());
    if (emitter_) diffuse.set("reflectance", 0.0);
    bsdf_ = std::dynamic_pointer_cast<BSDF>(create_object(diffuse));
  }
}

Float Shape::pdf_position(const PositionSample3f&, const Bool& active) const {
  return select(active, rcp(surface_area()), Float(0.0f));
}

DirectionSample3f Shape::sample_direction(const Array3f& ref_p, const Array2f& sample, const Bool& active) const {
  PositionSample3f ps = sample_position(sample, active);
  DirectionSample3f ds;
  ds.p = ps.p;
  ds.n = ps.n;
  ds.uv = ps.uv;
  ds.delta = ps.delta;
  Array3f to_point = ps.p - ref_p;
  Float dist_squared = squared_norm(to_point);
  ds.dist = sqrt(dist_squared);
  ds.d = to_point / ds.dist;
  Float conversion = dist_squared / abs(dot(ds.d, ds.n));
  ds.pdf = ps.pdf * select(isfinite(conversion), conversion, Float(0.0f));
  ds.emitter = UInt32(0u);
  return ds;
}

Float Shape::pdf_direction(const Array3f&, const DirectionSample3f& ds, const Bool& active) const {
  PositionSample3f ps{ds.p, ds.n, ds.uv, Float(0.0f), ds.delta};
  Float cosine = abs(dot(ds.d, ds.n));
  Float conversion = select(cosine != 0.0f, ds.dist * ds.dist / cosine, Float(0.0f));
  return pdf_position(ps, active) * conversion;
}

bool Shape::has_attribute(const std::string&) const { return false; }

Color3f Shape::eval_attribute(const std::string&, const SurfaceInteraction& si, const Bool&) const {
  return Color3f(0.0f, 0.0f, 0.0f) * zeros<Float>(si.t.size());
}

bool Shape::only_children_changed(const std::vector<std::string>& keys) {
  return !keys.empty() &&
         std::all_of(keys.begin(), keys.end(), [](const std::string& k) { return k == "bsdf" || k == "emitter"; });
}

void Shape::traverse(TraversalCallback& callback) {
  callback.put_object("bsdf", bsdf_.get());
  if (emitter_) callback.put_object("emitter", emitter_.get());
}

}  // namespace kiln::render
