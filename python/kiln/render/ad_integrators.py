"""Mitsuba's contract for differentiable integrators written in Python (`mi.ad.common`):
subclass ADIntegrator or RBIntegrator, define

    sample(self, mode, scene, sampler, ray, δL, state_in, active, **kwargs)
        -> (L or δL, valid, aovs, state_out)

and register it with kr.register_integrator. ADIntegrator.render() traces the camera
samples of a render (kr.camera_samples, as the C++ integrators do) through
sample(ADMode.Primal, ...) and develops the film. RBIntegrator's derivatives replay the paths
(Vicini et al. 2021): a primal pass gives each sample's radiance, then sample() runs again in
ADMode.Backward with each sample's δL (the image adjoint splatted back to it), and the
subclass calls kl.backward_from itself at every step. Those calls run inside
kl.deferred_backward(), so the ones inside its loops add up to one traversal (Kiln's
traversals cannot start inside a loop).

kr.render(scene, params, ...) with such an integrator is a kl.CustomOp over the values of
`params` (kr.traverse(integrator), or the scene's) that carry derivatives: its backward
puts fresh leaves in their place, runs render_backward() and returns their gradients.
Forward-mode derivatives are not supported for them."""

import kiln as _kl
from kiln._kiln_render import (Integrator, LaneSampler, Properties, Sensor, camera_samples, develop_samples,
                               gradient_seed, sample_adjoints)
from kiln.drjit_names import ADMode


def _sensor_of(scene, sensor):
    """A sensor object from an index into the scene's sensors, or the sensor itself."""
    if isinstance(sensor, Sensor):
        return sensor
    sensors = scene.sensors()
    if not isinstance(sensor, int) or not 0 <= sensor < len(sensors):
        raise IndexError(f"kiln.render: render(): sensor must be a sensor or an index below {len(sensors)}, "
                         f"got {sensor!r}")
    return sensors[sensor]


class ADIntegrator(Integrator):
    """A differentiable integrator written in Python (Mitsuba's mi.ad.common.ADIntegrator):
    reads `max_depth` (6; -1 unbounded) and `rr_depth` (5), renders by calling sample() in
    ADMode.Primal. Subclasses define sample() and, for derivatives, render_backward()
    (RBIntegrator gives it)."""

    def __init__(self, props=None):
        props = Properties() if props is None else props
        Integrator.__init__(self, props)
        max_depth = props.get("max_depth", 6)
        if not isinstance(max_depth, int) or (max_depth < 0 and max_depth != -1):
            raise ValueError(f"kiln.render: {type(self).__name__}: max_depth must be -1 (unbounded) or a "
                             f"non-negative integer, got {max_depth!r}")
        self.max_depth = _kl.UInt32(max_depth if max_depth != -1 else 0xFFFFFFFF)
        self.rr_depth = props.get("rr_depth", 5)
        if not isinstance(self.rr_depth, int) or self.rr_depth <= 0:
            raise ValueError(f"kiln.render: {type(self).__name__}: rr_depth must be a positive integer, "
                             f"got {self.rr_depth!r}")

    def aov_names(self):
        """The names of the AOVs sample() returns."""
        return []

    def sample(self, mode, scene, sampler, ray, δL, state_in, active, **kwargs):
        raise TypeError(f"kiln.render: {type(self).__name__}.sample() is missing: an ADIntegrator defines "
                        "sample(mode, scene, sampler, ray, δL, state_in, active) -> (L, valid, aovs, state)")

    def render(self, scene, sensor=0, seed=0, spp=0, develop=True, evaluate=True):
        """The image of `sensor` with `seed` and `spp` samples per pixel (the sampler's count
        when 0), without derivatives."""
        if not develop:
            raise ValueError("kiln.render: render(develop=False) is not supported: Kiln's films always develop")
        sensor = _sensor_of(scene, sensor)
        with _kl.suspend_grad():
            samples = camera_samples(sensor, seed, spp)
            L, valid, aovs, _ = self.sample(ADMode.Primal, scene, LaneSampler(samples.rng), samples.ray, None, None,
                                            samples.active)
            image = self._develop(sensor.film(), samples, L, valid, aovs)
        if evaluate:
            _kl.eval(image)
        return image

    def _develop(self, film, samples, L, valid, aovs):
        L = _kl.Array3f(L) * samples.weight
        values = [L.x, L.y, L.z]
        if film.has_alpha():
            values.append(_kl.select(_kl.Bool(valid), _kl.Float(1.0), _kl.Float(0.0)))
        values += [_kl.Float(aov) for aov in aovs]
        return develop_samples(film, samples, values, True)

    def render_forward(self, scene, params, sensor=0, seed=0, spp=0):
        raise NotImplementedError(f"kiln.render: {type(self).__name__}: forward-mode derivatives of an integrator "
                                  "written in Python are not supported; use reverse mode (kl.backward)")

    def render_backward(self, scene, params, grad_in, sensor=0, seed=0, spp=0):
        raise NotImplementedError(f"kiln.render: {type(self).__name__} defines no render_backward(): subclass "
                                  "RBIntegrator for path replay derivatives")


class RBIntegrator(ADIntegrator):
    """ADIntegrator whose reverse-mode derivatives replay the paths (Mitsuba's
    mi.ad.common.RBIntegrator): see the module's description."""

    def render_backward(self, scene, params, grad_in, sensor=0, seed=0, spp=0):
        """Adds the gradient of <image, grad_in> to the values the subclass's sample()
        differentiates (its kl.backward_from calls)."""
        sensor = _sensor_of(scene, sensor)
        film = sensor.film()
        with _kl.suspend_grad():
            samples = camera_samples(sensor, seed, spp)
            _, valid, aovs, state = self.sample(ADMode.Primal, scene, LaneSampler(samples.rng), samples.ray, None,
                                                None, samples.active)
        channels = 3 + int(film.has_alpha()) + len(aovs)
        δL = sample_adjoints(film, samples, channels, True, grad_in) * samples.weight
        with _kl.deferred_backward(), _kl.suspend_grad():
            self.sample(ADMode.Backward, scene, LaneSampler(samples.rng), samples.ray, δL, state, samples.active)


class _RenderOp(_kl.CustomOp):
    """kr.render() with an ADIntegrator: the image as a function of the values of `params`
    under `keys`."""

    def __init__(self, integrator, scene, sensor, params, keys, seeds, spps):
        self.integrator, self.scene, self.sensor = integrator, scene, sensor
        self.params, self.keys = params, keys
        self.seed, self.seed_grad = seeds
        self.spp, self.spp_grad = spps

    def eval(self, values):
        return self.integrator.render(self.scene, self.sensor, self.seed, self.spp)

    def forward(self, grad_values):
        self.integrator.render_forward(self.scene, self.params, self.sensor, self.seed_grad, self.spp_grad)

    def backward(self, grad_image):
        saved = [type(self.params[key])(self.params[key]) for key in self.keys]
        leaves = [_kl.detach(value) for value in saved]
        try:
            for key, leaf in zip(self.keys, leaves):
                _kl.enable_grad(leaf)
                self.params[key] = leaf
            self.params.update()
            with _kl.isolate_grad():
                self.integrator.render_backward(self.scene, self.params, grad_image, self.sensor, self.seed_grad,
                                                self.spp_grad)
            # The params hold the leaves by value: read the gradients where they ended.
            return [_kl.grad(self.params[key]) for key in self.keys]
        finally:
            for key, value in zip(self.keys, saved):
                self.params[key] = value
            self.params.update()


def render(integrator, scene, params, sensor, seed, seed_grad, spp, spp_grad):
    """kr.render() with an ADIntegrator (see the module's description)."""
    sensor = _sensor_of(scene, sensor)
    keys = [key for key in params.keys() if _kl.grad_enabled(params[key])] if params is not None else []
    if not keys:
        return integrator.render(scene, sensor, seed, spp)
    seed_grad = gradient_seed(seed) if seed_grad is None else seed_grad
    op = _RenderOp(integrator, scene, sensor, params, keys, (seed, seed_grad), (spp, spp_grad or spp))
    return _kl.custom(op, [type(params[key])(params[key]) for key in keys])
