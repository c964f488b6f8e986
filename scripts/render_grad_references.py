"""Renders the gradient references of tests/render/grad_scenes.py with Mitsuba 3: for each
case (a scene, its integrator and one parameter), Mitsuba's forward-mode derivative
image of the render along the case's tangent (grad_scenes.tangent). Written to
tests/render/references/grad/.

The projective cases (grad_scenes.CENTRAL_DIFFERENCES) take central differences of Mitsuba's
images instead of its derivative images, which disagree with those differences (grad_scenes.py
says where). For each case and seed s in (0, 1): `<scene>-<key>_s<s>.exr` holds the derivative image's
R, G and B (float32, uncompressed, tests/render/exr_float.py; not the alpha channel an RGBA
film adds, which Mitsuba fills with the pixel coverage), and `<scene>-<key>.json` the
Mitsuba and Dr.Jit versions, variant, integrator, key, tangent, spp, seeds and channels.
Each image is the mean of passes of at most PASS_SPP samples, each pass
    dr.enable_grad(params[key]); params.update()
    image = mi.render(scene, params, spp=..., seed=..., seed_grad=s + 2^20 * pass)
    dr.set_grad(params[key], tangent); dr.enqueue(dr.ADMode.Forward, params[key])
    dr.traverse(dr.ADMode.Forward)
    dr.grad(image)
so no pass shares a seed with the test renders (seeds 2 and up).

Set up Mitsuba as for scripts/render_references.py, then (a few minutes on 2 cores):
    /tmp/mi-refs/bin/python scripts/render_grad_references.py                    # every case
    /tmp/mi-refs/bin/python scripts/render_grad_references.py --scene cornell_box # one scene's cases
Review `git diff --stat tests/render/references/grad/` before committing.
"""

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "render"))
sys.path.insert(0, str(ROOT / "scripts"))

import grad_scenes  # noqa: E402
import reference_check  # noqa: E402
import scenes  # noqa: E402
from render_references import (MITSUBA_VERSION, PASS_SEED_STRIDE, REFERENCE_SEEDS, VARIANT, import_mitsuba,  # noqa: E402
                               write_references)

DEFAULT_SPP = 16384
PASS_SPP = 1024
OUT_DIR = reference_check.REFERENCE_DIR / "grad"


def tangent_of(mi, value, key, case):
    """grad_scenes.tangent(key, ..., case) as a value of value's type."""
    if isinstance(value, mi.Color3f):
        return mi.Color3f(grad_scenes.tangent(key, [0.0, 0.0, 0.0], case))
    flat = mi.Float(grad_scenes.tangent(key, np.array(value).ravel(), case))
    return mi.TensorXf(flat, value.shape) if isinstance(value, mi.TensorXf) else flat


def central_difference_image(mi, scene, params, key, case, spp, seed):
    """(render(x + h u) - render(x - h u)) / 2h at one seed: Mitsuba's images differentiated
    by central differences along grad_scenes.tangent u of `key` (h: the case's step)."""
    h = grad_scenes.CENTRAL_DIFFERENCES[case]
    base = np.array(params[key], dtype=np.float64).ravel()
    u = np.array(grad_scenes.tangent(key, base, case))
    images = []
    for sign in (1, -1):
        params[key] = mi.Float(np.ascontiguousarray(base + sign * h * u, dtype=np.float32))
        params.update()
        images.append(np.array(mi.render(scene, spp=spp, seed=seed), dtype=np.float64))
    params[key] = mi.Float(np.ascontiguousarray(base, dtype=np.float32))
    params.update()
    return (images[0] - images[1]) / (2 * h)


def derivative_image(mi, scene, params, key, case, spp, seed_grad):
    """Mitsuba's forward-mode derivative of the render along grad_scenes.tangent of `key`
    (central differences of its images for the cases grad_scenes.CENTRAL_DIFFERENCES names)."""
    if case in grad_scenes.CENTRAL_DIFFERENCES:
        return central_difference_image(mi, scene, params, key, case, spp, seed_grad)
    import drjit as dr
    dr.enable_grad(params[key])
    params.update()
    image = mi.render(scene, params, spp=spp, seed=0, seed_grad=seed_grad)
    dr.set_grad(params[key], tangent_of(mi, params[key], key, case))
    # A traversal from the parameter (dr.forward_to(image) fails for the envmap's texels,
    # whose derived values were recorded outside the render's isolation scope).
    dr.enqueue(dr.ADMode.Forward, params[key])
    dr.traverse(dr.ADMode.Forward)
    tangent_image = np.array(dr.grad(image), dtype=np.float64)
    dr.disable_grad(params[key])
    params.update()
    return tangent_image


def render_reference(mi, scene, params, key, case, spp, seed):
    """The mean of passes of at most PASS_SPP samples (seeds seed + PASS_SEED_STRIDE * pass), RGB."""
    passes = -(-spp // PASS_SPP)
    if spp % passes:
        raise ValueError(f"--spp {spp} must split into {passes} equal passes of at most {PASS_SPP}")
    total = 0
    for index in range(passes):
        total = total + derivative_image(mi, scene, params, key, case, spp // passes, seed + PASS_SEED_STRIDE * index)
    mean = total / passes
    if mean.shape[2] not in (3, 4):
        raise RuntimeError(f"expected an RGB or RGBA derivative image, got {mean.shape[2]} channels")
    return mean[:, :, :3].astype(np.float32)


def render_case(mi, name, scene_name, key, spp, out_dir):
    # optimize=False: Mitsuba would merge meshes sharing a BSDF, and their keys with them.
    scene = mi.load_dict(scenes.for_mitsuba(grad_scenes.scene(scene_name), mi), optimize=False)
    params = mi.traverse(scene)
    if key not in params:
        raise RuntimeError(f"{name}: {key} is not a parameter of the Mitsuba scene")
    start = time.time()
    images = []
    for seed in REFERENCE_SEEDS:
        image = render_reference(mi, scene, params, key, scene_name, spp, seed)
        if not np.isfinite(image).all():
            raise RuntimeError(f"{name}: the reference of seed {seed} has NaN or infinite values")
        images.append(image)
    seconds = time.time() - start
    metadata_path = write_references(name, out_dir, images, grad_scenes.CHANNELS)
    import drjit
    tangent = grad_scenes.CASE_TANGENTS.get(scene_name, grad_scenes.TANGENTS.get(key, "ones"))
    metadata = {"scene": scene_name, "key": key, "tangent": tangent, "renderer": "mitsuba",
                "derivative": (f"central differences, h = {grad_scenes.CENTRAL_DIFFERENCES[scene_name]}"
                               if scene_name in grad_scenes.CENTRAL_DIFFERENCES else "forward mode"),
                "mitsuba": mi.__version__, "drjit": drjit.__version__, "variant": VARIANT,
                "integrator": grad_scenes.scene(scene_name)["integrator"], "spp": spp,
                "pass_spp": spp // -(-spp // PASS_SPP), "seeds": list(REFERENCE_SEEDS),
                "pass_seed_stride": PASS_SEED_STRIDE, "shape": list(images[0].shape),
                "channels": grad_scenes.CHANNELS, "render_seconds": round(seconds, 1)}
    metadata_path.write_text(json.dumps(metadata, indent=1) + "\n")
    print(f"{name:46s} {images[0].shape[1]}x{images[0].shape[0]} spp {spp}: {seconds:.1f} s", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scene", action="append", choices=sorted(grad_scenes.CASES),
                        help="render only this case's references (repeatable); default: all")
    parser.add_argument("--spp", type=int, default=DEFAULT_SPP, help=f"samples per pixel (default {DEFAULT_SPP})")
    parser.add_argument("--out", type=Path, default=OUT_DIR, help="output folder")
    args = parser.parse_args()
    mi = import_mitsuba()
    if mi.__version__ != MITSUBA_VERSION:
        sys.exit(f"render_grad_references: Mitsuba {MITSUBA_VERSION} is the oracle, found {mi.__version__}")
    args.out.mkdir(parents=True, exist_ok=True)
    start = time.time()
    for name, scene_name, key in grad_scenes.case_names():
        if args.scene is None or scene_name in args.scene:
            render_case(mi, name, scene_name, key, args.spp, args.out)
    print(f"done in {time.time() - start:.0f} s")


if __name__ == "__main__":
    main()
