"""Reverse-mode benchmarks of the Python package against PyTorch (CPU) and JAX, side by side.

  elementwise  the 20-op elementwise program of bench/ad_bench.cpp over 2^22 float32 lanes
               (2^18 with --quick): loss = sum(f(x, y)), gradients with respect to x and y
  mlp          an MLP 4-16-16-1 with ReLU and a mean squared error over 2^16 points (2^12):
               gradients of the 369 weights and biases. Each system is written the way its
               users write it: Kiln with per-lane arrays and one-lane parameters (Kiln has
               no tensors yet), PyTorch and JAX with (n, 4) @ (4, 16) matrix products

For each system: the primal (loss only) and a gradient step (loss + every gradient, what an
optimizer needs), medians after a warm-up; JAX's functions are jax.jit-compiled. Gradients
are checked against PyTorch's (or NumPy's finite differences when PyTorch is missing).

    python bench/ad_python_bench.py [--json] [--quick]

Ratio = peer time / Kiln time (> 1: Kiln is faster). Peers appear when importable; each
runs in a phase of its own, Kiln first.
"""

import importlib.util
import json
import sys

import numpy as np

import timing

import kiln as kl

QUICK = "--quick" in sys.argv
LANES = 2**18 if QUICK else 2**22
POINTS = 2**12 if QUICK else 2**16
REPEATS = 3 if QUICK else 9
HIDDEN = 16

rng = np.random.default_rng(0)
X = rng.uniform(0.1, 1.0, LANES).astype(np.float32)
Y = rng.uniform(0.1, 1.0, LANES).astype(np.float32)
P = rng.uniform(-1, 1, (POINTS, 4)).astype(np.float32)
TARGET = (np.sin(P[:, 0] * 3) * P[:, 1] + P[:, 2] * P[:, 3]).astype(np.float32)
W1 = rng.uniform(-0.5, 0.5, (4, HIDDEN)).astype(np.float32)
B1 = rng.uniform(-0.5, 0.5, HIDDEN).astype(np.float32)
W2 = rng.uniform(-0.5, 0.5, (HIDDEN, HIDDEN)).astype(np.float32)
B2 = rng.uniform(-0.5, 0.5, HIDDEN).astype(np.float32)
W3 = rng.uniform(-0.5, 0.5, HIDDEN).astype(np.float32)
B3 = np.float32(0.1)


def median_seconds(run):
    return timing.median_seconds(run, REPEATS, settle=0.2)


def elementwise(x, y, lib):
    """The 20 ops, written once for every library (`lib` has sin, exp, sqrt, maximum, tanh)."""
    a = (x * y + x) * 0.5
    b = lib.sin(a)
    c = b * y - x
    c = c * c
    d = lib.exp(-c) + a
    d = d / (y * y + 1.0)
    e = lib.sqrt(d * d + 1.0) * b
    return lib.maximum(e, x) + lib.tanh(y)


class KilnLib:
    sin, exp, sqrt, tanh, maximum = kl.sin, kl.exp, kl.sqrt, kl.tanh, kl.max


# ---- Kiln ---------------------------------------------------------------------------------

def kiln_elementwise():
    x0, y0 = kl.Float(X), kl.Float(Y)

    def primal():
        kl.eval(kl.sum(elementwise(x0, y0, KilnLib)))

    def step():
        x, y = kl.Float(x0), kl.Float(y0)
        kl.enable_grad(x, y)
        loss = kl.sum(elementwise(x, y, KilnLib))
        kl.backward(loss)
        gx, gy = kl.grad(x), kl.grad(y)
        kl.eval(loss, gx, gy)
        return gx, gy

    grads = [g.numpy().copy() for g in step()]
    return median_seconds(primal), median_seconds(step), grads


def kiln_mlp_parameters():
    params = [kl.Float(float(v)) for v in W1.ravel()] + [kl.Float(float(v)) for v in B1]
    params += [kl.Float(float(v)) for v in W2.ravel()] + [kl.Float(float(v)) for v in B2]
    params += [kl.Float(float(v)) for v in W3] + [kl.Float(float(B3))]
    return params


def kiln_mlp_loss(params, inputs, target):
    w1, b1 = params[:4 * HIDDEN], params[4 * HIDDEN:5 * HIDDEN]
    w2 = params[5 * HIDDEN:5 * HIDDEN + HIDDEN * HIDDEN]
    b2 = params[5 * HIDDEN + HIDDEN * HIDDEN:6 * HIDDEN + HIDDEN * HIDDEN]
    w3, b3 = params[6 * HIDDEN + HIDDEN * HIDDEN:-1], params[-1]

    def layer(values, weights, biases, width):
        out = []
        for o in range(width):
            acc = values[0] * weights[o]
            for i in range(1, len(values)):
                acc = kl.fma(values[i], weights[i * width + o], acc)
            out.append(kl.max(acc + biases[o], 0.0))
        return out

    h1 = layer(inputs, w1, b1, HIDDEN)
    h2 = layer(h1, w2, b2, HIDDEN)
    y = h2[0] * w3[0]
    for i in range(1, HIDDEN):
        y = kl.fma(h2[i], w3[i], y)
    error = y + b3 - target
    return kl.sum(error * error) * (1.0 / POINTS)


def kiln_mlp():
    inputs = [kl.Float(np.ascontiguousarray(P[:, i])) for i in range(4)]
    target = kl.Float(TARGET)
    base = kiln_mlp_parameters()

    def primal():
        kl.eval(kiln_mlp_loss(base, inputs, target))

    def step():
        params = [kl.Float(p) for p in base]
        kl.enable_grad(*params)
        loss = kiln_mlp_loss(params, inputs, target)
        kl.backward(loss)
        grads = [kl.grad(p) for p in params]
        kl.eval(loss, *grads)
        return grads

    grads = np.array([g.numpy()[0] for g in step()])
    return median_seconds(primal), median_seconds(step), grads


# ---- peers --------------------------------------------------------------------------------

def torch_runs():
    import torch
    torch.set_num_threads(2)
    x0, y0 = torch.from_numpy(X), torch.from_numpy(Y)

    def e_primal():
        with torch.no_grad():
            elementwise(x0, y0, torch).sum().item()

    def e_step():
        x, y = x0.clone().requires_grad_(), y0.clone().requires_grad_()
        elementwise(x, y, torch).sum().backward()
        return x.grad, y.grad

    e_grads = [g.numpy() for g in e_step()]
    p, t = torch.from_numpy(P), torch.from_numpy(TARGET)
    base = [torch.from_numpy(a.copy()) for a in (W1, B1, W2, B2, W3, np.array([B3]))]

    def loss(w):
        h = torch.relu(p @ w[0] + w[1])
        h = torch.relu(h @ w[2] + w[3])
        return ((h @ w[4] + w[5] - t) ** 2).mean()

    def m_primal():
        with torch.no_grad():
            loss(base).item()

    def m_step():
        w = [v.clone().requires_grad_() for v in base]
        loss(w).backward()
        return [v.grad for v in w]

    m_grads = flat_mlp_grads([g.numpy() for g in m_step()])
    return {"elementwise": (median_seconds(e_primal), median_seconds(e_step), e_grads),
            "mlp": (median_seconds(m_primal), median_seconds(m_step), m_grads)}


def jax_runs():
    import jax
    import jax.numpy as jnp
    jax.config.update("jax_platforms", "cpu")
    x0, y0 = jnp.asarray(X), jnp.asarray(Y)
    e_loss = jax.jit(lambda x, y: elementwise(x, y, jnp).sum())
    e_grad = jax.jit(jax.value_and_grad(lambda x, y: elementwise(x, y, jnp).sum(), argnums=(0, 1)))
    e_grads = [np.asarray(g) for g in e_grad(x0, y0)[1]]
    p, t = jnp.asarray(P), jnp.asarray(TARGET)
    base = [jnp.asarray(a) for a in (W1, B1, W2, B2, W3, np.array([B3]))]

    def loss(w):
        h = jax.nn.relu(p @ w[0] + w[1])
        h = jax.nn.relu(h @ w[2] + w[3])
        return ((h @ w[4] + w[5] - t) ** 2).mean()

    m_loss, m_grad = jax.jit(loss), jax.jit(jax.value_and_grad(loss))
    m_grads = flat_mlp_grads([np.asarray(g) for g in m_grad(base)[1]])
    return {"elementwise": (median_seconds(lambda: e_loss(x0, y0).block_until_ready()),
                            median_seconds(lambda: jax.block_until_ready(e_grad(x0, y0))), e_grads),
            "mlp": (median_seconds(lambda: m_loss(base).block_until_ready()),
                    median_seconds(lambda: jax.block_until_ready(m_grad(base))), m_grads)}


def flat_mlp_grads(g):
    """A peer's (W1, B1, W2, B2, W3, B3) gradients in Kiln's parameter order."""
    return np.concatenate([g[0].ravel(), g[1], g[2].ravel(), g[3], g[4], np.ravel(g[5])])


def max_relative_difference(a, b):
    a, b = np.concatenate([np.ravel(v) for v in a]), np.concatenate([np.ravel(v) for v in b])
    return float(np.max(np.abs(a - b)) / max(1e-6, float(np.max(np.abs(b)))))


def main():
    rows = []
    kiln = {"elementwise": kiln_elementwise(), "mlp": kiln_mlp()}
    for name, (primal, step, _) in kiln.items():
        rows.append({"name": f"{name}: Kiln gradient step vs Kiln primal", "kiln_s": step, "baseline_s": primal,
                     "ratio": primal / step, "goal": ">= 0.25: step = primal + reverse <= 4x primal"})
    for peer, runner in (("PyTorch", "torch"), ("JAX", "jax")):
        if importlib.util.find_spec(runner) is None:
            print(f"({peer} not installed: no {peer} rows)", file=sys.stderr)
            continue
        results = torch_runs() if runner == "torch" else jax_runs()
        for name, (primal, step, grads) in results.items():
            mine = kiln[name][2] if name == "elementwise" else [kiln[name][2]]
            theirs = grads if name == "elementwise" else [grads]
            diff = max_relative_difference(mine, theirs)
            if diff > 1e-3:
                print(f"warning: {name}: Kiln's gradients differ from {peer}'s by {diff:.3g} (relative)",
                      file=sys.stderr)
            rows.append({"name": f"{name}: gradient step, Kiln vs {peer}", "kiln_s": kiln[name][1],
                         "baseline_s": step, "ratio": step / kiln[name][1],
                         "note": f"{peer} primal {primal * 1e3:.2f} ms; gradients agree to {diff:.1e}"})
    if "--json" in sys.argv:
        print(json.dumps(rows, indent=2))
        return
    print(f"{'benchmark':58} {'kiln':>10} {'baseline':>10} {'ratio':>7}  notes")
    for r in rows:
        print(f"{r['name']:58} {r['kiln_s'] * 1e3:8.2f} ms {r['baseline_s'] * 1e3:8.2f} ms {r['ratio']:6.2f}x  "
              f"{r.get('goal', r.get('note', ''))}")


if __name__ == "__main__":
    main()
