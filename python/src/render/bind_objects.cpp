// kr.Object and kr.Scene (what the loaders return), kr.render(), and image files.
#include "render/render_binding.h"

#include <kiln/errors.h>
#include <kiln/render/image.h>
#include <kiln/render/mesh_data.h>
#include <kiln/render/records.h>
#include <kiln/render/render.h>
#include <kiln/render/rfilter.h>
#include <kiln/render/scene.h>
#include <kiln/render/texture.h>

#include <nanobind/stl/filesystem.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

namespace kiln::python::render {
namespace {

using namespace kiln::render;

/// "bsdf 'diffuse' id 'red' (scene.xml:3)".
std::string object_repr(const Object& object) {
  return describe_plugin(object.kind(), object.plugin(), object.id(), object.source());
}

/// The sensor a render uses: an index into the scene's sensors, or a sensor object.
std::shared_ptr<const Sensor> pick_sensor(const Scene& scene, const nb::handle& sensor) {
  if (nb::isinstance<Sensor>(sensor)) return nb::cast<std::shared_ptr<Sensor>>(sensor);
  if (!nb::isinstance<nb::int_>(sensor))
    throw TypeError("kiln.render: render(): `sensor` must be an index into the scene's sensors or a sensor object");
  int64_t index = nb::cast<int64_t>(sensor);
  const auto& sensors = scene.sensors();
  if (index < 0 || index >= int64_t(sensors.size()))
    throw IndexError("kiln.render: render(): sensor index " + std::to_string(index) +
                     " is out of range: the scene has " + std::to_string(sensors.size()) + " sensor(s)");
  return sensors[size_t(index)];
}

TensorXf render(const std::shared_ptr<Scene>& scene, const nb::handle& params, const nb::handle& sensor,
                std::shared_ptr<Integrator> integrator, int64_t seed, std::optional<int64_t> seed_grad,
                std::optional<int64_t> spp, std::optional<int64_t> spp_grad, std::shared_ptr<PathRecorder> recorder) {
  nb::object parameter_type = nb::module_::import_("kiln.render").attr("SceneParameters");
  if (!params.is_none() && !PyObject_IsInstance(params.ptr(), parameter_type.ptr()))
    throw TypeError(
        "kiln.render: render(): `params` must be kr.traverse(scene)'s result or None (pass spp=, seed= "
        "by name)");
  RenderOptions options;
  constexpr int64_t kMaxSpp = int64_t(1) << 24;
  // 0, as None, asks for the default (Mitsuba's spelling).
  if (spp && *spp != 0) options.spp = checked_argument("render()", "spp", *spp, 1, kMaxSpp, "1 and 2^24");
  if (spp_grad && *spp_grad != 0)
    options.spp_grad = checked_argument("render()", "spp_grad", *spp_grad, 1, kMaxSpp, "1 and 2^24");
  options.seed = checked_argument("render()", "seed", seed, 0, UINT32_MAX, "0 and 2^32 - 1");
  if (seed_grad)
    options.seed_grad = checked_argument("render()", "seed_grad", *seed_grad, 0, UINT32_MAX, "0 and 2^32 - 1");
  options.recorder = std::move(recorder);
  options.integrator = std::move(integrator);
  return kiln::render::render(scene, pick_sensor(*scene, sensor), options);
}

}  // namespace

uint32_t checked_argument(const char* function, const char* name, int64_t value, int64_t low, int64_t high,
                          const char* range) {
  if (value < low || value > high)
    throw ValueError(std::string("kiln.render: ") + function + ": " + name + " must be between " + range + ", got " +
                     std::to_string(value));
  return uint32_t(value);
}

void bind_objects(nb::module_& m) {
  nb::class_<Object>(m, "Object", "A scene object: a plugin instance (shape, BSDF, emitter, ...).")
      .def_prop_ro("plugin", &Object::plugin, "The plugin's name (\"diffuse\").")
      .def("id", &Object::id, "The id the scene gave it (\"\" when none); a method, as in Mitsuba.")
      .def_prop_ro("source", &Object::source, "Where it was declared (\"scene.xml:12\", \"load_dict: ['bsdf']\").")
      .def_prop_ro(
          "kind", [](const Object& o) { return std::string(kind_tag(o.kind())); },
          "Its kind as the XML tag (\"bsdf\", \"shape\", ...).")
      .def("__repr__", [](const Object& o) { return "<kr.Object " + object_repr(o) + ">"; });

  nb::class_<kiln::render::Shape, Object>(m, "Shape", "Geometry, with its BSDF and area light.")
      .def(
          "is_mesh",
          [](const kiln::render::Shape& self) { return std::holds_alternative<AccelTriangles>(self.accel_geometry()); },
          "Whether the shape is a triangle mesh (Mitsuba's Shape.is_mesh()).")
      .def("bsdf", &kiln::render::Shape::bsdf, "The shape's BSDF.")
      .def("emitter", &kiln::render::Shape::emitter, "The shape's area light (None without one).")
      .def(
          "vertex_count", [](const kiln::render::Shape& self) { return mesh_arrays(self).vertex_count(); },
          "A mesh's number of vertices (TypeError for other shapes).")
      .def(
          "face_count", [](const kiln::render::Shape& self) { return mesh_arrays(self).face_count(); },
          "A mesh's number of triangles.")
      .def(
          "write_ply",
          [](const kiln::render::Shape& self, const std::filesystem::path& path) {
            write_ply(mesh_arrays(self), path.string());
          },
          nb::arg("filename"), "Writes a mesh (world space) as a binary PLY file, as Mitsuba's Mesh.write_ply.")
      .def(
          "add_attribute",
          [](kiln::render::Shape& self, const std::string& name, int64_t size, nb::handle buffer) {
            if (size < 0)
              throw ValueError("kiln.render: add_attribute(): the size must not be negative, got " +
                               std::to_string(size));
            Float values = nb::isinstance<Float>(buffer)
                               ? nb::cast<Float>(buffer)
                               : nb::cast<Float>(nb::module_::import_("kiln").attr("Float")(buffer));
            add_mesh_attribute(self, name, size_t(size), values);
          },
          nb::arg("name"), nb::arg("size"), nb::arg("buffer"),
          "Adds a mesh attribute, as Mitsuba's Mesh.add_attribute: `name` starts with 'vertex_' or 'face_', `size` "
          "values per vertex or face in `buffer` (a list or kl.Float); mi.traverse lists it under `name`, and a "
          "'mesh_attribute' texture reads it.")
      .def("has_attribute", &kiln::render::Shape::has_attribute, nb::arg("name"),
           "Whether the shape has the attribute `name` (Mitsuba's Shape.has_attribute).");
  m.def(
      "Mesh",
      [](const std::string& name, size_t vertex_count, size_t face_count, nb::handle props, bool has_vertex_normals,
         bool has_vertex_texcoords) {
        if (!props.is_none())
          throw TypeError(
              "kiln.render: Mesh(): `props` (a mi.Properties) is not supported; give the mesh's other "
              "parameters by loading it in a scene dict");
        Properties properties(PluginKind::Shape, "mesh", name, "kr.Mesh('" + name + "')");
        return make_mesh(vertex_count, face_count, has_vertex_normals, has_vertex_texcoords, properties);
      },
      nb::arg("name"), nb::arg("vertex_count"), nb::arg("face_count"), nb::arg("props") = nb::none(),
      nb::arg("has_vertex_normals") = false, nb::arg("has_vertex_texcoords") = false,
      "A triangle mesh of zeros to fill through kr.traverse(mesh) (vertex_positions, faces ...) and "
      "params.update(), as Mitsuba's mi.Mesh; then put it in a scene dict or write_ply() it.");
  bind_python_plugins(m);
  nb::class_<Emitter, Object>(m, "Emitter", "A light source.");
  nb::class_<kiln::render::Texture, Object>(m, "Texture",
                                            "A texture: a value per surface point (Mitsuba's mi.Texture).")
      .def(
          "eval",
          [](const kiln::render::Texture& t, const SceneInteraction& si, const Bool& active) {
            return t.eval(si, active);
          },
          nb::arg("si"), nb::arg("active") = true, "The RGB value at si.uv.")
      .def(
          "eval_3",
          [](const kiln::render::Texture& t, const SceneInteraction& si, const Bool& active) {
            return t.eval(si, active);
          },
          nb::arg("si"), nb::arg("active") = true, "The RGB value at si.uv (eval()).")
      .def(
          "eval_1",
          [](const kiln::render::Texture& t, const SceneInteraction& si, const Bool& active) {
            return t.eval_1(si, active);
          },
          nb::arg("si"), nb::arg("active") = true, "The value at si.uv of a one-channel texture (RGB: their mean).")
      .def("mean", &kiln::render::Texture::mean, "The mean value over the texture.");
  bind_python_integrators(m);
  nb::class_<Sensor, Object>(m, "Sensor", "A camera: where rays start, with its film and sampler.");
  nb::class_<ReconstructionFilter, Object>(m, "ReconstructionFilter",
                                           "How a film weighs samples by their distance to a pixel's centre.")
      .def("radius", &ReconstructionFilter::radius, "The support: eval() vanishes at and beyond it (pixels).")
      .def("eval", &ReconstructionFilter::eval, nb::arg("x"), "The filter's value at offset x (pixels).");
  nb::class_<Scene, Object>(m, "Scene", "A loaded scene: shapes, emitters, sensors and the integrator.")
      .def("shapes", &Scene::shapes, "The shapes, in declaration order.")
      .def("emitters", &Scene::emitters, "The emitters (area lights after the others).")
      .def("sensors", &Scene::sensors, "The sensors.")
      .def("integrator", &Scene::integrator, "The integrator (a path tracer unless the scene names one).")
      .def("__repr__", [](const Scene& s) {
        return "<kr.Scene " + object_repr(s) + ": " + std::to_string(s.shapes().size()) + " shape(s), " +
               std::to_string(s.emitters().size()) + " emitter(s), " + std::to_string(s.sensors().size()) +
               " sensor(s)>";
      });

  m.def("render", &render, nb::arg("scene"), nb::arg("params") = nb::none(), nb::arg("sensor") = 0,
        nb::arg("integrator").none() = nb::none(), nb::arg("seed") = 0, nb::arg("seed_grad") = nb::none(),
        nb::arg("spp") = nb::none(), nb::arg("spp_grad") = nb::none(), nb::arg("recorder").none() = nb::none(),
        "Renders `scene` with its integrator (or `integrator`, a loaded kr.Integrator): a kl.TensorXf of shape "
        "(crop height, crop width, channels); Mitsuba's signature and argument order. `spp` defaults to the "
        "sensor's sampler's sample_count (also for 0); `sensor` is an index or a sensor. When scene "
        "parameters carry derivatives (kl.enable_grad on values assigned through kr.traverse(scene)), the image "
        "does too: kl.backward / kl.forward run a second render with `seed_grad` (derived from `seed` when None) "
        "and `spp_grad` (`spp` when None). `params` (kr.traverse(scene)'s result) is accepted as in Mitsuba. "
        "`recorder` (a kr.PathRecorder) receives per-vertex records of the render and of its backward pass.");
  m.def(
      "gradient_seed",
      [](int64_t seed) {
        return gradient_seed(checked_argument("gradient_seed()", "seed", seed, 0, UINT32_MAX, "0 and 2^32 - 1"));
      },
      nb::arg("seed"), "The seed of a gradient render when seed_grad is None: a hash of `seed`.");
  nb::class_<PathRecorder>(m, "_PathRecorder", "The C++ side of kr.PathRecorder.")
      .def(
          "__init__",
          [](PathRecorder* self, int64_t capacity) {
            if (capacity < 1)
              throw ValueError(
                  "kiln.render: PathRecorder(): capacity is the number of vertices each pass can record; "
                  "it must be at least 1, got " +
                  std::to_string(capacity));
            new (self) PathRecorder(size_t(capacity));
          },
          nb::arg("capacity"))
      .def_prop_ro_static("field_names",
                          [](nb::handle) {
                            return std::vector<std::string>(PathRecorder::kFieldNames.begin(),
                                                            PathRecorder::kFieldNames.end());
                          })
      .def_prop_ro(
          "_render_core", [](PathRecorder& r) -> detail::RecorderCore& { return r.render_records().core(); },
          nb::rv_policy::reference_internal)
      .def_prop_ro(
          "_backward_core", [](PathRecorder& r) -> detail::RecorderCore& { return r.backward_records().core(); },
          nb::rv_policy::reference_internal)
      .def("clear", &PathRecorder::clear, "Forgets the records of both passes.");
  m.def(
      "write_image",
      [](const TensorXf& image, const std::string& path, std::vector<std::string> channel_names) {
        const kiln::Shape& shape = image.shape();
        if (channel_names.empty() || shape.size() != 3) return write_image(image, path);
        Bitmap bitmap{shape[1], shape[0], shape[2], image.array().to_vector(), std::move(channel_names)};
        write_image(bitmap, path);
      },
      nb::arg("image"), nb::arg("path"), nb::arg("channel_names") = std::vector<std::string>{},
      "Writes a (height, width, channels) image: .exr keeps linear floats (with `channel_names` if given), .png "
      "and .jpg are sRGB-encoded 8-bit, .hdr Radiance RGBE.");
  m.def(
      "read_image",
      [](const std::string& path, bool raw) {
        Bitmap bitmap = read_image(path, raw);
        return TensorXf::from(bitmap.pixels.data(), {bitmap.height, bitmap.width, bitmap.channels});
      },
      nb::arg("path"), nb::arg("raw") = false,
      "Reads a .png, .jpg, .exr or .hdr file as a (height, width, channels) kl.TensorXf; 8-bit sRGB becomes linear "
      "unless raw.");
  m.def(
      "_read_image_channels",
      [](const std::string& path) {
        Bitmap bitmap = read_image(path, true, true);
        return nb::make_tuple(TensorXf::from(bitmap.pixels.data(), {bitmap.height, bitmap.width, bitmap.channels}),
                              bitmap.channel_names);
      },
      nb::arg("path"), "Every channel of the file (raw values) and, for EXR, their names (kr.Bitmap reads this).");
}

}  // namespace kiln::python::render
