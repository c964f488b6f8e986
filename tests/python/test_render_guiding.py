"""The projective integrators' guiding of their indirect visibility term (Mitsuba's `guiding`,
`guiding_rounds`): each kind keeps the term unbiased (central differences of moving
shadows, as test_render_projective.py checks the default), and guiding spends the samples
where the shadows' silhouettes are, so the derivative images are less noisy for the same
number of samples than without it.
"""

from pathlib import Path

import numpy as np
import pytest

import kiln as kl
import kiln.render as kr
from test_render_projective import T, Motion, agrees, key_of, shadow_scene

BLOB = str(Path(__file__).resolve().parents[1] / "render" / "data" / "blob.ply")


def shadow_settings(guiding, sppi, **more):
    return dict({"type": "direct_projective", "sppc": 16, "sppp": 16, "sppi": sppi, "guiding": guiding}, **more)


def occluded_scene(occluder, settings):
    """shadow_scene's, with a smooth mesh among the occluders: the blob (2,562 vertices),
    whose silhouette edges from each shading point are drawn through the edge tree."""
    if occluder != "blob":
        return shadow_scene(occluder, settings)
    scene = shadow_scene("sphere", settings)
    scene["obj"] = {"type": "ply", "filename": BLOB, "to_world": T().translate([0.2, 0.8, 0]).scale(0.3),
                    "bsdf": scene["obj"]["bsdf"]}
    return scene


@pytest.mark.parametrize("guiding, more", [("none", {}), ("grid", {}), ("octree", {"guiding_rounds": 3})])
@pytest.mark.parametrize("occluder", ["sphere", "cube", "blob"])
def test_guided_shadows_match_central_differences(occluder, guiding, more):
    scene = kr.load_dict(occluded_scene(occluder, shadow_settings(guiding, 1024, **more)))
    key = "obj.vertex_positions" if occluder == "blob" else key_of(occluder)
    ok, (derivative, fd) = agrees(Motion(scene, key, spp=0), rtol=0.06)
    assert ok, f"{occluder}, {guiding}: {derivative} against {fd}"


def derivative_images(guiding, seeds=16):
    """The indirect term's forward derivative images of the moving sphere's shadow (64
    samples per pixel) for `seeds` seeds."""
    settings = dict(shadow_settings(guiding, 64), sppc=0, sppp=0)
    motion = Motion(kr.load_dict(shadow_scene("sphere", settings)), "obj.to_world")
    images = []
    for seed in range(seeds):
        t = kl.Float(0.0)
        kl.enable_grad(t)
        motion.place(t)
        image = kr.render(motion.scene, motion.params, spp=0, seed=seed)
        kl.set_grad(t, kl.Float(1.0))
        images.append(np.asarray(kl.forward_to(image), dtype=np.float64))
    return np.array(images)


def test_guiding_reduces_the_variance():
    """Summed over pixels, the variance across seeds of the derivative image: a third of
    unguided sampling's with either kind here (measured 0.37 for the octree, 0.31 for the
    grid); the images' means agree."""
    unguided = derivative_images("none")
    variance = unguided.var(axis=0, ddof=1).sum()
    for guiding in ["grid", "octree"]:
        guided = derivative_images(guiding)
        ratio = guided.var(axis=0, ddof=1).sum() / variance
        assert ratio < 0.6, f"{guiding}: variance {ratio:.2f} of unguided sampling's"
        difference = guided.mean(axis=0).sum() - unguided.mean(axis=0).sum()
        spread = np.hypot(guided.sum(axis=(1, 2, 3)).std(ddof=1), unguided.sum(axis=(1, 2, 3)).std(ddof=1))
        assert abs(difference) < 4 * spread / np.sqrt(len(guided)), (guiding, difference, spread)
