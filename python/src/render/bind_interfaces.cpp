// What an integrator or BSDF written in Python calls, with Mitsuba 3's names: rays, surface
// interactions (si.bsdf(), si.emitter(scene)), BSDF and emitter queries, Fresnel terms,
// scene queries, camera rays, the sampler's generators and the film's image blocks.
#include "render/render_binding.h"

#include <kiln/errors.h>
#include <kiln/render/film.h>
#include <kiln/render/fresnel.h>
#include <kiln/render/sampler.h>
#include <kiln/render/scene.h>

#include <nanobind/stl/array.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <limits>

namespace kiln::python::render {
namespace {

using namespace kiln::render;

/// One lane of zeros, with the identity as shading frame and wi = +z (Dr.Jit's
/// dr.zeros(mi.SurfaceInteraction3f), but with a frame that to_local/to_world can use).
SceneInteraction zero_interaction() {
  SceneInteraction si;
  Float zero(0.0f), one(1.0f);
  si.t = zero;
  si.p = si.n = si.dp_du = si.dp_dv = Array3f(zero, zero, zero);
  si.uv = Array2f(zero, zero);
  si.sh_frame = Frame3f(Array3f(one, zero, zero), Array3f(zero, one, zero), Array3f(zero, zero, one));
  si.wi = Array3f(zero, zero, one);
  si.shape = si.prim_index = UInt32(0u);
  return si;
}

/// The BSDFs of the shapes an interaction hit, per lane (Mitsuba's BSDFPtr): queries
/// dispatch on each lane's BSDF.
struct BSDFPtr {
  std::shared_ptr<const Scene> scene;
};

/// The emitters at an interaction, per lane (Mitsuba's EmitterPtr): area lights on hits,
/// the environment on misses.
struct EmitterPtr {
  std::shared_ptr<const Scene> scene;
};

TransportMode transport_mode(const std::string& mode) {
  if (mode == "radiance") return TransportMode::Radiance;
  if (mode == "importance") return TransportMode::Importance;
  throw ValueError("kiln.render: BSDFContext: mode must be 'radiance' or 'importance', got '" + mode + "'");
}

void bind_records(nb::module_& m) {
  nb::class_<Ray3f>(m, "Ray3f", "A ray per lane: origin o, unit direction d, and its extent maxt.")
      .def(
          "__init__",
          [](Ray3f* self, const Array3f& o, const Array3f& d, const Float& maxt) { new (self) Ray3f{o, d, maxt}; },
          nb::arg("o"), nb::arg("d"), nb::arg("maxt") = std::numeric_limits<float>::infinity())
      .def(nb::init<const Ray3f&>(), nb::arg("ray"), "A copy.")
      .def_rw("o", &Ray3f::o)
      .def_rw("d", &Ray3f::d)
      .def_rw("maxt", &Ray3f::maxt)
      .def("__call__", &Ray3f::operator(), nb::arg("t"), "The point o + t d.");
  nb::class_<PreliminaryIntersection>(m, "PreliminaryIntersection3f",
                                      "What the ray tracer found (scene.ray_intersect_preliminary()): t = inf and "
                                      "shape_index = 2**32 - 1 on misses.")
      .def_rw("t", &PreliminaryIntersection::t)
      .def_rw("prim_uv", &PreliminaryIntersection::prim_uv,
              "Barycentrics (u, v) of vertices 1 and 2 on a triangle; the local (x, y) on a disk; 0 on a sphere.")
      .def_rw("prim_index", &PreliminaryIntersection::prim_index, "The triangle within its mesh (0 otherwise).")
      .def_rw("shape_index", &PreliminaryIntersection::shape_index, "The hit shape's position in the scene (0-based).")
      .def("is_valid", &PreliminaryIntersection::is_valid);
  nb::class_<Frame3f>(m, "Frame3f", "An orthonormal frame (s, t, n).")
      .def(
          "__init__",
          [](Frame3f* self) {
            Float zero(0.0f), one(1.0f);
            new (self) Frame3f(Array3f(one, zero, zero), Array3f(zero, one, zero), Array3f(zero, zero, one));
          },
          "The identity frame.")
      .def(
          "__init__", [](Frame3f* self, nb::handle n) { new (self) Frame3f(as_vector<Array3f>(n, "Frame3f(): n")); },
          nb::arg("n"), "A frame around the unit normal n (a vector or three numbers).")
      .def(
          "__init__",
          [](Frame3f* self, nb::handle s, nb::handle t, nb::handle n) {
            new (self) Frame3f(as_vector<Array3f>(s, "Frame3f(): s"), as_vector<Array3f>(t, "Frame3f(): t"),
                               as_vector<Array3f>(n, "Frame3f(): n"));
          },
          nb::arg("s"), nb::arg("t"), nb::arg("n"), "The frame with these axes (taken as given).")
      .def_static("cos_theta", &cos_theta, nb::arg("v"), "cos θ of a local direction (its z).")
      .def_static("sin_theta_2", &sin_theta_2, nb::arg("v"), "sin² θ of a local direction.")
      .def_static(
          "cos_theta_2", [](const Array3f& v) { return v.z * v.z; }, nb::arg("v"), "cos² θ of a local direction.")
      .def_static(
          "sin_theta", [](const Array3f& v) { return sqrt(max(sin_theta_2(v), Float(0.0f))); }, nb::arg("v"),
          "sin θ of a local direction.")
      .def_static(
          "tan_theta", [](const Array3f& v) { return sqrt(max(sin_theta_2(v), Float(0.0f))) / v.z; }, nb::arg("v"),
          "tan θ of a local direction.")
      .def_rw("s", &Frame3f::s)
      .def_rw("t", &Frame3f::t)
      .def_rw("n", &Frame3f::n)
      .def("to_local", &Frame3f::to_local, nb::arg("v"))
      .def("to_world", &Frame3f::to_world, nb::arg("v"));
  nb::class_<BSDFContext>(m, "BSDFContext", "What a BSDF query considers: the transport mode and the lobes.")
      .def(
          "__init__", [](BSDFContext* self, const std::string& mode) { new (self) BSDFContext{transport_mode(mode)}; },
          nb::arg("mode") = "radiance")
      .def_rw("type_mask", &BSDFContext::type_mask)
      .def_rw("component", &BSDFContext::component);
  nb::class_<BSDFSample3f>(m, "BSDFSample3f", "A sampled outgoing direction (local) and its density.")
      .def(
          "__init__",
          [](BSDFSample3f* self) {
            new (self) BSDFSample3f{Array3f(0.0f, 0.0f, 0.0f), Float(0.0f), Float(1.0f), UInt32(0u), UInt32(0u)};
          },
          "One lane: wo = 0, pdf 0, eta 1, no lobe (a BSDF written in Python fills it in sample()).")
      .def_rw("wo", &BSDFSample3f::wo)
      .def_rw("pdf", &BSDFSample3f::pdf)
      .def_rw("eta", &BSDFSample3f::eta)
      .def_rw("sampled_type", &BSDFSample3f::sampled_type)
      .def_rw("sampled_component", &BSDFSample3f::sampled_component);
  nb::class_<DirectionSample3f>(m, "DirectionSample3f",
                                "A point on an emitter as seen from a reference point: p, n, d, dist, pdf, emitter id.")
      .def_rw("p", &DirectionSample3f::p)
      .def_rw("n", &DirectionSample3f::n)
      .def_rw("uv", &DirectionSample3f::uv)
      .def_rw("pdf", &DirectionSample3f::pdf)
      .def_rw("delta", &DirectionSample3f::delta)
      .def_rw("d", &DirectionSample3f::d)
      .def_rw("dist", &DirectionSample3f::dist)
      .def_rw("emitter", &DirectionSample3f::emitter);
  namespace f = bsdf_flags;
  nb::dict flags;  // Mitsuba's names and bits; the combinations after the lobes
  for (auto [name, bits] : {std::pair{"Empty", f::kNone},
                            {"Null", f::kNull},
                            {"DiffuseReflection", f::kDiffuseReflection},
                            {"DiffuseTransmission", f::kDiffuseTransmission},
                            {"GlossyReflection", f::kGlossyReflection},
                            {"GlossyTransmission", f::kGlossyTransmission},
                            {"DeltaReflection", f::kDeltaReflection},
                            {"DeltaTransmission", f::kDeltaTransmission},
                            {"Anisotropic", f::kAnisotropic},
                            {"SpatiallyVarying", f::kSpatiallyVarying},
                            {"NonSymmetric", f::kNonSymmetric},
                            {"FrontSide", f::kFrontSide},
                            {"BackSide", f::kBackSide},
                            {"Reflection", f::kReflection},
                            {"Transmission", f::kTransmission},
                            {"Diffuse", f::kDiffuse},
                            {"Glossy", f::kGlossy},
                            {"Smooth", f::kSmooth},
                            {"Delta", f::kDelta},
                            {"All", f::kAll}})
    flags[name] = bits;
  // An IntFlag, as Mitsuba's: `a | b`, `+flag` and kl.UInt32(flag) give the bits.
  m.attr("BSDFFlags") = nb::module_::import_("enum").attr("IntFlag")("BSDFFlags", flags);
}

void bind_fresnel(nb::module_& m) {
  m.def(
      "fresnel",
      [](const Float& cos_theta_i, const Float& eta) {
        FresnelResult f = fresnel(cos_theta_i, eta);
        return std::tuple(f.reflectance, f.cos_theta_t, f.eta_it, f.eta_ti);
      },
      nb::arg("cos_theta_i"), nb::arg("eta"),
      "(F, cos θt, eta_it, eta_ti): the dielectric Fresnel reflectance of relative index eta and the refraction data "
      "(Mitsuba's mi.fresnel).");
  m.def("fresnel_conductor", &fresnel_conductor, nb::arg("cos_theta_i"), nb::arg("eta"), nb::arg("k"),
        "The unpolarized reflectance of a conductor of index eta + i k, per channel.");
  m.def(
      "reflect", [](const Array3f& wi) { return Array3f(-wi.x, -wi.y, wi.z); }, nb::arg("wi"),
      "wi mirrored about +z (local).");
  m.def(
      "reflect", [](const Array3f& wi, const Array3f& m) { return reflect(wi, m); }, nb::arg("wi"), nb::arg("m"),
      "wi mirrored about the normal m.");
  m.def(
      "refract",
      [](const Array3f& wi, const Float& cos_theta_t, const Float& eta_ti) { return refract(wi, cos_theta_t, eta_ti); },
      nb::arg("wi"), nb::arg("cos_theta_t"), nb::arg("eta_ti"), "wi refracted through +z, from fresnel()'s results.");
  m.def(
      "refract",
      [](const Array3f& wi, const Array3f& m, const Float& cos_theta_t, const Float& eta_ti) {
        return refract(wi, m, cos_theta_t, eta_ti);
      },
      nb::arg("wi"), nb::arg("m"), nb::arg("cos_theta_t"), nb::arg("eta_ti"),
      "wi refracted through the normal m, from fresnel()'s results at cos θi = dot(wi, m).");
}

/// BSDFPtr's eval, pdf or eval_pdf: `pick` takes its part of the scene's (eval, pdf).
template <typename Pick> auto eval_pdf_part(Pick pick) {
  return [pick](const BSDFPtr& self, const BSDFContext& ctx, const SceneInteraction& si, const Array3f& wo,
                const Bool& active) { return pick(self.scene->bsdf_eval_pdf(ctx, si, wo, active)); };
}

void bind_interaction(nb::module_& m) {
  nb::class_<SceneInteraction>(m, "SurfaceInteraction3f",
                               "Where rays met surfaces (scene.ray_intersect()): t = inf and shape = 0 on misses.")
      .def(
          "__init__", [](SceneInteraction* self) { new (self) SceneInteraction(zero_interaction()); },
          "One lane of zeros (identity shading frame, wi = +z), for evaluating a BSDF directly; si.bsdf() needs an "
          "interaction from scene.ray_intersect().")
      .def_rw("t", &SurfaceInteraction::t)
      .def_rw("p", &SurfaceInteraction::p)
      .def_rw("n", &SurfaceInteraction::n, "The geometric normal.")
      .def_rw("uv", &SurfaceInteraction::uv)
      .def_rw("sh_frame", &SurfaceInteraction::sh_frame, "The shading frame.")
      .def_rw("wi", &SurfaceInteraction::wi, "Towards where the ray came from, in the shading frame.")
      .def_rw("shape", &SurfaceInteraction::shape, "The hit shape's id (1-based; 0: nothing was hit).")
      .def_rw("prim_index", &SurfaceInteraction::prim_index)
      .def("is_valid", &SurfaceInteraction::is_valid)
      .def("to_local", &SurfaceInteraction::to_local, nb::arg("v"))
      .def("to_world", &SurfaceInteraction::to_world, nb::arg("v"))
      .def("spawn_ray", &SurfaceInteraction::spawn_ray, nb::arg("d"), "A ray leaving the surface along d (world).")
      .def("spawn_ray_to", &SurfaceInteraction::spawn_ray_to, nb::arg("target"),
           "A ray towards a point, ending just short of it.")
      .def(
          "bsdf",
          [](const SceneInteraction& si) {
            if (!si.scene)
              throw ValueError(
                  "kiln.render: si.bsdf(): this interaction was not found by scene.ray_intersect(), so "
                  "there is no hit shape to take the BSDF from; call bsdf.eval(ctx, si, wo) on a BSDF");
            return BSDFPtr{si.scene};
          },
          "The BSDFs of the hit shapes, per lane.")
      .def(
          "emitter", [](const SceneInteraction&, const std::shared_ptr<Scene>& scene) { return EmitterPtr{scene}; },
          nb::arg("scene"), "The emitters at the interaction: area lights on hits, the environment on misses.");

  nb::class_<BSDFPtr>(m, "BSDFPtr", "The BSDFs of the shapes an interaction hit, per lane (si.bsdf()).")
      .def(
          "sample",
          [](const BSDFPtr& self, const BSDFContext& ctx, const SceneInteraction& si, const Float& sample1,
             const Array2f& sample2,
             const Bool& active) { return self.scene->bsdf_sample(ctx, si, sample1, sample2, active); },
          nb::arg("ctx"), nb::arg("si"), nb::arg("sample1"), nb::arg("sample2"), nb::arg("active") = true,
          "(BSDFSample3f, weight = eval / pdf · cos) for a direction drawn from the BSDF.")
      .def("eval", eval_pdf_part([](const auto& both) { return both.first; }), nb::arg("ctx"), nb::arg("si"),
           nb::arg("wo"), nb::arg("active") = true, "The BSDF times the cosine towards wo (local).")
      .def("pdf", eval_pdf_part([](const auto& both) { return both.second; }), nb::arg("ctx"), nb::arg("si"),
           nb::arg("wo"), nb::arg("active") = true, "The density sample() draws wo (local) with.")
      .def("eval_pdf", eval_pdf_part([](const auto& both) { return both; }), nb::arg("ctx"), nb::arg("si"),
           nb::arg("wo"), nb::arg("active") = true, "(eval, pdf) together.")
      .def(
          "flags", [](const BSDFPtr& self, const SceneInteraction& si) { return self.scene->bsdf_flags(si); },
          nb::arg("si"), "The lobes (kr.BSDFFlags) of each lane's BSDF (0 on misses).");
  nb::class_<EmitterPtr>(m, "EmitterPtr", "The emitters at an interaction, per lane (si.emitter(scene)).")
      .def(
          "eval",
          [](const EmitterPtr& self, const SceneInteraction& si, const Bool& active) {
            return self.scene->eval_emitter(si, active);
          },
          nb::arg("si"), nb::arg("active") = true, "Radiance emitted towards -si.wi (0 where none).");
}

/// Adds method `name` to the already bound class `cls` (as nb::class_::def would).
template <typename Fn, typename... Extra>
void def_method(nb::handle cls, const char* name, Fn&& fn, const Extra&... extra) {
  cls.attr(name) = nb::cpp_function(std::forward<Fn>(fn), nb::scope(cls), nb::name(name), nb::is_method(), extra...);
}

void bind_scene_queries(nb::handle scene) {
  def_method(
      scene, "ray_intersect",
      [](const std::shared_ptr<Scene>& self, const Ray3f& ray, const Bool& active) {
        return SceneInteraction{self->ray_intersect(ray, active), self};
      },
      nb::arg("ray"), nb::arg("active") = true, "The nearest hit along each ray (SurfaceInteraction3f).");
  def_method(
      scene, "ray_intersect_preliminary",
      [](const Scene& self, const Ray3f& ray, const Bool& active) {
        return self.ray_intersect_preliminary(ray, active);
      },
      nb::arg("ray"), nb::arg("active") = true, "The ray tracer's nearest hit along each ray, as it found it.");
  def_method(
      scene, "ray_test",
      [](const Scene& self, const Ray3f& ray, const Bool& active) { return self.ray_test(ray, active); },
      nb::arg("ray"), nb::arg("active") = true, "Whether anything lies along each ray within maxt.");
  def_method(
      scene, "sample_emitter_direction",
      [](const Scene& self, const SceneInteraction& ref, const Array2f& sample, bool test_visibility,
         const Bool& active) { return self.sample_emitter_direction(ref, sample, test_visibility, active); },
      nb::arg("ref"), nb::arg("sample"), nb::arg("test_visibility") = true, nb::arg("active") = true,
      "(DirectionSample3f, emitted radiance / pdf) towards an emitter chosen uniformly; 0 where occluded.");
  def_method(
      scene, "pdf_emitter_direction",
      [](const Scene& self, const SceneInteraction& ref, const DirectionSample3f& ds, const Bool& active) {
        return self.pdf_emitter_direction(ref.p, ds, active);
      },
      nb::arg("ref"), nb::arg("ds"), nb::arg("active") = true,
      "The density sample_emitter_direction() gives ds, seen from ref.");
  def_method(
      scene, "pdf_emitter_direction",
      [](const Scene& self, const Array3f& ref_p, const DirectionSample3f& ds, const Bool& active) {
        return self.pdf_emitter_direction(ref_p, ds, active);
      },
      nb::arg("ref_p"), nb::arg("ds"), nb::arg("active") = true, "The same, seen from the points ref_p.");
  def_method(
      scene, "hit_direction_sample",
      [](const Scene& self, const SceneInteraction& si, const Array3f& ref_p) {
        return self.hit_direction_sample(si, ref_p);
      },
      nb::arg("si"), nb::arg("ref_p"),
      "The direction sample that reached si from ref_p (for pdf_emitter_direction after a BSDF sample).");
  nb::object property = nb::module_::import_("builtins").attr("property");
  scene.attr("environment") = property(nb::cpp_function([](const Scene& self) { return self.environment(); }),
                                       nb::none(), nb::none(), "The environment emitter's id (0: none).");
  scene.attr("accel") = property(
      nb::cpp_function([](const Scene& self) { return std::string(accel_kind_name(self.accel_kind())); }), nb::none(),
      nb::none(), "The ray tracer the scene built: \"embree\" or \"kiln\" (the scene's `accel` property).");
}

void bind_object_queries(nb::handle sensor, nb::handle bsdf, nb::handle emitter) {
  def_method(sensor, "sample_ray", &Sensor::sample_ray, nb::arg("position"), nb::arg("active") = true,
             "(ray, weight) through film positions in [0, 1]^2 (x right, y down).");
  def_method(sensor, "film", [](const Sensor& self) { return self.film(); }, "The film.");
  def_method(
      sensor, "world_transform", [](const Sensor& self) { return self.world_transform(); },
      "Camera space to world space (a kr.Transform4f).");
  def_method(sensor, "sampler", [](const Sensor& self) { return self.sampler(); }, "The sampler.");
  def_method(
      bsdf, "sample",
      [](const BSDF& self, const BSDFContext& ctx, const SceneInteraction& si, const Float& sample1,
         const Array2f& sample2, const Bool& active) { return self.sample(ctx, si, sample1, sample2, active); },
      nb::arg("ctx"), nb::arg("si"), nb::arg("sample1"), nb::arg("sample2"), nb::arg("active") = true,
      "(BSDFSample3f, weight = eval / pdf) for a direction drawn from this BSDF.");
  def_method(
      bsdf, "eval",
      [](const BSDF& self, const BSDFContext& ctx, const SceneInteraction& si, const Array3f& wo, const Bool& active) {
        return self.eval(ctx, si, wo, active);
      },
      nb::arg("ctx"), nb::arg("si"), nb::arg("wo"), nb::arg("active") = true,
      "This BSDF times the cosine towards wo (local).");
  def_method(
      bsdf, "pdf",
      [](const BSDF& self, const BSDFContext& ctx, const SceneInteraction& si, const Array3f& wo, const Bool& active) {
        return self.pdf(ctx, si, wo, active);
      },
      nb::arg("ctx"), nb::arg("si"), nb::arg("wo"), nb::arg("active") = true);
  def_method(
      emitter, "sample_direction",
      [](const Emitter& self, const SceneInteraction& ref, const Array2f& sample, const Bool& active) {
        return self.sample_direction(ref.p, sample, active);
      },
      nb::arg("ref"), nb::arg("sample"), nb::arg("active") = true,
      "(DirectionSample3f, radiance / pdf) of a point on this emitter seen from ref (no visibility test).");
  def_method(
      emitter, "pdf_direction",
      [](const Emitter& self, const SceneInteraction& ref, const DirectionSample3f& ds, const Bool& active) {
        return self.pdf_direction(ref.p, ds, active);
      },
      nb::arg("ref"), nb::arg("ds"), nb::arg("active") = true);
  def_method(
      emitter, "eval",
      [](const Emitter& self, const SceneInteraction& si, const Bool& active) { return self.eval(si, active); },
      nb::arg("si"), nb::arg("active") = true, "Radiance this emitter sends towards -si.wi from the point si.");
}

void bind_film(nb::module_& m) {
  nb::class_<Sampler, Object>(m, "Sampler", "Where a render's random numbers come from.")
      .def_prop_ro("sample_count", &Sampler::sample_count)
      .def(
          "rng",
          [](const Sampler& self, int64_t seed, int64_t size) {
            if (seed < 0 || seed > int64_t(UINT32_MAX) || size < 1)
              throw ValueError("kiln.render: Sampler.rng(): seed must be in [0, 2^32) and size at least 1");
            return self.rng(uint32_t(seed), size_t(size));
          },
          nb::arg("seed"), nb::arg("size"), "One kl.PCG32 per lane for a render with `seed`, as render() seeds them.");
  nb::class_<ImageBlock>(m, "ImageBlock", "Weighted sums of samples per pixel of a crop window.")
      .def("put", &ImageBlock::put, nb::arg("position"), nb::arg("values"), nb::arg("active") = true,
           "Splats values (one Float per channel) of samples at film positions (pixels) through the filter.")
      .def("develop", &ImageBlock::develop, "The weighted means per pixel: (height, width, channels).");
  nb::class_<Film, Object>(m, "Film", "What a sensor records: the film size, the crop window, the filter.")
      .def("size", &Film::size, "(width, height) of the whole film (a method, as Mitsuba's).")
      .def("crop_size", &Film::crop_size, "(width, height) of the crop window rendered.")
      .def("crop_offset", &Film::crop_offset, "(x, y) of the crop window's upper left corner.")
      .def("has_alpha", &Film::has_alpha)
      .def(
          "box_filter", [](const Film& f) { return f.rfilter()->is_box(); },
          "True with the box filter: then a sample belongs to its own pixel.")
      .def(
          "bitmap",
          [](const Film& film) {
            const TensorXf* image = film.last_image();
            if (!image)
              throw ValueError(
                  "kiln.render: film.bitmap(): nothing was rendered with this film yet (call "
                  "kr.render first)");
            return nb::module_::import_("kiln.render").attr("Bitmap")(*image, nb::none(), film.last_channel_names());
          },
          "The last render's image as a kr.Bitmap, channels named (R, G, B, then the AOVs), as Mitsuba's "
          "film.bitmap().")
      .def("create_block", &Film::create_block, nb::arg("channels"), "An empty block for the crop window.")
      .def("develop", &Film::develop, nb::arg("block"), nb::arg("color") = true,
           "The block as the film's image (RGB and alpha first when `color`).");
}

}  // namespace

void bind_interfaces(nb::module_& m) {
  bind_records(m);
  bind_fresnel(m);
  bind_interaction(m);
  bind_film(m);
  bind_scene_queries(m.attr("Scene"));
  bind_object_queries(m.attr("Sensor"), m.attr("BSDF"), m.attr("Emitter"));
}

}  // namespace kiln::python::render
