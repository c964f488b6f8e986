"""A tiny NeRF trained with Kiln on a scene it renders itself.

The scene: three colored spheres (emissive-looking Lambert shading, black background)
rendered analytically with NumPy into 32x32 images from cameras on a circle around the
origin. The model: positional encoding -> MLP (3 hidden layers of 64) -> (rgb, sigma),
composited by volume rendering along jittered samples of each ray, inside
kl.chunked_map over rays (so the training step's memory is bounded by the chunk, and
reverse mode recomputes each chunk). Trained with kl.nn.Adam on random ray batches; at the
end renders a held-out view, prints its PSNR and writes nerf_tiny.png (ground truth |
prediction).

    python examples/nerf_tiny.py [--steps 800] [--lr 3e-3] [--out nerf_tiny.png]
"""

import argparse
import math
import struct
import time
import zlib

import numpy as np
import tqdm

import kiln as kl

RES = 32
FOCAL = 1.2 * RES
RADIUS = 4.0
NEAR, FAR = 2.0, 6.0
SPHERES = [  # center, radius, color
    (np.array([0.0, 0.0, 0.0]), 0.8, np.array([0.9, 0.2, 0.2])),
    (np.array([0.9, 0.3, 0.6]), 0.45, np.array([0.2, 0.8, 0.3])),
    (np.array([-0.7, -0.2, 0.8]), 0.5, np.array([0.2, 0.3, 0.9])),
]
LIGHT = np.array([0.5, 0.8, 0.3]) / np.linalg.norm([0.5, 0.8, 0.3])


# ----------------------------------------------------------------------------- the scene


def camera_rays(angle, height=0.6):
    """Origins and unit directions (RES*RES, 3) of a pinhole camera looking at the origin."""
    eye = np.array([RADIUS * math.cos(angle), height, RADIUS * math.sin(angle)])
    forward = -eye / np.linalg.norm(eye)
    right = np.cross(forward, [0.0, 1.0, 0.0])
    right /= np.linalg.norm(right)
    up = np.cross(right, forward)
    j, i = np.meshgrid(np.arange(RES), np.arange(RES))
    x = (j + 0.5 - RES / 2) / FOCAL
    y = -(i + 0.5 - RES / 2) / FOCAL
    d = forward + x[..., None] * right + y[..., None] * up
    d = d.reshape(-1, 3)
    d /= np.linalg.norm(d, axis=1, keepdims=True)
    return np.broadcast_to(eye, d.shape).astype(np.float32), d.astype(np.float32)


def render_truth(origins, dirs):
    """Analytic ray-sphere intersection with Lambert + ambient shading."""
    best = np.full(len(origins), np.inf)
    color = np.zeros((len(origins), 3))
    for center, radius, albedo in SPHERES:
        oc = origins - center
        b = (oc * dirs).sum(1)
        c = (oc * oc).sum(1) - radius ** 2
        disc = b * b - c
        hit = disc > 0
        t = np.where(hit, -b - np.sqrt(np.maximum(disc, 0)), np.inf)
        closer = hit & (t > 0) & (t < best)
        p = origins + np.where(closer, t, 0)[:, None] * dirs
        n = (p - center) / radius
        shade = 0.25 + 0.75 * np.clip((np.nan_to_num(n) * LIGHT).sum(1), 0, 1)
        color[closer] = albedo * shade[closer, None]
        best = np.where(closer, t, best)
    return color.astype(np.float32)


# ----------------------------------------------------------------------------- the model


def make_model(seed, width=64, n_freq=5):
    pe = kl.nn.PositionalEncoding(n_freq)
    mlp = kl.nn.Sequential(
        kl.nn.Linear(pe.out_features(3), width, seed=seed), kl.nn.ReLU(),
        kl.nn.Linear(width, width, seed=seed + 1), kl.nn.ReLU(),
        kl.nn.Linear(width, width, seed=seed + 2), kl.nn.ReLU(),
        kl.nn.Linear(width, 4, seed=seed + 3))
    return pe, mlp


def make_render(pe, mlp, n_samples, jitter=True):
    step = (FAR - NEAR) / n_samples

    def render(origins, dirs, index, seed):
        r = len(origins)
        if jitter:
            rng = kl.PCG32(r, kl.UInt64(seed), kl.cast(kl.UInt64, index))
            u = kl.TensorXf(rng.next_float32(), [r, 1])
        else:
            u = kl.TensorXf(kl.Float(0.5), [r, 1])
        base = kl.TensorXf(kl.arange(kl.Float, n_samples), [1, n_samples])
        t = (base + u) * step + NEAR
        pts = origins.reshape([r, 1, 3]) + t.reshape([r, n_samples, 1]) * dirs.reshape([r, 1, 3])
        raw = mlp(pe(pts * (1.0 / 1.5)))
        # exp(raw) (clamped) rather than relu(raw): on a scene with a black background a relu
        # density is driven to zero everywhere and then has no gradient to recover.
        sigma = kl.exp(kl.min(raw[..., 3], kl.TensorXf(kl.Float(6.0), [])))
        rgb = 1.0 / (1.0 + kl.exp(-raw[..., 0:3]))
        delta = kl.concatenate([t[:, 1:] - t[:, :-1], kl.TensorXf(kl.Float(step), [r, 1])], 1)
        sd = sigma * delta
        weights = kl.exp(-kl.cumsum(sd, exclusive=True)) * (1.0 - kl.exp(-sd))
        return (weights.reshape([r, n_samples, 1]) * rgb).sum(1)

    return render


# ----------------------------------------------------------------------------- PNG output


def write_png(path, image):
    """image: (h, w, 3) floats in [0, 1]; an 8-bit RGB PNG written with zlib + struct."""
    data = (np.clip(image, 0, 1) * 255 + 0.5).astype(np.uint8)
    h, w, _ = data.shape
    raw = b"".join(b"\x00" + data[y].tobytes() for y in range(h))

    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)

    png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
           + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))
    with open(path, "wb") as f:
        f.write(png)


# ----------------------------------------------------------------------------- training


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=800)
    parser.add_argument("--views", type=int, default=8)
    parser.add_argument("--samples", type=int, default=32)
    parser.add_argument("--batch", type=int, default=512, help="rays per training step")
    parser.add_argument("--chunk", type=int, default=128, help="rays per chunk of chunked_map")
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--seed", type=int, default=5, help="the layers' initial values (seeds seed..seed+3)")
    parser.add_argument("--out", default="nerf_tiny.png")
    args = parser.parse_args()
    start = time.perf_counter()

    angles = np.linspace(0, 2 * math.pi, args.views, endpoint=False)
    rays = [camera_rays(a) for a in angles]
    origins = np.concatenate([o for o, _ in rays])
    dirs = np.concatenate([d for _, d in rays])
    colors = np.concatenate([render_truth(o, d) for o, d in rays])
    held_o, held_d = camera_rays(angles[0] + math.pi / args.views)   # between two training views
    held_truth = render_truth(held_o, held_d)

    pe, mlp = make_model(args.seed)
    params = mlp.parameters()
    opt = kl.nn.Adam(params, lr=args.lr)
    train = make_render(pe, mlp, args.samples)
    rng = np.random.default_rng(0)

    bar = tqdm.tqdm(range(args.steps), desc="nerf_tiny", unit="step")
    for step in bar:
        pick = rng.integers(0, len(origins), args.batch)
        o, d = kl.TensorXf(origins[pick]), kl.TensorXf(dirs[pick])
        target = kl.TensorXf(colors[pick])
        index = kl.UInt32(pick.astype(np.uint32))
        seed = kl.UInt64(step)
        kl.reset_peak_memory()
        opt.zero_grad()
        img = kl.chunked_map(train, (o, d, index), chunk_size=args.chunk, broadcast=(seed,), name="nerf")
        diff = img - target
        loss = (diff * diff).mean()
        kl.backward(loss)
        opt.step()
        if step % 10 == 0 or step == args.steps - 1:
            bar.set_postfix(loss=f"{float(loss.numpy()):.4f}",
                            peak_MB=f"{kl.memory_stats().peak_bytes / 2**20:.1f}")

    evaluate = make_render(pe, mlp, args.samples, jitter=False)
    with kl.suspend_grad():
        pred = kl.chunked_map(evaluate, (kl.TensorXf(held_o), kl.TensorXf(held_d),
                                         kl.arange(kl.UInt32, len(held_o))),
                              chunk_size=256, broadcast=(kl.UInt64(0),)).numpy()
    mse = float(np.mean((pred - held_truth) ** 2))
    psnr = -10 * math.log10(max(mse, 1e-10))
    side = np.concatenate([held_truth.reshape(RES, RES, 3), pred.reshape(RES, RES, 3)], axis=1)
    write_png(args.out, np.repeat(np.repeat(side, 4, 0), 4, 1))
    print(f"held-out view: mse {mse:.5f}, PSNR {psnr:.2f} dB; wrote {args.out} "
          f"({time.perf_counter() - start:.1f} s)")


if __name__ == "__main__":
    main()
