"""Recover an object's pose from one photo (as Mitsuba's object_pose_estimation tutorial): a
lumpy, bunny-sized blob in front of a wall, lit by a small spherical lamp, is rendered at its
true pose as the reference; the optimization starts from a pose shifted by (0.1, -0.25) and
turned by 25 degrees and recovers the translation (2 numbers) and the angle (1) from the
image difference alone. Almost all of that information sits on the blob's silhouette and its
shadow on the wall, so the derivatives come from `direct_projective`'s visibility terms (the
interior terms see only the shading inside the silhouette).

Writes into --out: before_after.png (the reference, the start and the result side by side,
with the image differences below) and prints the pose error at the start and the end.

    python examples/pose_estimation.py [--iterations 100] [--spp 16] [--size 64] [--integrator direct_projective]
                                       [--out build/pose_estimation]
"""

import argparse
import math
import sys
import tempfile
from pathlib import Path

import numpy as np
import tqdm

import kiln as kl
import kiln.render as kr

sys.path.insert(0, str(Path(__file__).resolve().parent / "scenes"))

import blob_mesh  # noqa: E402

T = kr.Transform4f
TRUE_POSE = (0.0, 0.0, 0.0)  # translation x, y and angle (units of 100 degrees about y)
START_POSE = (0.1, -0.25, 0.25)


def write_blob(path):
    """The blob (bunny-sized: about 0.4 across) as a PLY file."""
    points, faces = blob_mesh.icosphere(3)
    blob_mesh.write_ply(path, 0.17 * blob_mesh.lumpy(points, seed=4), faces)


def scene_dict(blob_path, size, integrator="direct_projective"):
    return {
        "type": "scene",
        "integrator": {"type": integrator},
        "sensor": {"type": "perspective", "fov": 60, "to_world": T().look_at([0, 0, 2], [0, 0, 0], [0, 1, 0]),
                   "film": {"type": "hdrfilm", "width": size, "height": size, "rfilter": {"type": "gaussian"},
                            "sample_border": True}},
        "wall": {"type": "rectangle", "to_world": T().translate([0, 0, -2]).scale(2.0),
                 "bsdf": {"type": "diffuse", "reflectance": {"type": "rgb", "value": [0.5, 0.5, 0.5]}}},
        "blob": {"type": "ply", "filename": str(blob_path),
                 "bsdf": {"type": "diffuse", "reflectance": {"type": "rgb", "value": [0.3, 0.3, 0.75]}}},
        "light": {"type": "sphere", "center": [2.5, 2.5, 7.0], "radius": 0.25,
                  "emitter": {"type": "area", "radiance": {"type": "rgb", "value": [1e3, 1e3, 1e3]}}},
    }


class PoseEstimation:
    """The scene, the reference image and the optimizer over (translation, angle)."""

    def __init__(self, folder, size=64, reference_spp=1024, lr=0.025, integrator="direct_projective"):
        blob = Path(folder) / "blob.ply"
        write_blob(blob)
        self.scene = kr.load_dict(scene_dict(blob, size, integrator))
        self.params = kr.traverse(self.scene)
        self.initial = kl.unravel(kr.Point3f, self.params["blob.vertex_positions"])
        self.place(*TRUE_POSE)
        self.reference = kr.render(self.scene, seed=0, spp=reference_spp)
        self.opt = kr.ad.Adam(lr=lr)
        self.opt["trans"] = kr.Point2f(*START_POSE[:2])
        self.opt["angle"] = kl.Float(START_POSE[2])

    def place(self, x, y, angle):
        """Moves the blob to translation (x, y) and `angle` (x 100 degrees about y); the
        arguments may carry derivatives."""
        trafo = T().translate(kl.Array3f(x, y, kl.Float(0.0))).rotate([0, 1, 0], angle * 100.0)
        self.params["blob.vertex_positions"] = kl.ravel(trafo @ self.initial)
        self.params.update()

    def pose(self):
        trans, angle = self.opt["trans"], self.opt["angle"]
        return (float(np.asarray(trans.x)[0]), float(np.asarray(trans.y)[0]), float(np.asarray(angle)[0]))

    def pose_error(self):
        """Translation error (scene units) and angle error (degrees) against the truth."""
        x, y, angle = self.pose()
        return math.hypot(x - TRUE_POSE[0], y - TRUE_POSE[1]), abs(angle - TRUE_POSE[2]) * 100.0

    def step(self, iteration, spp):
        """One iteration: the pose clamped, rendered with derivatives, the L2 loss, Adam."""
        self.opt["trans"] = kl.clip(self.opt["trans"], -0.5, 0.5)
        self.opt["angle"] = kl.clip(self.opt["angle"], -0.5, 0.5)
        self.place(self.opt["trans"].x, self.opt["trans"].y, self.opt["angle"])
        image = kr.render(self.scene, self.params, seed=iteration, spp=spp)
        loss = kl.sum(kl.square(image - self.reference)) / len(image.array)
        kl.backward(loss)
        self.opt.step()
        return float(np.asarray(loss).ravel()[0])

    def image(self, spp=256):
        with kl.suspend_grad():
            self.place(*(kl.Float(v) for v in self.pose()))
            return np.asarray(kr.render(self.scene, seed=1, spp=spp))


def run(iterations, spp=16, size=64, reference_spp=1024, folder=None, progress=False, integrator="direct_projective"):
    """Runs the optimization; returns (problem, losses, images before and after)."""
    with tempfile.TemporaryDirectory() as scratch:
        problem = PoseEstimation(folder or scratch, size, reference_spp, integrator=integrator)
        before = problem.image()
        losses = []
        bar = tqdm.trange(iterations, disable=not progress, desc="pose")
        for it in bar:
            losses.append(problem.step(it, spp))
            translation, angle = problem.pose_error()
            bar.set_postfix(loss=f"{losses[-1]:.2e}", translation=f"{translation:.3f}", angle=f"{angle:.1f}deg")
        return problem, losses, before, problem.image()


def positive(text):
    """An argparse type: an integer of at least 1."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--iterations", type=positive, default=100)
    parser.add_argument("--spp", type=positive, default=16)
    parser.add_argument("--size", type=positive, default=64)
    parser.add_argument("--out", default="build/pose_estimation")
    parser.add_argument("--integrator", default="direct_projective",
                        help="direct_projective (default) or prb_projective; `direct` shows what the pose gets "
                             "without the visibility terms")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    problem, losses, before, after = run(args.iterations, args.spp, args.size, folder=out, progress=True,
                                         integrator=args.integrator)
    reference = np.asarray(problem.reference)
    tiles = [reference, before, after, np.zeros_like(reference), np.abs(before - reference),
             np.abs(after - reference)]
    row = lambda images: np.concatenate(images, axis=1)  # noqa: E731
    picture = np.kron(np.concatenate([row(tiles[:3]), row(tiles[3:])], axis=0), np.ones((3, 3, 1)))
    kr.Bitmap(picture.astype(np.float32)).convert(srgb_gamma=True).write(str(out / "before_after.png"))
    start = math.hypot(START_POSE[0], START_POSE[1]), START_POSE[2] * 100.0
    translation, angle = problem.pose_error()
    print(f"pose error: translation {start[0]:.3f} -> {translation:.3f}, angle {start[1]:.1f} -> {angle:.1f} degrees; "
          f"loss {losses[0]:.3e} -> {losses[-1]:.3e}; wrote {out / 'before_after.png'}")


if __name__ == "__main__":
    main()
