// The film (Mitsuba 3's `hdrfilm`): the image's size, the crop window that is rendered,
// the reconstruction filter and the output channels, and the image block samples are
// splatted into.
//
// What an implementation guarantees:
// - Film coordinates are in pixels of the full film, x right and y down; pixel (i, j)
//   covers [i, i+1) × [j, j+1).
// - Only the crop window is rendered; develop() returns a TensorXf of shape (crop height,
//   crop width, channels), each pixel the filter-weighted mean of the samples around it.
// - The size, crop and filter are host settings, but kernels read them through opaque
//   arrays (Kiln parameters): changing them compiles nothing new (story 1).
#pragma once

#include <kiln/render/rfilter.h>
#include <kiln/tensor.h>

#include <array>
#include <memory>
#include <string>
#include <vector>

namespace kiln::render {

/// Accumulates weighted samples of a crop window plus a border of the filter's radius.
class ImageBlock {
 public:
  /// A block for a crop of `size` pixels at `offset` (full-film pixels), `channels`
  /// values per sample, filtered by `filter`.
  ImageBlock(std::array<uint32_t, 2> offset, std::array<uint32_t, 2> size, size_t channels,
             std::shared_ptr<const ReconstructionFilter> filter);

  /// Splats `values` (one array per channel) of samples at film position `position` (in
  /// pixels) into every pixel the filter reaches; inactive lanes add nothing.
  void put(const Array2f& position, const std::vector<Float>& values, const Bool& active);
  /// Per pixel of the crop: the weighted mean of each channel, shape (height, width, channels).
  TensorXf develop() const;

 private:
  std::array<uint32_t, 2> offset_, size_;
  uint32_t border_;
  size_t channels_;
  std::shared_ptr<const ReconstructionFilter> filter_;
  Float accumulator_;  ///< (height + 2 border) × (width + 2 border) × (channels + 1), weight last
};

class Film : public Object {
 public:
  PluginKind kind() const override { return PluginKind::Film; }

  std::array<uint32_t, 2> size() const { return size_; }
  std::array<uint32_t, 2> crop_offset() const { return crop_offset_; }
  std::array<uint32_t, 2> crop_size() const { return crop_size_; }
  /// Changes the film size and crop window (checked: the crop must lie inside the film).
  void set_size(std::array<uint32_t, 2> size);
  void set_crop_window(std::array<uint32_t, 2> offset, std::array<uint32_t, 2> size);
  const std::shared_ptr<ReconstructionFilter>& rfilter() const { return filter_; }

  /// Names of the channels develop() returns ("R", "G", "B", optionally "A", then AOVs).
  virtual std::vector<std::string> channel_names() const = 0;
  /// A fresh block for the crop window with room for `channels` values per sample.
  ImageBlock create_block(size_t channels) const;

 protected:
  std::array<uint32_t, 2> size_{}, crop_offset_{}, crop_size_{};
  std::shared_ptr<ReconstructionFilter> filter_;
};

}  // namespace kiln::render
