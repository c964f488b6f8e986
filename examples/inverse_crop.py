"""Story 1 end to end: recover a vase's albedo texture from photos, rendering a random film size
and crop window every iteration, without compiling a kernel after the first two iterations.

The references are `--views` photos of the vase with its true texture (vase_scene.py), at
`--size` pixels and `--reference-spp` samples. Each iteration picks a view, a film size
(a random scale of --size) and a crop window in it, renders that crop at `--spp` samples
with `prb` and the current texture, compares it with the same crop of the reference (the
reference averaged down to the film size: with a box pixel filter that is what a smaller
film would show), and takes an Adam step on the texels (clamped to [0, 1]; the learning rate falls geometrically to a tenth). The bar shows the
loss, the kernels compiled so far and the peak memory of the iteration.

Writes into --out: the recovered texture (texture.exr, texture.png), and side_by_side.png:
the true texture, the initial guess and the recovered texture above; a reference view and
the same view rendered with the recovered texture below. Prints the texture's PSNR against
the truth, of the initial guess and at the end.

    python examples/inverse_crop.py [--iterations 300] [--size 128] [--spp 16] [--lr 0.02] [--out build/inverse_crop] [--device cuda]
"""

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np
import tqdm

import kiln as kl
import kiln.render as kr

sys.path.insert(0, str(Path(__file__).resolve().parent / "scenes"))

import vase_scene  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
WARM_UP = 2  # iterations that may compile: the first, and the one in which varying values become parameters
INITIAL_ALBEDO = 0.5
FINAL_LR_FRACTION = 0.1  # the learning rate of the last iteration, relative to --lr


def area_weights(source, target):
    """(target, source) matrix whose row i averages the source pixels under target pixel i
    (weights are overlap lengths): the box-filtered film of `target` pixels from one of `source`."""
    edges = np.linspace(0, source, target + 1)
    weights = np.zeros((target, source))
    for i in range(target):
        lo, hi = edges[i], edges[i + 1]
        for j in range(int(math.floor(lo)), min(int(math.ceil(hi)), source)):
            weights[i, j] = min(hi, j + 1) - max(lo, j)
    return weights / weights.sum(axis=1, keepdims=True)


def downsample(image, size):
    """An (n, n, 3) image averaged down to (size, size, 3)."""
    w = area_weights(image.shape[0], size)
    return np.einsum("ij,jkc,lk->ilc", w, image, w, optimize=True)


def texture_psnr(texture, truth):
    mse = float(np.mean((np.clip(texture, 0, 1) - truth) ** 2))
    return -10 * math.log10(max(mse, 1e-12))


def iterations_plan(count, size, views, seed=7):
    """Per iteration: (view, film size, crop offset, crop size), the same on every run."""
    rng = np.random.default_rng(seed)
    plan = []
    for _ in range(count):
        film = int(rng.integers(size // 2, size + 1))
        crop = (int(rng.integers(film // 3, film * 3 // 4 + 1)), int(rng.integers(film // 3, film * 3 // 4 + 1)))
        offset = (int(rng.integers(0, film - crop[0] + 1)), int(rng.integers(0, film - crop[1] + 1)))
        plan.append((int(rng.integers(views)), film, offset, crop))
    return plan


class InverseCrop:
    """The scene, its references and the optimizer; step() runs one iteration of the plan."""

    def __init__(self, folder, size, views, reference_spp, lr):
        self.truth = vase_scene.true_texture()
        vase_scene.write_assets(folder, self.truth)
        self.size, self.views = size, views
        self.scene = kr.load_dict(vase_scene.vase_scene(folder, size, spp=reference_spp))
        self.params = kr.traverse(self.scene)
        self.references = [self.render_view(k, spp=reference_spp, seed=10_000 + k) for k in range(views)]
        initial = np.full(self.truth.size, INITIAL_ALBEDO, dtype=np.float32)
        self.params[vase_scene.TEXTURE_KEY] = kl.Float(initial)
        self.params.update()
        self.opt = kr.Adam(lr=lr)
        self.opt[vase_scene.TEXTURE_KEY] = self.params[vase_scene.TEXTURE_KEY]
        self.params.update(self.opt)

    def set_film(self, view, film, offset, crop):
        self.params["sensor.to_world"] = kr.Transform4f(vase_scene.view(view, self.views))
        self.params["sensor.film.size"] = (film, film)
        self.params["sensor.film.crop_offset"] = offset
        self.params["sensor.film.crop_size"] = crop
        self.params.update()

    def render_view(self, view, spp, seed):
        """The whole film of view `view` at --size (no derivatives)."""
        self.set_film(view, self.size, (0, 0), (self.size, self.size))
        with kl.suspend_grad():
            return np.asarray(kr.render(self.scene, spp=spp, seed=seed), dtype=np.float64)

    def step(self, iteration, view, film, offset, crop, spp):
        """One iteration: render the crop, the loss against the reference's crop, backward, Adam."""
        self.set_film(view, film, offset, crop)
        target = downsample(self.references[view], film)[offset[1]:offset[1] + crop[1], offset[0]:offset[0] + crop[0]]
        image = kr.render(self.scene, self.params, spp=spp, seed=iteration)
        loss = kl.mean(kl.square(image - kl.TensorXf(np.ascontiguousarray(target, dtype=np.float32))))
        kl.backward(loss)
        self.opt.step()
        key = vase_scene.TEXTURE_KEY
        self.opt[key] = kl.clip(self.opt[key], 0.0, 1.0)
        self.params.update(self.opt)
        return float(np.asarray(loss))

    def texture(self):
        return np.asarray(self.params[vase_scene.TEXTURE_KEY]).reshape(self.truth.shape)


def kernels_so_far():
    """Kernels not found in memory so far: compiled here or loaded from the disk cache."""
    stats = kl.cache_stats()
    return stats.compiles + stats.disk_hits


def run(iterations, size=128, views=8, spp=16, reference_spp=256, lr=0.02, folder=None, progress=True):
    """Runs the optimization; returns (InverseCrop, losses, kernels compiled per iteration,
    compile reasons after the first iteration)."""
    folder = Path(folder or ROOT / "build" / "inverse_crop" / "assets")
    problem = InverseCrop(folder, size, views, reference_spp, lr)
    losses, compiled, reasons = [], [], []
    bar = tqdm.tqdm(iterations_plan(iterations, size, views), desc="inverse_crop", unit="it", disable=not progress)
    for i, (view, film, offset, crop) in enumerate(bar):
        problem.opt.lr = lr * FINAL_LR_FRACTION ** (i / iterations)  # decays geometrically: less noise at the end
        kl.reset_peak_memory()
        kl.kernel_history(clear=True)
        before = kernels_so_far()
        losses.append(problem.step(i, view, film, offset, crop, spp))
        compiled.append(kernels_so_far() - before)
        if i > 0:
            reasons += [f"iteration {i + 1}: {entry['reason']}" for entry in kl.kernel_history()
                        if entry["source"] in ("compiled", "generalized")]
        bar.set_postfix(loss=f"{losses[-1]:.4f}", compiled=kernels_so_far(),
                        peak_MB=f"{kl.memory_stats().peak_bytes / 2**20:.0f}")
    return problem, losses, compiled, reasons


def write_results(problem, out, spp):
    out.mkdir(parents=True, exist_ok=True)
    texture = problem.texture()
    kr.write_image(kl.TensorXf(np.ascontiguousarray(texture)), str(out / "texture.exr"))
    kr.write_image(kl.TensorXf(np.ascontiguousarray(texture)), str(out / "texture.png"))
    initial = np.full_like(problem.truth, INITIAL_ALBEDO)
    textures = np.concatenate([problem.truth, initial, texture], axis=1).repeat(2, 0).repeat(2, 1)
    view = 1
    rendered = problem.render_view(view, spp=spp, seed=99)
    views = np.concatenate([problem.references[view], rendered], axis=1).repeat(2, 0).repeat(2, 1)
    width = max(textures.shape[1], views.shape[1])
    pad = lambda image: np.pad(image, ((0, 0), (0, width - image.shape[1]), (0, 0)))  # noqa: E731
    side = np.concatenate([pad(textures), pad(views)], axis=0)
    kr.write_image(kl.TensorXf(np.ascontiguousarray(side, dtype=np.float32)), str(out / "side_by_side.png"))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=300)
    parser.add_argument("--size", type=int, default=128, help="the references' film size (pixels per side)")
    parser.add_argument("--views", type=int, default=8)
    parser.add_argument("--spp", type=int, default=16)
    parser.add_argument("--reference-spp", type=int, default=256)
    parser.add_argument("--lr", type=float, default=0.02)
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "inverse_crop")
    parser.add_argument("--device", help="cpu or cuda (default: KILN_DEVICE, else the CPU; the Kiln BVH traces rays "
                                         "on a GPU)")
    args = parser.parse_args()
    if args.device:
        try:
            kl.set_device(args.device)
        except ValueError as error:
            parser.error(str(error))
    if args.iterations < 1 or args.size < 16 or args.views < 1 or args.spp < 1 or args.reference_spp < 1:
        parser.error("--iterations, --views, --spp and --reference-spp must be positive and --size at least 16")
    start = time.perf_counter()
    problem, losses, compiled, reasons = run(args.iterations, args.size, args.views, args.spp, args.reference_spp,
                                             args.lr, args.out / "assets")
    write_results(problem, args.out, args.reference_spp)
    initial = texture_psnr(np.full_like(problem.truth, INITIAL_ALBEDO), problem.truth)
    late = sum(compiled[WARM_UP:])
    print(f"{args.iterations} iterations in {time.perf_counter() - start:.1f} s: loss {np.mean(losses[:10]):.4f} -> "
          f"{np.mean(losses[-10:]):.4f} (means of the first and last 10); kernels per iteration {compiled[:4]}..., "
          f"{late} after iteration {WARM_UP}")
    print("why kernels were compiled after the first iteration:", *reasons or ["-"], sep="\n    ")
    print(f"texture PSNR against the truth: {initial:.2f} dB initially, {texture_psnr(problem.texture(), problem.truth):.2f}"
          f" dB recovered; wrote {args.out / 'texture.png'} and {args.out / 'side_by_side.png'}")
    if late:
        sys.exit(f"story 1 regressed: {late} kernels compiled after iteration {WARM_UP}")


if __name__ == "__main__":
    main()
