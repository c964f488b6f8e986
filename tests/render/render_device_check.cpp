// The renderer on a GPU, for the device check (scripts/device_check.sh run): every reference
// scene (Mitsuba XML written by scripts/scene_xml.py) rendered on the default device
// (KILN_DEVICE=cuda there, so with the Kiln BVH) and, with the same seed and spp, on the CPU
// with the Kiln BVH and with Embree; each image's mean against the committed Mitsuba 3
// references; prb's forward-mode derivative images of the gradient references the same way;
// then timings on the device: closest-hit rays per second on the 131k-triangle bumpy torus of
// the mesh scene (primary and scattered rays; the CPU's Embree and Kiln BVH alongside), the
// Cornell box at 512 x 512, 64 spp, and prb optimization
// iterations at 256 x 256 (reverse mode), with the kernels compiled after the first two
// (story 1: none). --quick: two scenes, one derivative, small sizes.
//
//   render_device_check XML_DIR REFERENCE_DIR [--quick]
//
// Prints one line per comparison and a verdict; exits 1 when a device image disagrees with
// the CPU's beyond float tolerance or the optimization loop compiles after its warm-up. Also
// runs in CI on the emulated device (--quick).
#include <kiln/autodiff.h>
#include <kiln/device.h>
#include <kiln/errors.h>
#include <kiln/reduce.h>
#include <kiln/render/accel.h>
#include <kiln/render/image.h>
#include <kiln/render/load.h>
#include <kiln/render/parameters.h>
#include <kiln/render/render.h>
#include <kiln/runtime.h>
#include <kiln/vector_math.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <random>
#include <string>
#include <vector>

using namespace kiln;
using namespace kiln::render;
namespace fs = std::filesystem;

namespace {

/// The scene in `xml` built on `device` with the ray tracer `accel`.
std::shared_ptr<Scene> load(const fs::path& xml, Device device, const char* accel) {
  DeviceScope scope(device);
  PluginNode root = parse_xml_file(xml.string());
  root.add_value("accel", std::string(accel), "render_device_check");
  return std::dynamic_pointer_cast<Scene>(instantiate(root));
}

double milliseconds_of(const std::function<void()>& work) {
  auto start = std::chrono::steady_clock::now();
  work();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

std::vector<float> host(const TensorXf& image) { return image.array().to_vector(); }

/// mean |a - b| / mean |b| over every value.
double relative_difference(const std::vector<float>& a, const std::vector<float>& b) {
  double difference = 0, magnitude = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    difference += std::fabs(double(a[i]) - b[i]);
    magnitude += std::fabs(double(b[i]));
  }
  return a.size() != b.size() ? INFINITY : difference / std::max(magnitude, 1e-30);
}

double mean(const std::vector<float>& values) {
  double total = 0;
  for (float v : values) total += v;
  return values.empty() ? 0 : total / double(values.size());
}

/// The image rendered by `make` on the device and, under a CPU DeviceScope, with each CPU
/// ray tracer; one line comparing them and the references' means (`name`_s0/_s1.exr).
bool compare(const std::string& name, const fs::path& references,
             const std::function<std::vector<float>(Device, const char*, double*)>& make);

/// compare(), with an error reported as the scene's failure.
bool compare_or_report(const std::string& name, const fs::path& references,
                       const std::function<std::vector<float>(Device, const char*, double*)>& make) {
  try {
    return compare(name, references, make);
  } catch (const std::exception& error) {
    std::printf("%-58s FAILED: %s\n", name.c_str(), error.what());
    return false;
  }
}

bool compare(const std::string& name, const fs::path& references,
             const std::function<std::vector<float>(Device, const char*, double*)>& make) {
  double device_ms = 0, cpu_ms = 0, unused = 0;
  std::vector<float> device = make(default_device(), "kiln", &device_ms);
  std::vector<float> cpu_kiln = make(Device::CPU, "kiln", &cpu_ms);
  std::vector<float> cpu_embree = make(Device::CPU, "embree", &unused);
  double same_seed = relative_difference(device, cpu_kiln);
  bool agrees = same_seed <= 1e-2;
  std::printf("%-58s %9.1f %9.1f %12.2e %12.2e", name.c_str(), device_ms, cpu_ms, same_seed,
              relative_difference(device, cpu_embree));
  try {
    Bitmap s0 = read_image((references / (name + "_s0.exr")).string());
    Bitmap s1 = read_image((references / (name + "_s1.exr")).string());
    double reference = (mean(s0.pixels) + mean(s1.pixels)) / 2;
    std::printf(" %+11.2e %11.2e", (mean(device) - reference) / std::fabs(reference),
                std::fabs(mean(s0.pixels) - mean(s1.pixels)) / std::fabs(reference));
  } catch (const FileError&) {  // AOV channels only: read_image reads colours
    std::printf(" %11s %11s", "-", "-");
  }
  std::printf("  %s\n", agrees ? "agree" : "DISAGREE");
  return agrees;
}

/// examples/scenes/render_scenes.py's bumpy torus (512 x 128 quads, 131,072 triangles),
/// made here so that the bundle need not carry it.
AccelTriangles bumpy_torus() {
  constexpr uint32_t kSegments = 512, kRings = 128;
  AccelTriangles mesh;
  for (uint32_t i = 0; i < kSegments; ++i) {
    for (uint32_t j = 0; j < kRings; ++j) {
      double phi = 2 * M_PI * i / kSegments, theta = 2 * M_PI * j / kRings;
      double tube = 0.36 * (1 + 0.1 * std::sin(9 * phi) * std::sin(5 * theta + 3 * phi));
      double ring = 1.0 + tube * std::cos(theta);
      mesh.positions.insert(mesh.positions.end(),
                            {float(ring * std::cos(phi)), float(tube * std::sin(theta)), float(ring * std::sin(phi))});
      uint32_t a = i * kRings + j, b = ((i + 1) % kSegments) * kRings + j;
      uint32_t c = ((i + 1) % kSegments) * kRings + (j + 1) % kRings, d = i * kRings + (j + 1) % kRings;
      mesh.faces.insert(mesh.faces.end(), {a, b, c, a, c, d});
    }
  }
  return mesh;
}

/// Rays per second of closest-hit queries on the bumpy torus: primary rays from a camera
/// towards points around it, and rays leaving points near its surface in all directions.
void torus_rays_per_second(size_t count) {
  AccelTriangles torus = bumpy_torus();
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  std::vector<float> primary[6], scattered[6];
  for (size_t i = 0; i < count; ++i) {
    float target[3] = {1.4f * unit(rng), 0.4f * unit(rng), 1.4f * unit(rng)}, camera[3] = {0.0f, 2.7f, 5.2f};
    size_t vertex = size_t(0.5f * (unit(rng) + 1.0f) * float(torus.positions.size() / 3 - 1));
    float direction[3] = {unit(rng), unit(rng), unit(rng)};
    for (int k = 0; k < 3; ++k) {
      primary[k].push_back(camera[k]);
      primary[3 + k].push_back(target[k] - camera[k]);
      scattered[k].push_back(torus.positions[3 * vertex + k] * 1.001f);
      scattered[3 + k].push_back(direction[k]);
    }
  }
  auto rate = [&](Device device, AccelKind kind, std::vector<float>* columns) {
    DeviceScope scope(device);
    std::unique_ptr<Accel> accel = make_accel({torus}, kind);
    Ray3f ray{Array3f(Float::from(columns[0]), Float::from(columns[1]), Float::from(columns[2])),
              Array3f(Float::from(columns[3]), Float::from(columns[4]), Float::from(columns[5])), Float(INFINITY)};
    eval(ray.o, ray.d);
    auto trace = [&] {
      PreliminaryIntersection hit = accel->intersect(ray);
      eval(hit.t, hit.prim_uv.x, hit.prim_uv.y, hit.prim_index, hit.shape_index);
      synchronize(device);
    };
    trace();  // compiles
    std::vector<double> times;
    for (int repeat = 0; repeat < 5; ++repeat) times.push_back(milliseconds_of(trace));
    std::sort(times.begin(), times.end());
    return double(count) / times[2] / 1e3;  // Mrays/s
  };
  for (auto [name, columns] : {std::pair("primary", primary), std::pair("scattered", scattered)}) {
    std::printf(
        "bumpy torus (131k triangles), %zu %s rays: %s Kiln BVH %.2f Mrays/s; CPU Embree %.2f, CPU Kiln BVH "
        "%.2f\n",
        count, name, device_name(default_device()), rate(default_device(), AccelKind::Kiln, columns),
        rate(Device::CPU, AccelKind::Embree, columns), rate(Device::CPU, AccelKind::Kiln, columns));
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s XML_DIR REFERENCE_DIR [--quick]\n", argv[0]);
    return 2;
  }
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // each line out at once: a timeout keeps what ran
  const fs::path xml_dir = argv[1], reference_dir = argv[2];
  const bool quick = argc > 3 && std::strcmp(argv[3], "--quick") == 0;
  const uint32_t spp = quick ? 4 : 64, grad_spp = quick ? 4 : 32;
  std::printf("kiln.render on %s (Kiln BVH) against the CPU, same seed, %u spp (derivatives: %u)\n",
              device_name(default_device()), spp, grad_spp);
  std::printf("%-58s %9s %9s %12s %12s %11s %11s\n", "scene (derivative: scene-key)", "device ms", "CPU ms",
              "vs CPU kiln", "vs CPU embree", "vs Mitsuba", "Mitsuba s0-s1");
  bool all_agree = true;
  std::vector<fs::path> scenes;
  for (const auto& entry : fs::directory_iterator(reference_dir))
    if (entry.path().extension() == ".json") scenes.push_back(entry.path());
  std::sort(scenes.begin(), scenes.end());
  for (const fs::path& json : scenes) {
    std::string name = json.stem().string();
    if (quick && name != "cornell_box" && name != "envmap") continue;
    all_agree &= compare_or_report(name, reference_dir, [&](Device device, const char* accel, double* ms) {
      std::shared_ptr<Scene> scene = load(xml_dir / (name + ".xml"), device, accel);
      DeviceScope scope(device);
      TensorXf image;
      kiln::render::render(scene, scene->sensors()[0], {0, spp});  // compiles
      *ms = milliseconds_of([&] {
        image = kiln::render::render(scene, scene->sensors()[0], {0, spp});
        eval(image.array());
      });
      return host(image);
    });
  }
  // prb's forward-mode derivative images along (1, 1, 1) of one RGB parameter.
  std::vector<fs::path> cases;
  for (const auto& entry : fs::directory_iterator(reference_dir / "grad"))
    if (entry.path().extension() == ".json") cases.push_back(entry.path());
  std::sort(cases.begin(), cases.end());
  for (const fs::path& json : cases) {
    std::string name = json.stem().string(), scene_name = name.substr(0, name.find('-')),
                key = name.substr(name.find('-') + 1);
    if (quick && scene_name != "cornell_box") continue;
    all_agree &= compare_or_report(name, reference_dir / "grad", [&](Device device, const char* accel, double* ms) {
      std::shared_ptr<Scene> scene = load(xml_dir / ("grad_" + scene_name + ".xml"), device, accel);
      DeviceScope scope(device);
      SceneParameters params(*scene);
      const Array3f value = *std::get<Array3f*>(params.get(key));
      TensorXf derivative;
      *ms = milliseconds_of([&] {
        Array3f leaf = value;
        enable_grad(leaf);
        params.set(key, leaf);
        params.update();
        TensorXf image = kiln::render::render(scene, scene->sensors()[0], {0, 1, 2u, grad_spp});
        forward_from(leaf, Array3f(1.0f, 1.0f, 1.0f));
        derivative = TensorXf(grad(image.array()), image.shape());
        eval(derivative.array());
      });
      // The references hold RGB only.
      std::vector<float> values = host(derivative), rgb;
      size_t channels = derivative.shape().back();
      for (size_t i = 0; i < values.size(); ++i)
        if (i % channels < 3) rgb.push_back(values[i]);
      return rgb;
    });
  }
  torus_rays_per_second(quick ? size_t(1) << 12 : size_t(1) << 22);
  {
    // The Cornell box at 512 x 512, 64 spp: the first render (compiling) and a warm one.
    std::shared_ptr<Scene> cornell = load(xml_dir / "cornell_512.xml", default_device(), "kiln");
    const uint32_t size = quick ? 64 : 512, cornell_spp = quick ? 4 : 64;
    SceneParameters cornell_params(*cornell);
    cornell_params.set("sensor.film.size", std::array<uint32_t, 2>{size, size});
    cornell_params.update();
    auto render_cornell = [&] { eval(kiln::render::render(cornell, cornell->sensors()[0], {1, cornell_spp}).array()); };
    double cold = milliseconds_of(render_cornell), warm = milliseconds_of(render_cornell);
    std::printf("Cornell box %u x %u, %u spp on %s: first render %.1f ms, warm %.1f ms (%.1f Msamples/s)\n", size, size,
                cornell_spp, device_name(default_device()), cold, warm, double(size) * size * cornell_spp / warm / 1e3);
    // prb optimization iterations at 256 x 256: render, loss, reverse mode, a gradient step.
    std::shared_ptr<Scene> scene = load(xml_dir / "grad_cornell_box.xml", default_device(), "kiln");
    SceneParameters params(*scene);
    const uint32_t prb_size = quick ? 32 : 256, prb_spp = quick ? 2 : 16;
    params.set("sensor.film.size", std::array<uint32_t, 2>{prb_size, prb_size});
    params.update();
    const std::string key = "left.bsdf.reflectance.value";
    std::vector<double> times;
    size_t compiles_after_two = 0;
    for (int iteration = 0; iteration < (quick ? 4 : 10); ++iteration) {
      if (iteration == 2) compiles_after_two = cache_stats().compiles;
      times.push_back(milliseconds_of([&] {
        Array3f value = *std::get<Array3f*>(params.get(key));
        enable_grad(value);
        params.set(key, value);
        params.update();
        TensorXf image = kiln::render::render(scene, scene->sensors()[0], {uint32_t(iteration), prb_spp});
        Float loss = sum(image.array()) / float(image.array().size());
        backward(loss);
        Array3f step = detach(value) - grad(value) * 0.01f;
        params.set(key, min(max(step, 0.0f), 1.0f));
        params.update();
        eval(*std::get<Array3f*>(params.get(key)));
      }));
    }
    std::sort(times.begin() + 2, times.end());
    size_t late_compiles = cache_stats().compiles - compiles_after_two;
    std::printf(
        "prb iteration %u x %u, %u spp on %s: first %.1f ms, median after two %.1f ms; kernels compiled "
        "after the first two iterations: %zu\n",
        prb_size, prb_size, prb_spp, device_name(default_device()), times[0], times[2 + (times.size() - 2) / 2],
        late_compiles);
    all_agree &= late_compiles == 0;
  }
  std::printf("verdict: %s\n", all_agree ? "the device's images agree with the CPU's, nothing compiled after warm-up"
                                         : "FAILED (see above)");
  return all_agree ? 0 : 1;
}
