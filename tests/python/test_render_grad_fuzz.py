"""The renderer's gradient fuzzer (issue 26): random small scenes drawn from every plugin
(tests/render/fuzz_scenes.py), a random integrator (the projective ones included) and way of
choosing the control-flow mode, random parameters that kr.render differentiates (colours,
textures' and envmaps' values, vertex positions, the field of view, and transforms moved by a
translation and a rotation), forward and reverse mode.

Each case asserts that
  - nothing raises but the documented errors (a parameter render() refuses to
    differentiate, names it; `path` with max_depth -1 refuses symbolic reverse mode),
  - the image, the forward-mode tangent image J·u and the reverse-mode gradients Jᵀ·v have
    no NaN or infinity,
  - ⟨J·u, v⟩ = ⟨u, Jᵀ·v⟩: both modes differentiate the same gradient render (equal seeds),
    so they agree up to float rounding (atomic sums in another order): within 1e-3 of the
    sum of the products' magnitudes, plus 1e-5 of the image's (⟨|image|, |v|⟩·max|u|) for
    derivatives that cancel out to almost nothing.
A failing case names its seed; `python tests/python/test_render_grad_fuzz.py --first SEED
--cases 1` (or KILN_RENDER_FUZZ_FIRST=SEED KILN_RENDER_FUZZ_CASES=1 with pytest) reruns it,
and `python tests/render/fuzz_scenes.py SEED` prints its scene. `make test` runs 50 cases;
KILN_RENDER_FUZZ_CASES sets how many (the script's --cases runs thousands and summarizes).
"""

import argparse
import os
import sys
import time
import traceback
from pathlib import Path

import numpy as np
import pytest

import kiln as kl
import kiln.render as kr

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "render"))

import fuzz_scenes  # noqa: E402

FIRST = int(os.environ.get("KILN_RENDER_FUZZ_FIRST", "1"))
CASES = int(os.environ.get("KILN_RENDER_FUZZ_CASES", "50"))
RTOL, ATOL = 1e-3, 1e-4
# What render() may raise for a case, by design (each message is tested elsewhere).
DOCUMENTED_ERRORS = ["carries derivatives, but", "is -1 (unbounded), but reverse mode through the symbolic path loop"]


class Outcome:
    """What a case did: 'checked' (both modes compared), or 'refused' (a documented error)."""

    def __init__(self, kind, detail=""):
        self.kind, self.detail = kind, detail


def _as_numpy(value):
    array = np.asarray(value, dtype=np.float64)
    return array.reshape(-1, 3) if isinstance(value, kl.Array3f) else array.reshape(-1)


def _like(value, array):
    if isinstance(value, kl.Array3f):
        return kl.Array3f(*(kl.Float(np.ascontiguousarray(array[:, c], dtype=np.float32)) for c in range(3)))
    return kl.Float(np.ascontiguousarray(array, dtype=np.float32))


def _choose_keys(params, rng):
    """One to three parameters render() differentiates; sometimes one it refuses as well."""
    values = [k for k in params.keys() if isinstance(params[k], (kl.Float, kl.Array3f, kr.Transform4f))]
    # Discontinuous parameters (vertex positions, transforms, the field of view) give their
    # interior derivatives, and with the projective integrators their visibility terms: both
    # modes must agree on them too.
    accepted = [k for k in values if not params.flags(k) & kr.ParamFlags.NonDifferentiable]
    refused = [k for k in values if k not in accepted]
    count = min(len(accepted), int(rng.integers(1, 4)))
    keys = [str(k) for k in rng.choice(accepted, size=count, replace=False)] if count else []
    if refused and (not keys or rng.random() < 0.1):
        keys.append(str(rng.choice(refused)))
    return keys


class _Pose:
    """A transform parameter moved by four numbers with derivatives: a translation (an
    Array3f) and a rotation in degrees (a Float) about a random axis, both zero at the start."""

    def __init__(self, params, key, rng):
        self.params, self.key, self.start = params, key, params[key]
        axis = rng.normal(size=3)
        self.axis = (axis / np.linalg.norm(axis)).tolist()
        self.variables = {f"{key} translation": kl.Array3f(0.0, 0.0, 0.0), f"{key} angle": kl.Float(0.0)}

    def place(self):
        translation, angle = self.variables.values()
        self.params[self.key] = kr.Transform4f().translate(translation).rotate(self.axis, angle) @ self.start


def _variables(params, keys, rng):
    """The arrays the derivatives are taken for, by name, with grad enabled: each key's value,
    or a _Pose's numbers for a transform (put into params)."""
    variables = {}
    for key in keys:
        if isinstance(params[key], kr.Transform4f):
            pose = _Pose(params, key, rng)
            for value in pose.variables.values():
                kl.enable_grad(value)
            pose.place()
            variables.update(pose.variables)
        else:
            kl.enable_grad(params[key])
            variables[key] = params[key]
    params.update()
    return variables


def _finite(name, array):
    bad = ~np.isfinite(array)
    assert not bad.any(), f"{name}: {int(bad.sum())} of {bad.size} entries are NaN or infinite"


def _documented(error):
    return isinstance(error, ValueError) and any(text in str(error) for text in DOCUMENTED_ERRORS)


def run_case(seed):
    """Runs fuzz case `seed`; returns its Outcome or raises AssertionError / the unexpected error."""
    case = fuzz_scenes.random_case(seed)
    rng = np.random.default_rng([seed, 1])
    scene_dict = case.scene
    symbolic_flag = case.mode == "symbolic"
    if case.mode_by == "integrator":
        scene_dict["integrator"]["mode"] = case.mode
        symbolic_flag = not symbolic_flag  # the integrator's mode must win over the flag
    saved = kl.flag(kl.Flag.Symbolic)
    kl.set_flag(kl.Flag.Symbolic, symbolic_flag)
    try:
        scene = kr.load_dict(scene_dict)
        params = kr.traverse(scene)
        keys = _choose_keys(params, rng)
        if not keys:
            return Outcome("no parameters")
        variables = _variables(params, keys, rng)
        try:
            image = kr.render(scene, params, spp=case.spp, seed=case.render_seed, seed_grad=case.gradient_seed)
            _finite("image", image.numpy())
            # Forward mode: a random direction u in every parameter's space.
            directions = {}
            for name, value in variables.items():
                directions[name] = rng.uniform(-0.5, 1.5, _as_numpy(value).shape)
                kl.set_grad(value, _like(value, directions[name]))
            tangent = kl.forward_to(image).numpy().astype(np.float64)
            _finite("J·u (forward mode)", tangent)
            # Reverse mode: random pixel weights v.
            weights = rng.uniform(-0.5, 1.5, tangent.shape)
            for value in variables.values():
                kl.clear_grad(value)
            kl.backward_from(image, kl.TensorXf(weights.astype(np.float32)))
        except Exception as error:  # noqa: BLE001 (the documented errors end the case)
            if _documented(error):
                return Outcome("refused", str(error).split(":")[-1].strip()[:80])
            raise
        forward_side = tangent * weights
        reverse_side = []
        for name, value in variables.items():
            gradient = _as_numpy(kl.grad(value))
            _finite(f"Jᵀ·v for {name} (reverse mode)", gradient)
            reverse_side.append((directions[name] * gradient).ravel())
        reverse_side = np.concatenate(reverse_side)
        a, b = forward_side.sum(), reverse_side.sum()
        # Float32 rounding: relative to the products, and, where the derivative cancels out
        # (a blend weight between equal lobes; texture coordinates, which turn an isotropic
        # BSDF's shading frame about its normal through dp_du), to the size of what was rendered.
        allowed = RTOL * (np.abs(forward_side).sum() + np.abs(reverse_side).sum()) + ATOL * np.abs(
            image.numpy() * weights).sum() * max(np.abs(u).max() for u in directions.values())
        assert abs(a - b) <= allowed, (
            f"<J·u, v> = {a!r} from forward mode but <u, Jᵀ·v> = {b!r} from reverse mode "
            f"(difference {abs(a - b):.3g}, allowed {allowed:.3g}); parameters {keys}")
        return Outcome("checked", f"{len(keys)} parameters, <J·u, v> = {a:.4g}")
    finally:
        kl.set_flag(kl.Flag.Symbolic, saved)


@pytest.mark.parametrize("seed", range(FIRST, FIRST + CASES))
def test_render_gradient_fuzz_case(seed):
    try:
        run_case(seed)
    except Exception as error:
        case = fuzz_scenes.random_case(seed)
        raise AssertionError(f"{case.describe()}\nreproduce: python tests/python/test_render_grad_fuzz.py --first "
                             f"{seed} --cases 1\n{type(error).__name__}: {error}") from error


def main():
    parser = argparse.ArgumentParser(description="Runs the renderer's gradient fuzzer outside pytest.")
    parser.add_argument("--first", type=int, default=FIRST)
    parser.add_argument("--cases", type=int, default=CASES)
    args = parser.parse_args()
    outcomes, failures, start = {}, [], time.time()
    for seed in range(args.first, args.first + args.cases):
        try:
            outcome = run_case(seed)
            outcomes[outcome.kind] = outcomes.get(outcome.kind, 0) + 1
        except Exception as error:  # noqa: BLE001 (collected and reported)
            failures.append(seed)
            print(f"FAILED {fuzz_scenes.random_case(seed).describe()}\n  {type(error).__name__}: {error}", flush=True)
            traceback.print_exc(limit=3)
        if (seed - args.first + 1) % 50 == 0:
            print(f"{seed - args.first + 1} cases, {len(failures)} failed, {time.time() - start:.0f} s", flush=True)
    print(f"{args.cases} cases from {args.first}: {outcomes}, {len(failures)} failed {failures}")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
