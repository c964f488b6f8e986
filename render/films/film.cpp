// What every film shares: size, crop window, reconstruction filter, and their parameters.
#include "core/parameter_checks.h"

#include <kiln/errors.h>
#include <kiln/render/film.h>
#include <kiln/render/plugin.h>
#include <kiln/render/traverse.h>

#include <algorithm>

namespace kiln::render {
namespace {

/// The most pixels along one axis (a row of a ray batch is long) and in all.
constexpr int64_t kMaxExtent = int64_t(1) << 20;
constexpr uint64_t kMaxPixels = uint64_t(1) << 30;  // 32-bit indices of pixels and their channels

/// A positive integer parameter of at most kMaxExtent pixels.
uint32_t film_extent(const Properties& props, const std::string& name, int64_t fallback) {
  int64_t value = props.get_int(name, fallback);
  if (value <= 0 || value > kMaxExtent)
    throw_parameter_error(
        props, name, "must be between 1 and " + std::to_string(kMaxExtent) + " pixels, got " + std::to_string(value));
  return uint32_t(value);
}

std::string pair_text(std::array<uint32_t, 2> v) {
  return "(" + std::to_string(v[0]) + ", " + std::to_string(v[1]) + ")";
}

}  // namespace

Film::Film(const Properties& props) {
  size_ = {film_extent(props, "width", 768), film_extent(props, "height", 576)};
  std::array<uint32_t, 2> offset{0, 0}, crop = size_;
  for (int axis = 0; axis < 2; ++axis) {
    std::string suffix = axis == 0 ? "x" : "y";
    int64_t value = props.get_int("crop_offset_" + suffix, 0);
    if (value < 0) throw_parameter_error(props, "crop_offset_" + suffix, "must not be negative");
    offset[axis] = uint32_t(std::min<int64_t>(value, 1 << 16));
    crop[axis] = film_extent(props, axis == 0 ? "crop_width" : "crop_height", size_[axis]);
  }
  set_crop_window(offset, crop);
  valid_ = {size_, crop_offset_, crop_size_};
  for (const auto& child : props.objects(PluginKind::Filter))
    filter_ = std::dynamic_pointer_cast<ReconstructionFilter>(child);
  if (!filter_)
    filter_ = std::dynamic_pointer_cast<ReconstructionFilter>(
        create_object(Properties(PluginKind::Filter, "gaussian", "", props.source())));
}

void Film::set_crop_window(std::array<uint32_t, 2> offset, std::array<uint32_t, 2> size) {
  if (uint64_t(size_[0]) * size_[1] > kMaxPixels || size_[0] > kMaxExtent || size_[1] > kMaxExtent)
    throw ValueError("kiln.render: film: a film of size " + pair_text(size_) + " exceeds " +
                     std::to_string(kMaxExtent) + " pixels along an axis or 2^30 pixels in all");
  for (int axis = 0; axis < 2; ++axis)
    if (size[axis] == 0 || uint64_t(offset[axis]) + size[axis] > size_[axis])
      throw ValueError("kiln.render: film: the crop window at offset " + pair_text(offset) + " of size " +
                       pair_text(size) + " must be non-empty and lie inside the film of size " + pair_text(size_));
  crop_offset_ = offset;
  crop_size_ = size;
}

ImageBlock Film::create_block(size_t channels) const { return ImageBlock(crop_offset_, crop_size_, channels, filter_); }

void Film::traverse(TraversalCallback& callback) {
  callback.put("size", &size_, param_flags::kNonDifferentiable);
  callback.put("crop_offset", &crop_offset_, param_flags::kNonDifferentiable);
  callback.put("crop_size", &crop_size_, param_flags::kNonDifferentiable);
}

void Film::parameters_changed(const std::vector<std::string>& keys) {
  auto changed = [&](const char* key) { return std::find(keys.begin(), keys.end(), key) != keys.end(); };
  // A new film size resets the crop window to the whole film unless it was set as well.
  std::array<uint32_t, 2> offset = crop_offset_, size = crop_size_;
  if (changed("size")) {
    if (!changed("crop_size")) size = size_;
    if (!changed("crop_offset")) offset = {0, 0};
  }
  try {
    set_crop_window(offset, size);
  } catch (...) {
    std::tie(size_, crop_offset_, crop_size_) = std::tie(valid_[0], valid_[1], valid_[2]);  // as it was
    throw;
  }
  valid_ = {size_, crop_offset_, crop_size_};
}

void Film::keep_image(TensorXf image, std::vector<std::string> channel_names) {
  last_image_ = std::move(image);
  last_channel_names_ = std::move(channel_names);
}

}  // namespace kiln::render
