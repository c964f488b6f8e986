// The volume texture (Mitsuba 3's `volume`): a surface's parameter read from a volume at
// the surface point (`volume`: a nested volume such as `gridvolume`, or a float or RGB
// value, which is then the same everywhere).
#include "core/parameter_checks.h"

#include <kiln/render/plugin.h>
#include <kiln/render/texture.h>
#include <kiln/render/traverse.h>
#include <kiln/render/volume.h>

namespace kiln::render {
namespace {

class VolumeTexture : public Texture {
 public:
  explicit VolumeTexture(const Properties& props) {
    if (props.has("volume") && std::holds_alternative<std::shared_ptr<Object>>(props.get("volume")))
      volume_ = std::static_pointer_cast<Volume>(props.get_object("volume", PluginKind::Volume));
    else
      constant_ = texture_parameter(props, "volume", Color3d{0.75, 0.75, 0.75});
  }

  Color3f eval(const SurfaceInteraction& si, const Bool& active) const override {
    return volume_ ? volume_->eval(si.p, active) : constant_->eval(si, active);
  }
  Float eval_1(const SurfaceInteraction& si, const Bool& active) const override {
    return volume_ ? volume_->eval_1(si.p, active) : constant_->eval_1(si, active);
  }
  Float mean() const override { return volume_ ? volume_->mean() : constant_->mean(); }
  bool is_constant() const override { return !volume_; }

  void traverse(TraversalCallback& callback) override {
    callback.put_object("volume", volume_ ? static_cast<Object*>(volume_.get()) : constant_.get());
  }

 private:
  std::shared_ptr<Volume> volume_;
  std::shared_ptr<Texture> constant_;
};

}  // namespace

KILN_REGISTER_PLUGIN(PluginKind::Texture, "volume",
                     [](const Properties& props) { return std::make_shared<VolumeTexture>(props); });

}  // namespace kiln::render
