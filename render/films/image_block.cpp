// Image blocks: samples splatted through the reconstruction filter into a crop window, and
// the weighted means develop() returns. As Mitsuba's JIT variants do, the block has no
// border: filter taps outside the crop window are dropped, and each pixel is divided by
// the weights it received; splatted samples (the particle tracer's) add up unweighted.
#include <kiln/autodiff.h>
#include <kiln/construct.h>
#include <kiln/math.h>
#include <kiln/render/film.h>

#include <cmath>

namespace kiln::render {
namespace {
/// A per-render integer as an opaque kernel parameter: a new crop compiles nothing.
Int32 opaque_int(uint32_t value) { return opaque<Int32>(int32_t(value)); }
}  // namespace

ImageBlock::ImageBlock(std::array<uint32_t, 2> offset, std::array<uint32_t, 2> size, size_t channels,
                       std::shared_ptr<const ReconstructionFilter> filter)
    : offset_(offset), size_(size), channels_(channels), filter_(std::move(filter)) {
  accumulator_ = zeros<Float>(size_t(size_[0]) * size_[1] * (channels_ + 1));
}

void ImageBlock::add(const Int32& x, const Int32& y, const std::vector<Float>& values, const Float& weight,
                     const Bool& active, bool record_weight) {
  Int32 width = opaque_int(size_[0]), height = opaque_int(size_[1]);
  Bool inside = active & (x >= 0) & (y >= 0) & (x < width) & (y < height);
  UInt32 pixel = cast<uint32_t>(y * width + x);
  UInt32 base = pixel * uint32_t(channels_ + 1);
  for (size_t c = 0; c < channels_; ++c) {
    // A value that carries derivatives alone (zeros) adds nothing: its contribution stays a
    // literal zero, whose scatter no kernel runs, and keeps the derivatives.
    Float contribution = values[c] * weight;
    if (values_known_zero(values[c])) contribution = derivatives_without_values(contribution);
    scatter_add(accumulator_, contribution, base + uint32_t(c), inside);
  }
  if (record_weight) scatter_add(accumulator_, weight, base + uint32_t(channels_), inside);
}

ImageBlock::Footprint ImageBlock::footprint(const Array2f& position) const {
  Int32 offset_x = opaque_int(offset_[0]), offset_y = opaque_int(offset_[1]);
  if (filter_->is_box())
    return {cast<int32_t>(floor(position.x)) - offset_x,
            cast<int32_t>(floor(position.y)) - offset_y,
            {Float(1.0f)},
            {Float(1.0f)}};
  // Pixel centers lie at integer + 1/2: the sample relative to the crop's first center.
  float radius = filter_->radius();
  Float fx = position.x - cast<float>(offset_x) - 0.5f, fy = position.y - cast<float>(offset_y) - 0.5f;
  Footprint taps{cast<int32_t>(ceil(fx - radius)), cast<int32_t>(ceil(fy - radius)), {}, {}};
  Float rel_x = cast<float>(taps.x) - fx, rel_y = cast<float>(taps.y) - fy;
  for (int i = 0; i < int(std::ceil(2.0f * radius)); ++i) {
    taps.weight_x.push_back(filter_->eval(rel_x + float(i)));
    taps.weight_y.push_back(filter_->eval(rel_y + float(i)));
  }
  return taps;
}

void ImageBlock::put(const Array2f& position, const std::vector<Float>& values, const Bool& active) {
  Footprint taps = footprint(position);
  for (size_t j = 0; j < taps.weight_y.size(); ++j)
    for (size_t i = 0; i < taps.weight_x.size(); ++i)
      add(taps.x + int32_t(i), taps.y + int32_t(j), values, taps.weight_x[i] * taps.weight_y[j], active, true);
}

void ImageBlock::splat(const Array2f& position, const std::vector<Float>& values, const Bool& active) {
  Footprint taps = footprint(position);
  Float sum_x(0.0f), sum_y(0.0f);
  for (const Float& w : taps.weight_x) sum_x = sum_x + w;
  for (const Float& w : taps.weight_y) sum_y = sum_y + w;
  Float normalization = rcp(sum_x * sum_y);
  for (size_t j = 0; j < taps.weight_y.size(); ++j)
    for (size_t i = 0; i < taps.weight_x.size(); ++i)
      add(taps.x + int32_t(i), taps.y + int32_t(j), values, taps.weight_x[i] * taps.weight_y[j] * normalization, active,
          false);
}

TensorXf ImageBlock::develop() const {
  size_t pixels = size_t(size_[0]) * size_[1];
  UInt32 element = arange<UInt32>(pixels * channels_);
  UInt32 pixel = element / uint32_t(channels_), channel = element - pixel * uint32_t(channels_);
  UInt32 base = pixel * uint32_t(channels_ + 1);
  Float value = gather(accumulator_, base + channel);
  Float weight = gather(accumulator_, base + uint32_t(channels_));
  Float mean = value / select(weight == 0.0f, Float(1.0f), weight);
  return TensorXf(mean, {size_t(size_[1]), size_t(size_[0]), channels_});
}

}  // namespace kiln::render
