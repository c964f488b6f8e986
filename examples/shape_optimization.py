"""Recover a shape from photos (as Mitsuba's shape_optimization tutorial): a lumpy blob under
an environment map is photographed from --views directions; the optimization starts from a
sphere and moves its vertices until its renders match the photos. The vertices move through
the "large steps" parameterization (Nicolet et al. 2021, kr.ad.LargeSteps: u = (I + λL) x,
so a gradient step on u moves smooth regions of x, not single vertices), with Adam's
uniform variant, one step per view, and `direct_projective` (its primary visibility term:
silhouettes carry most of the shape; the indirect term is off, as in the tutorial).

Writes into --out: before_after.png (each view's photo above, the start in the middle, the
result below) and prints the shape error at the start and the end: the mean distance of
each mesh's vertices to the other's (a symmetric Chamfer distance, scene units).

    python examples/shape_optimization.py [--iterations 40] [--views 6] [--size 64] [--spp 16]
                                          [--out build/shape_optimization]
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
LAMBDA = 25.0  # the large steps' smoothing weight, as in the tutorial


def sky(height=32, width=64):
    """An environment map: a blue-to-white sky over a dark ground and a bright sun."""
    theta = (np.arange(height) + 0.5) / height * math.pi
    phi = (np.arange(width) + 0.5) / width * 2 * math.pi
    up = np.cos(theta)[:, None, None]
    image = np.where(up > 0, 0.4 + 0.6 * up * np.array([0.5, 0.7, 1.0]), 0.15 * np.ones(3))
    image = np.broadcast_to(image, (height, width, 3)).copy()
    sun = np.exp(-((theta[:, None] - 0.6) ** 2 + (phi[None, :] - 1.0) ** 2) / 0.02)
    return (image + 20 * sun[:, :, None]).astype(np.float32)


def sensors(count, size):
    """`count` cameras at distance 5 spread over the sphere (a Fibonacci spiral), as in the tutorial."""
    golden = (1 + 5 ** 0.5) / 2
    out = []
    for i in range(count):
        theta, phi = 2 * math.pi * i / golden, math.acos(1 - 2 * (i + 0.5) / count)
        origin = [5 * math.cos(theta) * math.sin(phi), 5 * math.sin(theta) * math.sin(phi), 5 * math.cos(phi)]
        out.append(kr.load_dict({
            "type": "perspective", "fov": 45, "to_world": T().look_at(origin, [0, 0, 0], [0, 1, 0]),
            "film": {"type": "hdrfilm", "width": size, "height": size, "rfilter": {"type": "gaussian"},
                     "sample_border": True}}))
    return out


def scene(mesh_path):
    return kr.load_dict({
        "type": "scene", "integrator": {"type": "direct_projective", "sppi": 0},
        "emitter": {"type": "envmap", "bitmap": kr.Bitmap(sky())},
        "shape": {"type": "ply", "filename": str(mesh_path), "bsdf": {"type": "diffuse"}},
    })


def chamfer(a, b):
    """The symmetric mean nearest-vertex distance between point sets a and b (n, 3), (m, 3)."""
    distances = np.sqrt(((a[:, None, :] - b[None, :, :]) ** 2).sum(axis=2))
    return 0.5 * (distances.min(axis=1).mean() + distances.min(axis=0).mean())


class ShapeOptimization:
    """The photos of the target and the source sphere with its large-steps optimizer."""

    def __init__(self, folder, views, size, reference_spp, lr=0.1):
        points, faces = blob_mesh.icosphere(4)
        self.target = blob_mesh.lumpy(points, seed=4, height=(0.3, 0.6))
        blob_mesh.write_ply(Path(folder) / "target.ply", self.target, faces)
        blob_mesh.write_ply(Path(folder) / "sphere.ply", 1.1 * points, faces)
        self.sensors = sensors(views, size)
        target = scene(Path(folder) / "target.ply")
        self.photos = [kr.render(target, sensor=s, spp=reference_spp, seed=i) for i, s in enumerate(self.sensors)]
        self.scene = scene(Path(folder) / "sphere.ply")
        self.params = kr.traverse(self.scene)
        self.steps = kr.ad.LargeSteps(self.params["shape.vertex_positions"], self.params["shape.faces"], LAMBDA)
        self.opt = kr.ad.Adam(lr=lr, uniform=True)
        self.opt["u"] = self.steps.to_differential(self.params["shape.vertex_positions"])

    def vertices(self):
        return np.asarray(self.params["shape.vertex_positions"], dtype=np.float64).reshape(-1, 3)

    def shape_error(self):
        return chamfer(self.vertices(), self.target)

    def iteration(self, it, spp):
        """One pass over the views, an L1 loss and a step per view; the mean loss."""
        total = 0.0
        for index, sensor in enumerate(self.sensors):
            self.params["shape.vertex_positions"] = self.steps.from_differential(self.opt["u"])
            self.params.update()
            image = kr.render(self.scene, self.params, sensor=sensor, seed=it * len(self.sensors) + index, spp=spp)
            loss = kl.mean(kl.abs(image - self.photos[index]))
            kl.backward(loss)
            self.opt.step()
            total += float(np.asarray(loss).ravel()[0])
        self.params["shape.vertex_positions"] = self.steps.from_differential(self.opt["u"])
        self.params.update()
        return total / len(self.sensors)

    def images(self, spp=64):
        with kl.suspend_grad():
            return [np.asarray(kr.render(self.scene, sensor=s, spp=spp, seed=1)) for s in self.sensors]


def run(iterations, views=6, size=64, spp=16, reference_spp=128, folder=None, progress=False):
    """Runs the optimization; returns (problem, losses, errors, images before and after)."""
    with tempfile.TemporaryDirectory() as scratch:
        problem = ShapeOptimization(folder or scratch, views, size, reference_spp)
        before, losses, errors = problem.images(), [], [problem.shape_error()]
        bar = tqdm.trange(iterations, disable=not progress, desc="shape")
        for it in bar:
            losses.append(problem.iteration(it, spp))
            errors.append(problem.shape_error())
            bar.set_postfix(loss=f"{losses[-1]:.4f}", shape_error=f"{errors[-1]:.4f}")
        return problem, losses, errors, before, problem.images()


def positive(text):
    """An argparse type: an integer of at least 1."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--iterations", type=positive, default=40)
    parser.add_argument("--views", type=positive, default=6)
    parser.add_argument("--size", type=positive, default=64)
    parser.add_argument("--spp", type=positive, default=16)
    parser.add_argument("--out", default="build/shape_optimization")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    problem, losses, errors, before, after = run(args.iterations, args.views, args.size, args.spp, folder=out,
                                                 progress=True)
    rows = [np.concatenate([np.asarray(p) for p in problem.photos], axis=1), np.concatenate(before, axis=1),
            np.concatenate(after, axis=1)]
    picture = np.kron(np.concatenate(rows, axis=0), np.ones((2, 2, 1)))
    kr.Bitmap(picture.astype(np.float32)).convert(srgb_gamma=True).write(str(out / "before_after.png"))
    print(f"shape error: {errors[0]:.4f} -> {errors[-1]:.4f}; loss {losses[0]:.4f} -> {losses[-1]:.4f}; "
          f"wrote {out / 'before_after.png'}")


if __name__ == "__main__":
    main()
