"""One NeRF training step (loss + backward + Adam) at 64 and 640 samples per ray: Kiln
unchunked, Kiln with kl.chunked_map over rays, and when installed JAX (lax.map with
batch_size + jax.checkpoint, jitted) and PyTorch (torch.utils.checkpoint over chunks).

Model: positional encoding (4 frequencies) -> MLP 3x32 -> (rgb, sigma), volume rendering
along the samples, MSE against a random target, RAYS rays, chunks of CHUNK_SAMPLES samples.

Each (system, samples) configuration runs in a subprocess of its own: the median step
time after a warm-up, the peak resident-set growth of the process during the steps
(ru_maxrss after the steps minus the RSS before the first, warm-up, step: a like-for-like
column for every system, compilation included), and for Kiln
also memory_stats().peak_bytes.

    python bench/nerf_bench.py [--json] [--quick]
"""

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

RAYS = 256
WIDTH = 32
N_FREQ = 4
CHUNK_SAMPLES = 32768  # NeRF's own batchify default (1024 * 32)
NEAR, FAR = 2.0, 6.0
REPEATS = 3 if "--quick" in sys.argv else 5
SAMPLES = (64, 640)
SYSTEMS = ("kiln", "kiln_chunked", "jax", "torch")


def rss_now():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def data():
    rng = np.random.default_rng(0)
    o = np.zeros((RAYS, 3), np.float32)
    o[:, 2] = -4
    d = rng.normal(size=(RAYS, 3)).astype(np.float32) * 0.3
    d[:, 2] = 1
    d /= np.linalg.norm(d, axis=1, keepdims=True)
    target = rng.uniform(size=(RAYS, 3)).astype(np.float32)
    u = rng.uniform(size=(RAYS, 1)).astype(np.float32)
    weights = []
    d_in = 3 * (2 * N_FREQ + 1)
    for k, (a, b) in enumerate([(d_in, WIDTH), (WIDTH, WIDTH), (WIDTH, WIDTH), (WIDTH, 4)]):
        r = np.random.default_rng(k + 1)
        bound = 1 / np.sqrt(a)
        weights += [r.uniform(-bound, bound, (a, b)).astype(np.float32), r.uniform(-bound, bound, b).astype(np.float32)]
    return o, d, target, u, weights


# ----------------------------------------------------------------------------- per system


def kiln_step(n, chunked):
    import kiln as kl
    o, d, target, u, weights = data()
    params = [kl.TensorXf(w) for w in weights]
    opt = kl.nn.Adam(params, lr=1e-3)
    step = (FAR - NEAR) / n
    O, D, T, U = kl.TensorXf(o), kl.TensorXf(d), kl.TensorXf(target), kl.TensorXf(u)

    def render(o, d, u):
        r = len(o)
        t = (kl.TensorXf(kl.arange(kl.Float, n), [1, n]) + u) * step + NEAR
        x = o.reshape([r, 1, 3]) + t.reshape([r, n, 1]) * d.reshape([r, 1, 3])
        parts = [x]
        for k in range(N_FREQ):
            s = x * float(2.0 ** k * np.pi)
            parts += [kl.sin(s), kl.cos(s)]
        h = kl.concatenate(parts, 2)
        for i in range(0, 8, 2):
            h = kl.matmul(h, params[i]) + params[i + 1]
            if i < 6:
                h = kl.max(h, kl.TensorXf(kl.Float(0.0), []))
        sigma = kl.max(h[..., 3], kl.TensorXf(kl.Float(0.0), []))
        rgb = 1.0 / (1.0 + kl.exp(-h[..., 0:3]))
        delta = kl.concatenate([t[:, 1:] - t[:, :-1], kl.TensorXf(kl.Float(step), [r, 1])], 1)
        sd = sigma * delta
        w = kl.exp(-kl.cumsum(sd, exclusive=True)) * (1.0 - kl.exp(-sd))
        return (w.reshape([r, n, 1]) * rgb).sum(1)

    def run():
        opt.zero_grad()
        img = kl.chunked_map(render, (O, D, U), chunk_size=max(1, CHUNK_SAMPLES // n)) if chunked else render(O, D, U)
        diff = img - T
        loss = (diff * diff).mean()
        kl.backward(loss)
        opt.step()
        return float(loss.numpy())

    def peak():
        return kl.memory_stats().peak_bytes

    return run, kl.reset_peak_memory, peak


def jax_step(n):
    import jax
    import jax.numpy as jnp
    o, d, target, u, weights = data()
    step = (FAR - NEAR) / n
    chunk = max(1, CHUNK_SAMPLES // n)

    @jax.checkpoint
    def render_ray(params, o, d, u):
        t = (jnp.arange(n, dtype=jnp.float32) + u[0]) * step + NEAR
        x = o[None, :] + t[:, None] * d[None, :]
        h = jnp.concatenate([x] + sum([[jnp.sin(x * 2.0 ** k * np.pi), jnp.cos(x * 2.0 ** k * np.pi)]
                                       for k in range(N_FREQ)], []), -1)
        for i in range(0, 8, 2):
            h = h @ params[i] + params[i + 1]
            if i < 6:
                h = jax.nn.relu(h)
        sigma = jax.nn.relu(h[:, 3])
        rgb = jax.nn.sigmoid(h[:, :3])
        delta = jnp.concatenate([t[1:] - t[:-1], jnp.array([step], jnp.float32)])
        sd = sigma * delta
        w = jnp.exp(-(jnp.cumsum(sd) - sd)) * (1 - jnp.exp(-sd))
        return (w[:, None] * rgb).sum(0)

    def loss_fn(params):
        img = jax.lax.map(lambda a: render_ray(params, *a), (o, d, u), batch_size=chunk)
        return jnp.mean((img - target) ** 2)

    lr, b1, b2, eps = 1e-3, 0.9, 0.999, 1e-8

    @jax.jit
    def train(params, m, v, t):
        loss, g = jax.value_and_grad(loss_fn)(params)
        m = [b1 * mi + (1 - b1) * gi for mi, gi in zip(m, g)]
        v = [b2 * vi + (1 - b2) * gi * gi for vi, gi in zip(v, g)]
        scale = lr * jnp.sqrt(1 - b2 ** t) / (1 - b1 ** t)
        params = [p - scale * mi / (jnp.sqrt(vi) + eps) for p, mi, vi in zip(params, m, v)]
        return params, m, v, loss

    state = {"p": [jnp.asarray(w) for w in weights], "m": [jnp.zeros_like(jnp.asarray(w)) for w in weights],
             "v": [jnp.zeros_like(jnp.asarray(w)) for w in weights], "t": 0}

    def run():
        state["t"] += 1
        state["p"], state["m"], state["v"], loss = train(state["p"], state["m"], state["v"], float(state["t"]))
        return float(loss)

    return run, lambda: None, lambda: None


def torch_step(n):
    import torch
    from torch.utils.checkpoint import checkpoint
    torch.set_num_threads(os.cpu_count())
    o, d, target, u, weights = (torch.from_numpy(a) if isinstance(a, np.ndarray) else a for a in data())
    params = [torch.from_numpy(w).requires_grad_() for w in weights]
    opt = torch.optim.Adam(params, lr=1e-3)
    step = (FAR - NEAR) / n
    chunk = max(1, CHUNK_SAMPLES // n)

    def render(o, d, u):
        t = (torch.arange(n, dtype=torch.float32)[None, :] + u) * step + NEAR
        x = o[:, None, :] + t[..., None] * d[:, None, :]
        h = torch.cat([x] + sum([[torch.sin(x * 2.0 ** k * np.pi), torch.cos(x * 2.0 ** k * np.pi)]
                                 for k in range(N_FREQ)], []), -1)
        for i in range(0, 8, 2):
            h = h @ params[i] + params[i + 1]
            if i < 6:
                h = torch.relu(h)
        sigma = torch.relu(h[..., 3])
        rgb = torch.sigmoid(h[..., :3])
        delta = torch.cat([t[:, 1:] - t[:, :-1], torch.full((len(o), 1), step)], 1)
        sd = sigma * delta
        w = torch.exp(-(torch.cumsum(sd, -1) - sd)) * (1 - torch.exp(-sd))
        return (w[..., None] * rgb).sum(1)

    def run():
        opt.zero_grad()
        img = torch.cat([checkpoint(render, o[i:i + chunk], d[i:i + chunk], u[i:i + chunk], use_reentrant=False)
                         for i in range(0, RAYS, chunk)])
        loss = ((img - target) ** 2).mean()
        loss.backward()
        opt.step()
        return float(loss)

    return run, lambda: None, lambda: None


def measure(system, n):
    make = {"kiln": lambda: kiln_step(n, False), "kiln_chunked": lambda: kiln_step(n, True),
            "jax": lambda: jax_step(n), "torch": lambda: torch_step(n)}[system]
    run, reset, peak = make()
    rss0 = rss_now()                               # before the first step: the peak includes it
    loss = run()                                   # warm-up (compilation)
    run()
    reset()
    times = []
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        run()
        times.append(time.perf_counter() - t0)
    rss_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return {"system": system, "samples": n, "ms": 1e3 * statistics.median(times), "loss0": loss,
            "rss_delta_mb": max(0, rss_peak - rss0) / 2**20,
            "kiln_peak_mb": (peak() / 2**20) if peak() is not None else None}


def available(system):
    import importlib.util
    if system.startswith("kiln"):
        return True
    return importlib.util.find_spec(system) is not None


def main():
    if len(sys.argv) >= 4 and sys.argv[1] == "--child":
        print(json.dumps(measure(sys.argv[2], int(sys.argv[3]))))
        return
    rows = []
    for system in SYSTEMS:
        if not available(system):
            continue
        for n in SAMPLES:
            args = [sys.executable, __file__, "--child", system, str(n)] + (["--quick"] if "--quick" in sys.argv else [])
            # A Kiln kernel cache of its own per configuration, as a training run of one shape
            # has: shared across shapes, the index arithmetic's divisors (the sample count)
            # would be generalized into launch parameters and divide at run time.
            with tempfile.TemporaryDirectory() as cache:
                env = dict(os.environ, JAX_PLATFORMS="cpu", KILN_CACHE_DIR=cache)
                proc = subprocess.run(args, capture_output=True, text=True, env=env)
            if proc.returncode != 0:
                rows.append({"system": system, "samples": n, "error": proc.stderr.strip().splitlines()[-1:]})
                continue
            rows.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    if "--json" in sys.argv:
        print(json.dumps(rows, indent=2))
        return
    base = {r["samples"]: r for r in rows if r["system"] == "kiln_chunked" and "ms" in r}
    print(f"NeRF step: {RAYS} rays, MLP 3x{WIDTH}, {CHUNK_SAMPLES} samples per chunk, median of {REPEATS}")
    print(f"{'system':<14}{'N':>5}{'ms':>10}{'x chunked':>11}{'RSS+ MB':>10}{'x chunked':>11}{'kiln peak MB':>14}")
    for r in rows:
        if "error" in r:
            print(f"{r['system']:<14}{r['samples']:>5}  error: {r['error']}")
            continue
        b = base.get(r["samples"])
        ratio_t = r["ms"] / b["ms"] if b else float("nan")
        ratio_m = r["rss_delta_mb"] / b["rss_delta_mb"] if b and b["rss_delta_mb"] > 0 else float("nan")
        peak = f"{r['kiln_peak_mb']:.1f}" if r["kiln_peak_mb"] is not None else "-"
        print(f"{r['system']:<14}{r['samples']:>5}{r['ms']:>10.1f}{ratio_t:>11.2f}{r['rss_delta_mb']:>10.1f}"
              f"{ratio_m:>11.2f}{peak:>14}")


if __name__ == "__main__":
    main()
