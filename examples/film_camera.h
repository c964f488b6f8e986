// The program of story 1 (../shared/stories/1-film-size-recompiles.txt), written the way a
// user writes it: a perspective camera generates one ray per pixel of a crop window of the
// film and shades it (a sphere lit by one light, over a sky gradient). Film size, crop
// window, field of view and the camera-to-world transform are plain host scalars, so each
// becomes a literal in the kernel; they change every iteration of an optimization loop.
// Used by tests/cpp/test_story_camera.cpp, bench/ and examples/film_loop.cpp.
#pragma once

#include <kiln/kiln.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <string>

namespace film {

/// What changes from one iteration to the next.
struct CameraSettings {
  uint32_t film_width = 256, film_height = 256;
  uint32_t crop_offset_x = 0, crop_offset_y = 0, crop_width = 256, crop_height = 256;
  float fov_x = 45.f;                ///< horizontal field of view in degrees
  std::array<float, 16> to_world{};  ///< camera-to-world transform, row major
};

/// A host scalar as a labelled Kiln literal (the label names it in compilation reasons).
template <typename A>
A named(typename A::Value value, const char* label, std::source_location where = std::source_location::current()) {
  A array(value, where);
  kiln::set_label(array, label, where);
  return array;
}

/// The shaded crop window: one gray value per pixel, row by row.
inline kiln::Float render_crop(const CameraSettings& s) {
  using namespace kiln;
  UInt32 crop_width = named<UInt32>(s.crop_width, "crop_size.x");
  UInt32 crop_x = named<UInt32>(s.crop_offset_x, "crop_offset.x");
  UInt32 crop_y = named<UInt32>(s.crop_offset_y, "crop_offset.y");
  Float inv_width = named<Float>(1.f / float(s.film_width), "1/film_size.x");
  Float inv_height = named<Float>(1.f / float(s.film_height), "1/film_size.y");
  float tan_half = std::tan(s.fov_x * 0.5f * 3.14159265f / 180.f);
  Float scale_x = named<Float>(tan_half, "tan(fov_x/2)");
  Float scale_y = named<Float>(tan_half * float(s.film_height) / float(s.film_width), "tan(fov_y/2)");

  // Pixel coordinates of the crop window on the film, then the camera-space direction.
  UInt32 pixel = arange<UInt32>(size_t(s.crop_width) * s.crop_height);
  UInt32 px = pixel % crop_width + crop_x, py = pixel / crop_width + crop_y;
  Float u = (cast<float>(px) + 0.5f) * inv_width, v = (cast<float>(py) + 0.5f) * inv_height;
  Array3f direction((u * 2.f - 1.f) * scale_x, (1.f - v * 2.f) * scale_y, Float(1.f));

  Matrix4f to_world;
  for (size_t i = 0; i < 16; ++i)
    to_world.entries[i] = named<Float>(s.to_world[i], ("to_world." + std::to_string(i)).c_str());
  Array3f origin = transform_point(to_world, Array3f(0.f, 0.f, 0.f));
  Array3f d = normalize(transform_vector(to_world, direction));

  // A unit sphere at the origin, lit from above; sky elsewhere.
  Float b = dot(origin, d), c = dot(origin, origin) - 1.f;
  Float discriminant = b * b - c;
  Bool hit = discriminant > 0.f;
  Float t = -b - sqrt(max(discriminant, 0.f));
  Array3f normal = normalize(origin + d * t);
  Array3f light = normalize(Array3f(0.3f, 1.f, 0.5f));
  Float diffuse = max(dot(normal, light), 0.f) * 0.8f + 0.1f;
  Float sky = d.y * 0.25f + 0.5f;
  return select(hit && t > 0.f, diffuse, sky);
}

/// A random camera of the kind story 1 describes: random film size (random scaling),
/// random crop window inside it, random field of view, a camera orbiting the sphere.
template <typename Random> CameraSettings random_settings(Random& random) {
  auto uniform = [&](float lo, float hi) { return lo + (hi - lo) * float(random() % 1000003) / 1000003.f; };
  CameraSettings s;
  s.film_width = 96 + uint32_t(random() % 160);
  s.film_height = 64 + uint32_t(random() % 128);
  s.crop_width = 16 + uint32_t(random() % (s.film_width - 16));
  s.crop_height = 16 + uint32_t(random() % (s.film_height - 16));
  s.crop_offset_x = uint32_t(random() % (s.film_width - s.crop_width + 1));
  s.crop_offset_y = uint32_t(random() % (s.film_height - s.crop_height + 1));
  s.fov_x = uniform(30.f, 70.f);
  float angle = uniform(-0.6f, 0.6f), distance = uniform(2.5f, 4.f), height = uniform(-0.5f, 0.5f);
  float ca = std::cos(angle), sa = std::sin(angle);
  // Rotation about y, then a translation back along the viewing direction.
  s.to_world = {ca,  0.f, sa,  sa * distance * -1.f,  //
                0.f, 1.f, 0.f, height,                //
                -sa, 0.f, ca,  -ca * distance,        //
                0.f, 0.f, 0.f, 1.f};
  return s;
}

}  // namespace film
