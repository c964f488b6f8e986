"""Checks the render tests' criterion (tests/render/reference_check.py) with Mitsuba 3 standing
in for kiln.render. Not part of `make test`: it needs Mitsuba (see render_references.py).

(a) Unbiased: Mitsuba renders every scene P times at the test's spp (seeds 2.., never the
    references' 0 and 1) and must pass against the committed references, `--repeats` times
    with disjoint seeds.
(b) Sensitive: the same with the scene perturbed, which must fail in the scenes that
    exercise the perturbation:
      diffuse     every diffuse BSDF's reflectance x 1.03 (colors and checkerboards)
      roughness   every alpha, alpha_u, alpha_v x 1.05
      filter      the gaussian reconstruction filter's stddev 0.5 -> 0.55
      emitter     every emitter's radiance / intensity / irradiance / envmap scale x 1.03
Prints one line per scene and case (pass/FAIL, the worst statistic, render time), then a
table of which perturbations each scene detected.

    /tmp/mi-refs/bin/python scripts/check_reference_criterion.py --spp 64 --renders 16
"""

import argparse
import copy
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "render"))
sys.path.insert(0, str(ROOT / "scripts"))

import reference_check  # noqa: E402
import scenes  # noqa: E402
from render_references import import_mitsuba  # noqa: E402

FAMILY_ALPHA = 1e-3
EMITTER_VALUES = {"area": "radiance", "constant": "radiance", "point": "intensity", "spot": "intensity",
                  "directional": "irradiance"}


def scaled(value, factor):
    """A color or float parameter (or a checkerboard of them) times `factor`; None if not scalable."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value * factor
    if isinstance(value, dict) and value.get("type") == "rgb":
        return {**value, "value": [v * factor for v in value["value"]]}
    if isinstance(value, dict) and value.get("type") == "checkerboard":
        return {**value, "color0": scaled(value.get("color0", 0.4), factor),
                "color1": scaled(value.get("color1", 0.2), factor)}
    return None


def perturb_nodes(scene, change):
    """A deep copy of `scene` with `change(node)` applied to every dict; returns (copy, count changed)."""
    scene = copy.deepcopy(scene)
    count = 0

    def walk(node):
        nonlocal count
        if isinstance(node, dict):
            count += bool(change(node))
            for value in node.values():
                walk(value)

    walk(scene)
    return scene, count


def diffuse_reflectance(node):
    if node.get("type") != "diffuse":
        return False
    value = scaled(node.get("reflectance", 0.5), 1.03)
    if value is not None:
        node["reflectance"] = value
    return value is not None


def roughness(node):
    keys = [k for k in ("alpha", "alpha_u", "alpha_v") if k in node]
    if node.get("type") in ("roughconductor", "roughdielectric", "roughplastic") and not keys:
        node["alpha"] = 0.1 * 1.05  # Mitsuba's default roughness
        return True
    for key in keys:
        node[key] *= 1.05
    return bool(keys)


def gaussian_filter(node):
    if node.get("type") != "hdrfilm":
        return False
    rfilter = node.get("rfilter", {"type": "gaussian"})
    if rfilter["type"] != "gaussian":
        return False
    node["rfilter"] = {**rfilter, "stddev": 0.55}
    return True


def emitter_strength(node):
    if node.get("type") == "envmap":
        node["scale"] = node.get("scale", 1.0) * 1.03
        return True
    key = EMITTER_VALUES.get(node.get("type"))
    if key is None or key not in node:
        return False
    node[key] = scaled(node[key], 1.03)
    return True


PERTURBATIONS = {"diffuse": diffuse_reflectance, "roughness": roughness, "filter": gaussian_filter,
                 "emitter": emitter_strength}


def render_and_compare(mi, name, scene_dict, references, metadata, seeds, spp):
    scene = mi.load_dict(scenes.for_mitsuba(scene_dict, mi))
    start = time.time()
    renders = np.stack([np.array(mi.render(scene, spp=spp, seed=seed)) for seed in seeds])
    seconds = time.time() - start
    alpha = FAMILY_ALPHA / len(scenes.SCENES)
    return reference_check.compare(references, renders, metadata["channels"], alpha=alpha), seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--spp", type=int, required=True, help="samples per pixel of each test render")
    parser.add_argument("--renders", type=int, required=True, help="P, the number of test renders")
    parser.add_argument("--repeats", type=int, default=1, help="unperturbed runs with disjoint seeds (a)")
    parser.add_argument("--scene", action="append", choices=sorted(scenes.SCENES), help="default: all")
    parser.add_argument("--perturb", action="append", choices=sorted(PERTURBATIONS), help="default: all")
    parser.add_argument("--no-perturb", action="store_true", help="only (a)")
    parser.add_argument("--references", type=Path, default=reference_check.REFERENCE_DIR, help="their folder")
    args = parser.parse_args()
    mi = import_mitsuba()
    names = args.scene or list(scenes.SCENES)
    perturbations = [] if args.no_perturb else (args.perturb or list(PERTURBATIONS))
    detected = {}
    failures_a, total_seconds = 0, 0.0
    for name in names:
        references, metadata = reference_check.load_references(name, args.references)
        base = scenes.SCENES[name](scenes.DATA_DIR)
        for repeat in range(args.repeats):
            seeds = range(2 + repeat * args.renders, 2 + (repeat + 1) * args.renders)
            result, seconds = render_and_compare(mi, name, base, references, metadata, seeds, args.spp)
            total_seconds += seconds if repeat == 0 else 0.0
            failures_a += not result.passed
            print(f"{name:17s} unperturbed #{repeat} ({seconds:5.1f} s) p_min*N/alpha "
                  f"{result.worst_p / result.threshold_p:9.3g}: {result.report}", flush=True)
        for label in perturbations:
            perturbed, changed = perturb_nodes(base, PERTURBATIONS[label])
            if not changed:
                continue
            result, seconds = render_and_compare(mi, name, perturbed, references, metadata,
                                                 range(2, 2 + args.renders), args.spp)
            detected[name, label] = not result.passed
            print(f"{name:17s} {label:11s}    ({seconds:5.1f} s) p_min*N/alpha "
                  f"{result.worst_p / result.threshold_p:9.3g}: {result.report}", flush=True)
    print(f"\n(a) {failures_a} of {len(names) * args.repeats} unperturbed runs failed; one pass over the scenes "
          f"rendered in {total_seconds:.1f} s (P = {args.renders}, spp = {args.spp})")
    if perturbations:
        print("(b) detected (x), missed (.), not applicable ( ):")
        print(f"{'':17s} " + " ".join(f"{p:>9s}" for p in perturbations))
        for name in names:
            marks = [{True: "x", False: "."}.get(detected.get((name, p)), " ") for p in perturbations]
            print(f"{name:17s} " + " ".join(f"{m:>9s}" for m in marks))


if __name__ == "__main__":
    main()
