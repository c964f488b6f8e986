// The film (Mitsuba 3's `hdrfilm`): the image's size, the crop window that is rendered,
// the reconstruction filter and the output channels, and the image block samples are
// splatted into.
//
// What an implementation guarantees:
// - Film coordinates are in pixels of the full film, x right and y down; pixel (i, j)
//   covers [i, i+1) × [j, j+1).
// - Only the crop window is rendered; develop() returns a TensorXf of shape (crop height,
//   crop width, channels), each pixel the filter-weighted mean of the samples around it
//   (samples are taken inside the crop only, and filter taps outside it are dropped, as
//   in Mitsuba's JIT variants).
// - The size, crop and filter are host settings, but kernels read them through opaque
//   arrays (Kiln parameters): changing them compiles nothing new (story 1).
#pragma once

#include <kiln/render/rfilter.h>
#include <kiln/tensor.h>

#include <array>
#include <cmath>
#include <memory>
#include <optional>
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
  /// Adds `values` to the pixels the filter reaches, its weights normalized to sum to 1
  /// over them, and records no weight (Mitsuba's splatting with weight 0: a particle
  /// tracer's pixel is the sum of what reached it).
  void splat(const Array2f& position, const std::vector<Float>& values, const Bool& active);
  /// Evaluates what was put so far (between the passes of a render).
  void evaluate() { kiln::eval(accumulator_); }
  /// Per pixel of the crop, shape (height, width, channels): each channel over the weight
  /// the pixel received (a pixel without weight keeps its sum).
  TensorXf develop() const;

 private:
  /// The pixels the filter reaches from `position` (crop coordinates of the first, then
  /// the taps' separable weights; one tap of weight 1 with the box filter).
  struct Footprint {
    Int32 x, y;
    std::vector<Float> weight_x, weight_y;
  };
  Footprint footprint(const Array2f& position) const;
  /// Adds `values` · `weight` to crop pixel (x, y) where it exists, and `weight` to its
  /// weight when `record_weight`.
  void add(const Int32& x, const Int32& y, const std::vector<Float>& values, const Float& weight, const Bool& active,
           bool record_weight);

  std::array<uint32_t, 2> offset_, size_;
  size_t channels_;
  std::shared_ptr<const ReconstructionFilter> filter_;
  Float accumulator_;  ///< height × width × (channels + 1), the weight last
};

class Film : public Object {
 public:
  /// Reads `width`, `height`, the crop window and the nested `rfilter` (gaussian by default).
  explicit Film(const Properties& props);
  PluginKind kind() const override { return PluginKind::Film; }

  std::array<uint32_t, 2> size() const { return size_; }
  std::array<uint32_t, 2> crop_offset() const { return crop_offset_; }
  std::array<uint32_t, 2> crop_size() const { return crop_size_; }
  /// Changes the crop window; throws ValueError unless it lies inside the film.
  void set_crop_window(std::array<uint32_t, 2> offset, std::array<uint32_t, 2> size);
  const std::shared_ptr<ReconstructionFilter>& rfilter() const { return filter_; }
  /// True when the film stores an alpha channel (rendered values then carry one after RGB).
  virtual bool has_alpha() const = 0;
  /// Pixels sampled beyond each side of the crop window (Mitsuba's `sample_border`: the
  /// filter's reach, so edge pixels get what lies just outside; 0 without it).
  uint32_t border() const {
    return sample_border_ ? uint32_t(std::max(0.0f, std::ceil(filter_->radius() - 0.5f))) : 0u;
  }

  /// A fresh block for the crop window with `channels` values per sample.
  ImageBlock create_block(size_t channels) const;
  /// The block's pixels in the film's pixel format: when `color`, the samples carried RGB
  /// (and alpha if has_alpha()) before their AOVs; otherwise AOVs only, returned as they are.
  virtual TensorXf develop(const ImageBlock& block, bool color) const = 0;

  void traverse(TraversalCallback& callback) override;
  void parameters_changed(const std::vector<std::string>& keys) override;

  /// The image the last render() developed and its channels' names (R, G, B[, A] then the
  /// AOVs), as Mitsuba's film keeps it for film.bitmap(); null before the first render.
  void keep_image(TensorXf image, std::vector<std::string> channel_names);
  const TensorXf* last_image() const { return last_image_ ? &*last_image_ : nullptr; }
  const std::vector<std::string>& last_channel_names() const { return last_channel_names_; }

 protected:
  std::array<uint32_t, 2> size_{}, crop_offset_{}, crop_size_{};
  /// The last size and crop window that were checked: what a refused change goes back to.
  std::array<std::array<uint32_t, 2>, 3> valid_{};
  std::shared_ptr<ReconstructionFilter> filter_;
  bool sample_border_ = false;

 private:
  std::optional<TensorXf> last_image_;
  std::vector<std::string> last_channel_names_;
};

}  // namespace kiln::render
