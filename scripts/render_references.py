"""Renders the reference images of tests/render/scenes.py with Mitsuba 3 (the oracle of the
render tests) and writes them to tests/render/references/.

For each scene and seed s in (0, 1): `<scene>_s<s>.exr` holds every channel Mitsuba's
render() returns (RGB, alpha, AOVs), float32, uncompressed (tests/render/exr_float.py), and
`<scene>.json` the Mitsuba and Dr.Jit versions, variant, spp, seeds and channel names.
A reference of `--spp` samples is rendered in passes of at most PASS_SPP samples whose
Mitsuba seeds are s + 2^20 * pass (pass 0 uses s itself), averaged; so no pass shares a seed
with the test renders (seeds 2 and up).

Set up Mitsuba once (it is not a dependency of Kiln):
    python3 -m venv /tmp/mi-refs && /tmp/mi-refs/bin/pip install mitsuba==3.9.1 drjit==1.5.0 numpy
Run (DRJIT_LIBLLVM_PATH defaults to Debian's LLVM 19):
    /tmp/mi-refs/bin/python scripts/render_references.py             # every scene
    /tmp/mi-refs/bin/python scripts/render_references.py --scene aov # one scene again
    /tmp/mi-refs/bin/python scripts/render_references.py --assets    # rewrite tests/render/data first
Review `git diff --stat tests/render/` before committing: only the scenes you meant to change
should differ.
"""

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "render"))

import exr_float  # noqa: E402
import reference_check  # noqa: E402
import scene_assets  # noqa: E402
import scenes  # noqa: E402

VARIANT = "llvm_ad_rgb"
MITSUBA_VERSION = "3.9.1"
REFERENCE_SEEDS = (0, 1)
DEFAULT_SPP = 16384
PASS_SPP = 4096
PASS_SEED_STRIDE = 1 << 20


def import_mitsuba():
    """Mitsuba 3 with the LLVM variant (Debian's libLLVM unless DRJIT_LIBLLVM_PATH says otherwise)."""
    os.environ.setdefault("DRJIT_LIBLLVM_PATH", "/usr/lib/llvm-19/lib/libLLVM.so.1")
    import mitsuba as mi
    mi.set_variant(VARIANT)
    return mi


def load_scene(mi, name):
    return mi.load_dict(scenes.for_mitsuba(scenes.SCENES[name](scenes.DATA_DIR), mi))


def output_channel_names(mi, film, image):
    """The names of the channels mi.render() returned, checked against the film's bitmap.

    The bitmap leads with the film's own R, G, B (and A) block, which render() leaves out when
    the integrator has AOVs; then an inner integrator's channels (its alpha only kept when
    the film stores alpha) and the AOVs."""
    bitmap = film.bitmap()
    names = [field.name for field in bitmap.struct_()]
    values = np.array(bitmap)
    if bitmap.pixel_format() == mi.Bitmap.PixelFormat.MultiChannel:
        base = [n for n in names[:4] if n in ("R", "G", "B", "A")]
        rest = names[len(base):]
        names = [n for n in rest if "A" in base or not n.endswith(".A")]
    if len(names) != image.shape[2]:
        raise RuntimeError(f"cannot name the {image.shape[2]} channels of the render from the film's {names}")
    all_names = [field.name for field in bitmap.struct_()]
    for c, name in enumerate(names):
        expected = values[:, :, all_names.index(name)]
        if not np.allclose(image[:, :, c], expected, rtol=1e-5, atol=1e-6):
            raise RuntimeError(f"render channel {c} does not hold the film's channel {name}")
    return names


def render_reference(mi, scene, spp, seed):
    """The mean of passes of at most PASS_SPP samples (seeds seed + PASS_SEED_STRIDE * pass)."""
    passes = -(-spp // PASS_SPP)
    if spp % passes:
        raise ValueError(f"--spp {spp} must split into {passes} equal passes of at most {PASS_SPP}")
    total = None
    for index in range(passes):
        image = np.array(mi.render(scene, spp=spp // passes, seed=seed + PASS_SEED_STRIDE * index), dtype=np.float64)
        total = image if total is None else total + image
    return (total / passes).astype(np.float32), image.astype(np.float32)


def write_references(name, out_dir, images, channel_names):
    """Writes one EXR per reference seed, checks each reads back as written; returns the JSON's path."""
    paths, metadata_path = reference_check.reference_paths(name, out_dir)
    for path, image in zip(paths, images):
        exr_float.write_exr(path, image, channel_names)
        if not np.array_equal(exr_float.read_exr_channels(path, channel_names), image):
            raise RuntimeError(f"{path} does not read back as written")
    return metadata_path


def render_scene(mi, name, spp, out_dir):
    scene = load_scene(mi, name)
    start = time.time()
    images, channel_names = [], None
    for seed in REFERENCE_SEEDS:
        mean, last_pass = render_reference(mi, scene, spp, seed)
        channel_names = output_channel_names(mi, scene.sensors()[0].film(), last_pass)
        if not np.isfinite(mean).all():
            raise RuntimeError(f"{name}: the reference of seed {seed} has NaN or infinite values")
        images.append(mean)
    seconds = time.time() - start
    metadata_path = write_references(name, out_dir, images, channel_names)
    import drjit
    metadata = {"scene": name, "renderer": "mitsuba", "mitsuba": mi.__version__, "drjit": drjit.__version__,
                "variant": VARIANT, "spp": spp, "pass_spp": spp // -(-spp // PASS_SPP),
                "seeds": list(REFERENCE_SEEDS), "pass_seed_stride": PASS_SEED_STRIDE,
                "shape": list(images[0].shape), "channels": channel_names, "render_seconds": round(seconds, 1)}
    metadata_path.write_text(json.dumps(metadata, indent=1) + "\n")
    print(f"{name:18s} {images[0].shape[1]}x{images[0].shape[0]}x{images[0].shape[2]} spp {spp}: {seconds:.1f} s",
          flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scene", action="append", choices=sorted(scenes.SCENES),
                        help="render only this scene (repeatable); default: all")
    parser.add_argument("--spp", type=int, default=DEFAULT_SPP, help=f"samples per pixel (default {DEFAULT_SPP})")
    parser.add_argument("--assets", action="store_true", help="rewrite tests/render/data first")
    parser.add_argument("--out", type=Path, default=reference_check.REFERENCE_DIR, help="output folder")
    args = parser.parse_args()
    if args.assets:
        scene_assets.write_assets(scenes.DATA_DIR)
    mi = import_mitsuba()
    if mi.__version__ != MITSUBA_VERSION:
        sys.exit(f"render_references: Mitsuba {MITSUBA_VERSION} is the oracle, found {mi.__version__}")
    args.out.mkdir(parents=True, exist_ok=True)
    start = time.time()
    for name in args.scene or scenes.SCENES:
        render_scene(mi, name, args.spp, args.out)
    print(f"done in {time.time() - start:.0f} s")


if __name__ == "__main__":
    main()
