// render(): the integrator's image as a CustomOp over the scene's differentiable
// parameters, whose derivatives come from a second render with fresh leaves in their place.
#include <kiln/autodiff.h>
#include <kiln/control.h>
#include <kiln/errors.h>
#include <kiln/render/parameters.h>
#include <kiln/render/render.h>

#include "core/recording.h"

#include <memory>
#include <optional>
#include <utility>
#include <vector>

namespace kiln::render {
namespace {

/// Raises a ValueError when parameter `key` carries derivatives that render() cannot
/// give: geometry and transforms (visibility terms, out of scope), settings that are not
/// differentiable, and mesh attributes (the ray tracer and the joined mesh arrays hold
/// copies of them that a gradient render would not see).
void check_supported(const SceneParameters& params, const std::string& key, const ParameterRef& ref) {
  bool carries = std::visit(
      [](auto* value) {
        if constexpr (requires { for_each_array(*value, [](const auto&) {}); })
          return grad_enabled(*value);
        else if constexpr (requires { value->matrix(); })
          return grad_enabled(value->matrix());
        else
          return false;
      },
      ref);
  if (!carries) return;
  std::string why;
  if (params.flags(key) & param_flags::kDiscontinuous)
    why = "its derivatives need visibility (silhouette) terms, which kiln.render does not compute";
  else if (params.flags(key) & param_flags::kNonDifferentiable)
    why = "it is not differentiable";
  else if (key.ends_with(".vertex_normals") || key.ends_with(".vertex_texcoords"))
    why = "derivatives with respect to mesh attributes are not supported yet";
  if (!why.empty())
    throw ValueError("kiln.render: render(): scene parameter '" + key + "' carries derivatives, but " + why +
                     "; assign it a value without them (kl.detach)");
}

/// The scene's Float, Array3f and TensorXf parameters that carry derivatives, one slot per
/// Float array (an Array3f gives three), pointing into the objects that own them.
std::vector<Float*> differentiable_slots(Scene& scene) {
  std::vector<Float*> slots;
  SceneParameters params(scene);
  for (const std::string& key : params.keys()) {
    const ParameterRef& ref = params.get(key);
    check_supported(params, key, ref);
    if (Float* const* value = std::get_if<Float*>(&ref)) {
      if (grad_enabled(**value)) slots.push_back(*value);
    } else if (Array3f* const* vector = std::get_if<Array3f*>(&ref)) {
      for_each_array(**vector, [&](Float& component) {
        if (grad_enabled(component)) slots.push_back(&component);
      });
    } else if (TensorXf* const* tensor = std::get_if<TensorXf*>(&ref)) {
      if (grad_enabled((*tensor)->array())) slots.push_back(&(*tensor)->array());
    }
  }
  return slots;
}

/// While it lives, the slots hold fresh leaves with derivatives (with the values the
/// primal render saw); then the values they held come back.
class FreshLeaves {
 public:
  FreshLeaves(const std::vector<Float*>& slots, const std::vector<Float>& values) : slots_(slots) {
    for (size_t k = 0; k < slots_.size(); ++k) {
      saved_.push_back(*slots_[k]);
      Float leaf = detach(values[k]);
      enable_grad(leaf);
      *slots_[k] = leaf;
      leaves_.push_back(leaf);
    }
  }
  ~FreshLeaves() {
    for (size_t k = 0; k < slots_.size(); ++k) *slots_[k] = saved_[k];
  }
  FreshLeaves(const FreshLeaves&) = delete;
  FreshLeaves& operator=(const FreshLeaves&) = delete;
  const std::vector<Float>& leaves() const { return leaves_; }

 private:
  std::vector<Float*> slots_;
  std::vector<Float> saved_, leaves_;
};

/// The integrator a render uses: the one given in `options`, else the scene's.
const Integrator& integrator_of(const Scene& scene, const RenderOptions& options) {
  return options.integrator ? *options.integrator : *scene.integrator();
}

/// The integrator's image, traced with derivatives suspended: other arrays with
/// derivatives alive in the process (a network's weights) must not make its loops record
/// what a derivative would need.
TensorXf primal_render(Scene& scene, const Sensor& sensor, const RenderOptions& options) {
  GradScope suspended = suspend_grad();
  std::optional<RecordingRequest> recording;
  if (options.recorder) recording.emplace(options.recorder, RecordingPass::Render);
  return integrator_of(scene, options).render(scene, sensor, options.seed, options.spp);
}

class RenderOp : public CustomOp<std::tuple<std::vector<Float>>, std::tuple<TensorXf>> {
 public:
  RenderOp(std::shared_ptr<Scene> scene, std::shared_ptr<const Sensor> sensor, std::vector<Float*> slots,
           const RenderOptions& options)
      : scene_(std::move(scene)),
        sensor_(std::move(sensor)),
        slots_(std::move(slots)),
        options_(options),
        primal_default_(default_mode()) {}
  std::string name() const override { return "kr.render"; }

  Outputs eval(const Inputs& inputs) override {
    values_ = std::get<0>(inputs);
    return {primal_render(*scene_, *sensor_, options_)};
  }

  // forward() and backward() render again in the control-flow mode the primal render was
  // traced in: an integrator without `mode` follows the default of that moment, not the one
  // in effect when a traversal reaches the image.
  Outputs forward(const Inputs& tangents) override {
    ControlModeScope primal_mode(primal_default_);
    GradScope recording = resume_grad();
    GradScope isolation = isolate_grad();
    FreshLeaves fresh(slots_, values_);
    TensorXf image = gradient_render();
    if (!grad_enabled(image)) return {TensorXf()};  // no parameter affects the image: zero tangents
    for (size_t k = 0; k < slots_.size(); ++k) set_grad(fresh.leaves()[k], std::get<0>(tangents)[k]);
    return {forward_to(image)};
  }

  Inputs backward(const Outputs& adjoints) override {
    ControlModeScope primal_mode(primal_default_);
    integrator_of(*scene_, options_).check_reverse_mode();
    GradScope recording = resume_grad();
    GradScope isolation = isolate_grad();
    FreshLeaves fresh(slots_, values_);
    TensorXf image;
    {
      // The replay records while it is traced, not when reverse mode traces it again.
      std::optional<RecordingRequest> recording;
      if (options_.recorder) recording.emplace(options_.recorder, RecordingPass::Backward, &std::get<0>(adjoints));
      image = gradient_render();
    }
    if (!grad_enabled(image)) return {std::vector<Float>(slots_.size())};  // no parameter affects the image
    backward_from(image.array(), std::get<0>(adjoints).array());
    std::vector<Float> grads;
    for (const Float& leaf : fresh.leaves()) grads.push_back(grad(leaf));
    return {grads};
  }

 private:
  TensorXf gradient_render() const {
    uint32_t seed = options_.seed_grad.value_or(gradient_seed(options_.seed));
    return integrator_of(*scene_, options_)
        .render_for_derivatives(*scene_, *sensor_, seed, options_.spp_grad.value_or(options_.spp));
  }

  // The op outlives the call (until the image is freed): it keeps the scene, which owns
  // the slots, alive.
  std::shared_ptr<Scene> scene_;
  std::shared_ptr<const Sensor> sensor_;
  std::vector<Float*> slots_;
  std::vector<Float> values_;  ///< the parameters' values in the primal render
  RenderOptions options_;
  ControlMode primal_default_;  ///< the control-flow default the primal render was traced under
};

}  // namespace

uint32_t gradient_seed(uint32_t seed) {
  // A 32-bit finalizer (murmur3's): consecutive seeds map far apart.
  uint32_t h = seed ^ 0x9e3779b9u;
  h ^= h >> 16;
  h *= 0x85ebca6bu;
  h ^= h >> 13;
  h *= 0xc2b2ae35u;
  return h ^ (h >> 16);
}

TensorXf render(const std::shared_ptr<Scene>& scene, const std::shared_ptr<const Sensor>& sensor,
                const RenderOptions& options) {
  std::vector<Float*> slots = differentiable_slots(*scene);
  if (slots.empty()) return primal_render(*scene, *sensor, options);
  std::vector<Float> values;
  for (Float* slot : slots) values.push_back(*slot);
  auto [image] = custom(std::make_shared<RenderOp>(scene, sensor, std::move(slots), options), values);
  return image;
}

}  // namespace kiln::render
