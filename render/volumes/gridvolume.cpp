// The grid volume (Mitsuba 3's `gridvolume`): values on a regular 3D grid read from a .vol
// file (`filename`), trilinearly interpolated between texel centers (`filter_type`
// "trilinear", or "nearest"), read outside the grid by `wrap_mode` ("clamp", "repeat",
// "mirror"). The grid fills the unit cube mapped by `to_world`; with `use_grid_bbox` the box
// the file gives comes first. `raw` and `accel` are accepted: in RGB variants the stored
// values are used as they are, and Kiln's texture reads are ordinary traced code. The grid
// is a texture of the `data` tensor (Kiln's Texture3f), so it fuses into kernels and carries
// gradients; traverse() lists `data` and `to_world`.
#include "core/parameter_checks.h"

#include <kiln/reduce.h>
#include <kiln/render/plugin.h>
#include <kiln/render/transform.h>
#include <kiln/render/traverse.h>
#include <kiln/render/volume.h>
#include <kiln/texture.h>

namespace kiln::render {
namespace {

class GridVolume : public Volume {
 public:
  explicit GridVolume(const Properties& props)
      : GridVolume(props, read_volume_grid(file_parameter(props, "filename"))) {}

  Color3f eval(const Array3f& p, const Bool& active) const override {
    std::vector<Float> value = texture_.eval(to_local_.apply_point(p), active);
    return value.size() == 1 ? Color3f(value[0], value[0], value[0]) : Color3f(value[0], value[1], value[2]);
  }

  Float eval_1(const Array3f& p, const Bool& active) const override {
    std::vector<Float> value = texture_.eval(to_local_.apply_point(p), active);
    return value.size() == 1 ? value[0] : (value[0] + value[1] + value[2]) * (1.0f / 3.0f);
  }

  Float mean() const override { return kiln::mean(data_.array()); }

  void traverse(TraversalCallback& callback) override {
    callback.put("data", &data_, param_flags::kDifferentiable);
    callback.put("to_world", &to_world_, param_flags::kNonDifferentiable);
  }

  void parameters_changed(const std::vector<std::string>& keys) override {
    if (data_.shape().size() != 4 || (data_.shape()[3] != 1 && data_.shape()[3] != 3))
      throw_parameter_error(*this, "data",
                            "must be a tensor of shape (z, y, x, channels) with 1 or 3 channels, got " +
                                kiln::detail::shape_string(data_.shape()));
    texture_.set_tensor(data_);
    to_local_ = (to_world_ * grid_box_).inverse();
  }

 private:
  GridVolume(const Properties& props, const VolumeGrid& grid)
      : data_(TensorXf::from(grid.values.data(), {grid.size_z, grid.size_y, grid.size_x, grid.channels})),
        texture_(data_, filter_mode(props), wrap_mode(props)),
        to_world_(Transform4f::from_rows(props.get_transform("to_world", kIdentityRows))) {
    if (grid.channels != 1 && grid.channels != 3)
      throw_parameter_error(props, "filename",
                            "holds " + std::to_string(grid.channels) + " channels; gridvolume reads 1 or 3");
    props.get_bool("raw", false);
    props.get_bool("accel", true);
    if (props.get_bool("use_grid_bbox", false)) {
      Array3f low(grid.box_min[0], grid.box_min[1], grid.box_min[2]);
      Array3f high(grid.box_max[0], grid.box_max[1], grid.box_max[2]);
      grid_box_ = Transform4f().translate(low).scale(high - low);
    }
    to_local_ = (to_world_ * grid_box_).inverse();
  }

  static FilterMode filter_mode(const Properties& props) {
    return one_of(props, "filter_type", "trilinear", {"trilinear", "nearest"}) == "nearest" ? FilterMode::Nearest
                                                                                            : FilterMode::Linear;
  }
  static WrapMode wrap_mode(const Properties& props) {
    std::string mode = one_of(props, "wrap_mode", "clamp", {"clamp", "repeat", "mirror"});
    return mode == "repeat" ? WrapMode::Repeat : mode == "mirror" ? WrapMode::Mirror : WrapMode::Clamp;
  }

  TensorXf data_;
  Texture<Float, 3> texture_;
  Transform4f to_world_, grid_box_, to_local_;
};

}  // namespace

KILN_REGISTER_PLUGIN(PluginKind::Volume, "gridvolume",
                     [](const Properties& props) { return std::make_shared<GridVolume>(props); });

}  // namespace kiln::render
