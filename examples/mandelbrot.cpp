// A first Kiln program: the Mandelbrot set with smooth colouring, written to a PNG.
//
// Every step, from pixel coordinates to the packed RGBA colour, is recorded on lazy Kiln
// arrays, and reading the result compiles all of it into ONE fused kernel that runs over
// every pixel on all cores. Kiln has no loop construct yet, so the escape-time loop is a
// C++ loop that records its body once per iteration (an unrolled trace); a lane that has
// escaped is switched off with a mask and select(), as a per-lane loop would stop.
//
//   mandelbrot [out.png]      (KILN_LOG=debug also prints the kernel's IR)
#include <kiln/kiln.h>

#include <png.h>

#include <cstdint>
#include <cstdio>

using kiln::Bool;
using kiln::Float;
using kiln::UInt32;

constexpr uint32_t kWidth = 1024, kHeight = 768;
constexpr int kIterations = 256;
constexpr float kBailout = 256.0f;  // escape at |z| > 16: a large radius colours smoothly
constexpr float kLeft = -2.5f, kTop = -1.3125f, kStep = 3.5f / kWidth;

/// One colour channel in [0, 1] -> 0..255.
UInt32 to_byte(const Float& channel) {
  return kiln::cast<uint32_t>(kiln::min(kiln::max(channel, 0.0f), 1.0f) * 255.0f + 0.5f);
}

/// The image as packed RGBA (R in the lowest byte), one UInt32 per pixel.
UInt32 render() {
  UInt32 index = kiln::arange<UInt32>(size_t(kWidth) * kHeight);
  Float cx = kLeft + kiln::cast<float>(index % kWidth) * kStep;
  Float cy = kTop + kiln::cast<float>(index / kWidth) * kStep;

  // z <- z^2 + c while |z|^2 <= kBailout; escaped lanes keep their z and their count.
  Float zx(0.0f), zy(0.0f), count(0.0f);
  Bool inside(true);
  for (int i = 0; i < kIterations; ++i) {
    Float zx2 = zx * zx, zy2 = zy * zy;
    inside = inside && zx2 + zy2 <= kBailout;
    Float next_zy = 2.0f * zx * zy + cy;
    zx = kiln::select(inside, zx2 - zy2 + cx, zx);
    zy = kiln::select(inside, next_zy, zy);
    count = kiln::select(inside, count + 1.0f, count);
  }

  // Smooth (continuous) escape count: mu = n + 1 - log2(ln |z|).
  Float ln_modulus = 0.5f * kiln::log(zx * zx + zy * zy);
  Float mu = count + 1.0f - kiln::log2(ln_modulus);
  Float t = kiln::sqrt(kiln::max(mu, 0.0f) * (1.0f / kIterations));

  // A polynomial palette: dark blue through cyan to yellow.
  Float s = 1.0f - t;
  Float red = 9.0f * s * t * t * t, green = 15.0f * s * s * t * t, blue = 8.5f * s * s * s * t;
  UInt32 rgba = to_byte(red) | (to_byte(green) << 8) | (to_byte(blue) << 16) | 0xff000000u;
  return kiln::select(inside, UInt32(0xff000000u), rgba);  // the set itself is black
}

/// Writes 8-bit RGBA rows (little-endian packing: R is the first byte in memory).
bool write_png(const char* path, const uint32_t* pixels, uint32_t width, uint32_t height) {
  FILE* file = std::fopen(path, "wb");
  if (!file) return false;
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png ? png_create_info_struct(png) : nullptr;
  bool ok = png && info && !setjmp(png_jmpbuf(png));  // libpng reports errors by longjmp
  if (ok) {
    png_init_io(png, file);
    png_set_IHDR(png, info, width, height, 8, PNG_COLOR_TYPE_RGBA, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
                 PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    for (uint32_t y = 0; y < height; ++y)
      png_write_row(png, reinterpret_cast<png_const_bytep>(pixels + size_t(y) * width));
    png_write_end(png, nullptr);
  }
  png_destroy_write_struct(&png, &info);
  return std::fclose(file) == 0 && ok;
}

int main(int argc, char** argv) {
  const char* path = argc > 1 ? argv[1] : "mandelbrot.png";
  if (kiln::log_level() < kiln::LogLevel::Info) kiln::set_log_level(kiln::LogLevel::Info);

  UInt32 image = render();                // records the work; nothing has run yet
  const uint32_t* pixels = image.data();  // compiles and launches one kernel (see the log)
  if (!write_png(path, pixels, kWidth, kHeight)) {
    std::fprintf(stderr, "mandelbrot: could not write %s\n", path);
    return 1;
  }
  std::printf("wrote %s (%ux%u, %d iterations)\n", path, kWidth, kHeight, kIterations);

  kiln::MemoryStats memory = kiln::memory_stats();
  kiln::CacheStats cache = kiln::cache_stats();
  std::printf("memory: %zu bytes now, %zu at peak, %zu allocations\n", memory.current_bytes, memory.peak_bytes,
              memory.allocations);
  std::printf("kernel cache: %zu compiled, %zu memory hits, %zu disk hits, %zu held\n", cache.compiles,
              cache.memory_hits, cache.disk_hits, cache.kernels);
  return 0;
}
