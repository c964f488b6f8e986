"""Story 2 on the renderer: per-ray, per-vertex records out of kr.render *and* its backward
pass become a training set after every iteration, without a copy, and a small network
learns a radiance cache from them.

The loop recovers the Cornell box's red wall with `prb`: each iteration renders with a
kr.PathRecorder, takes a loss against a reference, runs backward and an Adam step. While
rendering, every path vertex is recorded (pixel, sample, depth, position, normal, the
directions in and out, throughput); during backward, prb's replay records the same vertices
with the radiance leaving each one and the adjoint radiance arriving there. The records
leave as NumPy views of the recorder's memory (no copy); the cache's features are taken
from them, and a kl.nn MLP (a torch one with --torch) maps (position, normal, direction)
to the radiance leaving the vertex, a few Adam steps per iteration. At the end it prints the cache's error on fresh
records against predicting the mean, which kernels the render and the backward pass ran
(kl.kernel_history(), with the scene parameters each kernel reads by their labels), and
what the last backward pass visited (kl.last_traversal()).

    python examples/render_records_dataset.py [--iterations 12] [--size 48] [--spp 4] [--torch] [--device cuda]

With --device cuda everything runs on the GPU (the scene's ray tracer is then the Kiln BVH),
and with --torch the records reach PyTorch as CUDA tensors over the recorder's memory
(records.torch(), DLPack), still without a copy.
"""

import argparse
import re
import sys
from pathlib import Path

import numpy as np

import kiln as kl
import kiln.render as kr

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "render"))

import scenes  # noqa: E402

KEY = "left.bsdf.reflectance.value"
INPUTS = ("p", "n", "wi")  # what the cache sees of a vertex


def features(records):
    """(n, 9) inputs and (n, 3) targets (log radiance) from the backward records' views."""
    views = records.numpy()
    hit = views["depth"] < 3
    inputs = np.concatenate([views[name][hit] for name in INPUTS], axis=1)
    return inputs, np.log1p(views["radiance"][hit])


class KilnCache:
    """A positional encoding and an MLP of kl.nn, trained with kl.nn.Adam."""

    features = staticmethod(features)

    def __init__(self):
        self.encoding = kl.nn.PositionalEncoding(4)
        self.mlp = kl.nn.Sequential(kl.nn.Linear(self.encoding.out_features(9), 64, seed=1), kl.nn.ReLU(),
                                    kl.nn.Linear(64, 64, seed=2), kl.nn.ReLU(), kl.nn.Linear(64, 3, seed=3))
        self.opt = kl.nn.Adam(self.mlp.parameters(), lr=3e-3)

    def predict(self, inputs):
        return self.mlp(self.encoding(kl.TensorXf(np.ascontiguousarray(inputs, dtype=np.float32))))

    def step(self, inputs, targets):
        error = self.predict(inputs) - kl.TensorXf(np.ascontiguousarray(targets, dtype=np.float32))
        loss = kl.mean(kl.square(error))
        self.opt.zero_grad()
        kl.backward(loss)
        self.opt.step()
        return float(loss.numpy())

    def error(self, inputs, targets):
        with kl.suspend_grad():
            return float(np.mean((self.predict(inputs).numpy() - targets) ** 2))


class TorchCache:
    """The same cache in PyTorch, fed tensors over the records' memory (DLPack)."""

    def __init__(self):
        import torch
        torch.manual_seed(1)
        self.torch = torch
        self.mlp = torch.nn.Sequential(torch.nn.Linear(9, 64), torch.nn.ReLU(), torch.nn.Linear(64, 64),
                                       torch.nn.ReLU(), torch.nn.Linear(64, 3))
        self.opt = torch.optim.Adam(self.mlp.parameters(), lr=3e-3)

    def features(self, records):
        """features() over torch tensors of the records' memory, on the records' device."""
        views = records.torch()
        hit = views["depth"] < 3
        inputs = self.torch.cat([views[name][hit] for name in INPUTS], dim=1)
        self.mlp.to(inputs.device)
        return inputs, self.torch.log1p(views["radiance"][hit])

    def step(self, inputs, targets):
        loss = ((self.mlp(inputs) - targets) ** 2).mean()
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return float(loss)

    def error(self, inputs, targets):
        with self.torch.no_grad():
            return float(((self.mlp(inputs) - targets) ** 2).mean())


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=12)
    parser.add_argument("--size", type=int, default=48)
    parser.add_argument("--spp", type=int, default=4)
    parser.add_argument("--torch", action="store_true", help="train the cache with PyTorch instead of kl.nn")
    parser.add_argument("--device", help="cpu or cuda (default: KILN_DEVICE, else the CPU)")
    args = parser.parse_args()
    if args.device:
        try:
            kl.set_device(args.device)
        except ValueError as error:
            parser.error(str(error))
    if args.iterations < 1 or args.size < 8 or args.spp < 1:
        parser.error("--iterations and --spp must be positive and --size at least 8")

    description = scenes.cornell_box(scenes.DATA_DIR)
    description["integrator"] = {"type": "prb", "max_depth": 4}
    description["sensor"]["film"].update(width=args.size, height=args.size)
    scene = kr.load_dict(description)
    params = kr.traverse(scene)
    reference = kr.render(scene, spp=64, seed=1000)
    params[KEY] = kl.Array3f(0.4, 0.4, 0.4)
    params.update()
    opt = kr.Adam(lr=0.05)
    opt[KEY] = params[KEY]
    params.update(opt)

    recorder = kr.PathRecorder(4 * args.size * args.size * args.spp)
    cache = TorchCache() if args.torch else KilnCache()
    vertices = 0
    for it in range(args.iterations):
        recorder.clear()
        kl.kernel_history(clear=True)
        image = kr.render(scene, params, spp=args.spp, seed=it, recorder=recorder)
        loss = kl.mean(kl.square(image - reference))
        kl.eval(loss)
        launches = {"render": kl.kernel_history(clear=True)}
        kl.backward(loss)
        launches["backward"] = kl.kernel_history(clear=True)
        opt.step()
        opt[KEY] = kl.clip(opt[KEY], 0.0, 1.0)
        params.update(opt)
        inputs, targets = cache.features(recorder.backward)
        vertices += len(inputs)
        order = np.random.default_rng(it).permutation(len(inputs))
        cache_loss = [cache.step(inputs[batch], targets[batch]) for batch in np.array_split(order, 8)][-1]
        print(f"iteration {it + 1:2d}: image loss {float(loss.numpy()):.5f}, {recorder.render.count()} render and "
              f"{recorder.backward.count()} backward records, cache loss {cache_loss:.4f}, "
              f"{KEY} = {np.asarray(params[KEY]).ravel().round(3)}")

    recorder.clear()
    fresh = kr.render(scene, params, spp=args.spp, seed=10_000, recorder=recorder)
    kl.backward(kl.mean(kl.square(fresh - reference)))
    inputs, targets = cache.features(recorder.backward)
    baseline = float(((targets - targets.mean(axis=0)) ** 2).mean())
    print(f"\nradiance cache ({'torch' if args.torch else 'kl.nn'}) trained on {vertices} vertices: mean squared "
          f"error on {len(inputs)} fresh ones {cache.error(inputs, targets):.4f}, predicting the mean {baseline:.4f}")
    views = recorder.backward.numpy()
    print(f"records are views of the recorder's memory: "
          f"{np.shares_memory(views['p'], recorder.backward.numpy()['p'])}")
    print("kernels of the last iteration (the scene parameters each reads, by their labels):")
    for stage, stage_launches in launches.items():
        for launch in stage_launches:
            labels = sorted(set(re.findall(r"label `([^`]+)`", launch["ir"])))
            shown = ", ".join(labels[:3]) + (f" and {len(labels) - 3} more" if len(labels) > 3 else "")
            print(f"  {stage:8s} {launch['source']:9s} size {launch['size']:6d}, {launch['ops']:5d} ops, "
                  f"{launch['side_effects']:2d} side effects{': ' + shown if labels else ''}")
    traversal = kl.last_traversal()
    print(f"the last backward pass visited {traversal.nodes} nodes and {traversal.edges} edges of the AD graph")


if __name__ == "__main__":
    main()
