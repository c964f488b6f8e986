// render(): the integrator's image as a CustomOp over the scene's differentiable
// parameters, whose derivatives come from a second render with fresh leaves in their place
// (GradientParameters).
#include <kiln/autodiff.h>
#include <kiln/control.h>
#include <kiln/errors.h>
#include <kiln/render/parameters.h>
#include <kiln/render/render.h>

#include "core/gradient_parameters.h"
#include "core/recording.h"

#include <memory>
#include <optional>
#include <utility>
#include <vector>

namespace kiln::render {
namespace {

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
  RenderOp(std::shared_ptr<Scene> scene, std::shared_ptr<const Sensor> sensor,
           std::unique_ptr<GradientParameters> parameters, const RenderOptions& options)
      : scene_(std::move(scene)),
        sensor_(std::move(sensor)),
        parameters_(std::move(parameters)),
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
    TensorXf derivative;  // empty when no parameter affects the image: zero tangents
    parameters_->with_leaves(values_, [&](const std::vector<Float>& leaves) {
      TensorXf image = gradient_render();
      if (!grad_enabled(image)) return;
      for (size_t k = 0; k < leaves.size(); ++k) set_grad(leaves[k], std::get<0>(tangents)[k]);
      derivative = forward_to(image);
    });
    return {derivative};
  }

  Inputs backward(const Outputs& adjoints) override {
    ControlModeScope primal_mode(primal_default_);
    integrator_of(*scene_, options_).check_reverse_mode();
    GradScope recording = resume_grad();
    GradScope isolation = isolate_grad();
    std::vector<Float> grads(values_.size());  // zeros when no parameter affects the image
    parameters_->with_leaves(values_, [&](const std::vector<Float>& leaves) {
      TensorXf image;
      {
        // The replay records while it is traced, not when reverse mode traces it again.
        std::optional<RecordingRequest> recording;
        if (options_.recorder) recording.emplace(options_.recorder, RecordingPass::Backward, &std::get<0>(adjoints));
        image = gradient_render();
      }
      if (!grad_enabled(image)) return;
      backward_from(image.array(), std::get<0>(adjoints).array());
      for (size_t k = 0; k < leaves.size(); ++k) grads[k] = grad(leaves[k]);
    });
    return {grads};
  }

 private:
  TensorXf gradient_render() const {
    uint32_t seed = options_.seed_grad.value_or(gradient_seed(options_.seed));
    return integrator_of(*scene_, options_)
        .render_for_derivatives(*scene_, *sensor_, seed, options_.spp_grad.value_or(options_.spp));
  }

  // The op outlives the call (until the image is freed): it keeps the scene, which owns
  // the parameters, alive.
  std::shared_ptr<Scene> scene_;
  std::shared_ptr<const Sensor> sensor_;
  std::unique_ptr<GradientParameters> parameters_;
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
  auto parameters = std::make_unique<GradientParameters>(*scene);
  if (parameters->empty()) return primal_render(*scene, *sensor, options);
  std::vector<Float> inputs = parameters->inputs();
  auto [image] = custom(std::make_shared<RenderOp>(scene, sensor, std::move(parameters), options), inputs);
  return image;
}

}  // namespace kiln::render
