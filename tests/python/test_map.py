"""kl.chunked_map and kl.checkpoint on a NeRF-shaped model: positional encoding, an MLP of
three hidden layers, four outputs, and volume-rendering compositing along the samples of
each ray, rendered per chunk of rays with jitter from a PCG32 seeded by the ray index (so
results do not depend on the chunking). Checks: loss and gradients equal with and without
chunking; the peak memory of a training step stays flat in the number of samples when the
samples per chunk are fixed (and grows without chunking: the negative control); reverse
mode really recomputes the chunks; composition with checkpoint, while_loop, suspend_grad
and forward mode; the errors; and kl.nn's optimizers."""

import numpy as np
import pytest

import kiln as kl

NEAR, FAR = 2.0, 6.0
WIDTH = 32
N_FREQ = 4
LAYERS = 4                       # Linear layers: 3 hidden + the output


def make_model(seed=1):
    """Seed 1: a network whose initial densities are positive somewhere (with seed 0 of
    kiln::nn::Linear they are not, so the image and every gradient would be zero)."""
    pe = kl.nn.PositionalEncoding(N_FREQ)
    mlp = kl.nn.Sequential(
        kl.nn.Linear(pe.out_features(3), WIDTH, seed=seed), kl.nn.ReLU(),
        kl.nn.Linear(WIDTH, WIDTH, seed=seed + 1), kl.nn.ReLU(),
        kl.nn.Linear(WIDTH, WIDTH, seed=seed + 2), kl.nn.ReLU(),
        kl.nn.Linear(WIDTH, 4, seed=seed + 3))
    return pe, mlp


def zero(r=None):
    return kl.TensorXf(kl.Float(0.0), [] if r is None else r)


def make_render(pe, mlp, n_samples):
    """fn(origins (R, 3), directions (R, 3), ray index (UInt32, R)) -> rgb (R, 3)."""
    step = (FAR - NEAR) / n_samples

    def render(origins, dirs, index):
        r = len(origins)
        # One jitter per ray, seeded by the ray's index (not its lane in the chunk).
        rng = kl.PCG32(r, kl.UInt64(kl.PCG32_DEFAULT_STATE), kl.cast(kl.UInt64, index))
        u = kl.TensorXf(rng.next_float32(), [r, 1])
        base = kl.TensorXf(kl.arange(kl.Float, n_samples), [1, n_samples])
        t = (base + u) * step + NEAR                                       # (r, n)
        pts = origins.reshape([r, 1, 3]) + t.reshape([r, n_samples, 1]) * dirs.reshape([r, 1, 3])
        raw = mlp(pe(pts))                                                  # (r, n, 4)
        sigma = kl.max(raw[..., 3], zero())
        rgb = 1.0 / (1.0 + kl.exp(-raw[..., 0:3]))
        delta = kl.concatenate([t[:, 1:] - t[:, :-1], kl.TensorXf(kl.Float(step), [r, 1])], 1)
        sd = sigma * delta
        trans = kl.exp(-kl.cumsum(sd, exclusive=True))
        weights = trans * (1.0 - kl.exp(-sd))
        return (weights.reshape([r, n_samples, 1]) * rgb).sum(1)

    return render


def make_rays(count, seed=0):
    rng = np.random.default_rng(seed)
    o = np.zeros((count, 3), np.float32)
    o[:, 2] = -4.0
    d = rng.normal(size=(count, 3)).astype(np.float32) * 0.3
    d[:, 2] = 1.0
    d /= np.linalg.norm(d, axis=1, keepdims=True)
    target = rng.uniform(size=(count, 3)).astype(np.float32)
    return kl.TensorXf(o), kl.TensorXf(d), kl.arange(kl.UInt32, count), kl.TensorXf(target)


def mse(img, target):
    diff = img - target
    return (diff * diff).mean()


RAYS = 24
ORIGINS, DIRS, INDEX, TARGET = make_rays(RAYS)


@pytest.fixture
def model():
    pe, mlp = make_model()
    return pe, mlp, mlp.parameters()


def loss_and_grads(params, image_fn):
    kl.clear_grad(params)
    loss = mse(image_fn(), TARGET)
    kl.backward(loss)
    return float(loss.numpy()), [kl.grad(p).numpy().copy() for p in params]


def assert_same(reference, other, rtol=1e-4, atol=1e-6):
    (l0, g0), (l1, g1) = reference, other
    np.testing.assert_allclose(l1, l0, rtol=rtol)
    assert len(g0) == len(g1)
    for a, b in zip(g0, g1):
        np.testing.assert_allclose(b, a, rtol=rtol, atol=atol)


# ---------------------------------------------------------------------------- (a) equality


@pytest.mark.parametrize("chunk_size", [1, 7, RAYS])
def test_chunked_equals_unchunked(model, chunk_size):
    pe, mlp, params = model
    fn = make_render(pe, mlp, 16)
    reference = loss_and_grads(params, lambda: fn(ORIGINS, DIRS, INDEX))
    assert all(np.abs(g).sum() > 0 for g in reference[1])
    chunked = loss_and_grads(params, lambda: kl.chunked_map(fn, (ORIGINS, DIRS, INDEX), chunk_size=chunk_size,
                                                            name="nerf"))
    assert_same(reference, chunked)


def test_chunk_bytes_and_broadcast_parameters(model):
    pe, mlp, params = model
    fn = make_render(pe, mlp, 16)
    reference = loss_and_grads(params, lambda: fn(ORIGINS, DIRS, INDEX))
    # 28 bytes per row (two rows of 3 floats and a UInt32): 5 rows per chunk.
    by_bytes = loss_and_grads(params, lambda: kl.chunked_map(fn, (ORIGINS, DIRS, INDEX), chunk_bytes=150))
    assert_same(reference, by_bytes)

    # The parameters passed explicitly (broadcast) rather than captured.
    w_last = mlp.layers[-1].weight

    def with_scale(o, d, i, scale):
        return fn(o, d, i) * scale

    scale = kl.TensorXf(kl.Float(1.5), [])
    kl.enable_grad(scale)
    kl.clear_grad(params)
    loss = mse(kl.chunked_map(with_scale, (ORIGINS, DIRS, INDEX), chunk_size=5, broadcast=(scale,)), TARGET)
    kl.backward(loss)
    g_scale, g_w = kl.grad(scale).numpy().copy(), kl.grad(w_last).numpy().copy()
    kl.clear_grad(params)
    kl.clear_grad(scale)
    loss_ref = mse(with_scale(ORIGINS, DIRS, INDEX, scale), TARGET)
    kl.backward(loss_ref)
    np.testing.assert_allclose(loss.numpy(), loss_ref.numpy(), rtol=1e-5)
    np.testing.assert_allclose(g_scale, kl.grad(scale).numpy(), rtol=1e-4)
    np.testing.assert_allclose(g_w, kl.grad(w_last).numpy(), rtol=1e-4, atol=1e-6)


def test_jitter_does_not_depend_on_chunking(model):
    pe, mlp, _ = model
    fn = make_render(pe, mlp, 8)
    with kl.suspend_grad():
        whole = fn(ORIGINS, DIRS, INDEX).numpy()
        # A chunk of rays 5..9 alone renders the same as those rows of the whole.
        part = fn(ORIGINS[5:10], DIRS[5:10], kl.arange(kl.UInt32, 5, 10)).numpy()
    np.testing.assert_allclose(part, whole[5:10], rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------------------- (b) memory


SAMPLES_PER_CHUNK = 2560
MEM_RAYS = 64


def step_peak(params, fn, rays, chunk_size):
    o, d, i, target = rays
    kl.clear_grad(params)
    kl.flush_memory_cache()
    before = kl.memory_stats().current_bytes
    kl.reset_peak_memory()
    img = fn(o, d, i) if chunk_size is None else kl.chunked_map(fn, (o, d, i), chunk_size=chunk_size)
    loss = mse(img, target)
    kl.backward(loss)
    for p in params:
        kl.grad(p).numpy()
    # The inputs (and the target) are in `before`; the output image is the one allocation
    # of the step that is there by design.
    return kl.memory_stats().peak_bytes - before - 4 * img.size()


def test_peak_memory_flat_in_samples_when_chunked(model):
    pe, mlp, params = model
    rays = make_rays(MEM_RAYS, seed=3)
    counts = (64, 128, 256, 640)
    chunked, unchunked = {}, {}
    for n in counts:
        fn = make_render(pe, mlp, n)
        chunked[n] = step_peak(params, fn, rays, max(1, SAMPLES_PER_CHUNK // n))
        unchunked[n] = step_peak(params, fn, rays, None)
    for n in counts:
        assert chunked[n] <= 1.2 * chunked[64], (n, chunked)
    # Negative control: without chunking the step's intermediates scale with the samples.
    assert unchunked[640] >= 4 * unchunked[64], unchunked
    assert chunked[640] < unchunked[640] / 4, (chunked, unchunked)


# ---------------------------------------------------------------------------- (c) recompute


def library_launches(history):
    return sum(1 for k in history if k["source"] == "library")


def test_backward_recomputes_each_chunk(model):
    pe, mlp, params = model
    fn = make_render(pe, mlp, 16)

    def count(image_fn):
        kl.clear_grad(params)
        kl.kernel_history(clear=True)
        loss = mse(image_fn(), TARGET)
        loss.numpy()
        forward = library_launches(kl.kernel_history(clear=True))
        kl.backward(loss)
        for p in params:
            kl.grad(p).numpy()
        return forward, library_launches(kl.kernel_history(clear=True))

    fwd_plain, bwd_plain = count(lambda: fn(ORIGINS, DIRS, INDEX))
    assert fwd_plain == LAYERS
    chunks = 3
    fwd_chunked, bwd_chunked = count(lambda: kl.chunked_map(fn, (ORIGINS, DIRS, INDEX), chunk_size=RAYS // chunks))
    assert fwd_chunked == chunks * LAYERS
    # Each chunk's backward: the plain backward's products plus its forward matmuls again.
    assert bwd_chunked == chunks * (bwd_plain + LAYERS), (bwd_plain, bwd_chunked)


# ---------------------------------------------------------------------------- (d) composition


def test_checkpoint_alone_and_inside_chunked_fn(model):
    pe, mlp, params = model
    fn = make_render(pe, mlp, 16)
    reference = loss_and_grads(params, lambda: fn(ORIGINS, DIRS, INDEX))
    assert_same(reference, loss_and_grads(params, lambda: kl.checkpoint(fn)(ORIGINS, DIRS, INDEX)))
    inner = kl.checkpoint(fn)
    assert_same(reference, loss_and_grads(
        params, lambda: kl.chunked_map(lambda o, d, i: inner(o, d, i), (ORIGINS, DIRS, INDEX), chunk_size=5)))


def test_chunked_map_inside_checkpoint(model):
    pe, mlp, params = model
    fn = make_render(pe, mlp, 16)
    reference = loss_and_grads(params, lambda: fn(ORIGINS, DIRS, INDEX))
    outer = kl.checkpoint(lambda o, d, i: kl.chunked_map(fn, (o, d, i), chunk_size=7))
    assert_same(reference, loss_and_grads(params, lambda: outer(ORIGINS, DIRS, INDEX)))


def test_while_loop_inside_chunked_fn(model):
    pe, mlp, params = model
    fn = make_render(pe, mlp, 8)
    steps = 3

    def tone_mapped(o, d, i):
        rgb = fn(o, d, i)
        shape = list(rgb.shape)

        def body(k, x):
            return k + 1, x * 0.9 + 0.05 * x * x

        _, x = kl.while_loop((kl.UInt32(0), rgb.array), lambda k, x: k < steps, body, max_iterations=steps + 1)
        return kl.TensorXf(x, shape)

    def plain(o, d, i):
        x = fn(o, d, i)
        for _ in range(steps):
            x = x * 0.9 + 0.05 * x * x
        return x

    reference = loss_and_grads(params, lambda: plain(ORIGINS, DIRS, INDEX))
    assert_same(reference, loss_and_grads(params, lambda: tone_mapped(ORIGINS, DIRS, INDEX)))
    assert_same(reference, loss_and_grads(
        params, lambda: kl.chunked_map(tone_mapped, (ORIGINS, DIRS, INDEX), chunk_size=5)))


def test_chunked_map_under_suspend_grad(model):
    pe, mlp, params = model
    fn = make_render(pe, mlp, 16)
    with kl.suspend_grad():
        whole = fn(ORIGINS, DIRS, INDEX)
        chunked = kl.chunked_map(fn, (ORIGINS, DIRS, INDEX), chunk_size=5)
        assert not kl.grad_enabled(chunked)
    np.testing.assert_allclose(chunked.numpy(), whole.numpy(), rtol=1e-5, atol=1e-7)


def test_forward_mode_through_chunked_map(model):
    pe, mlp, params = model
    fn = make_render(pe, mlp, 16)
    w = mlp.layers[2].weight
    seed = kl.TensorXf(np.random.default_rng(5).normal(size=w.shape).astype(np.float32))

    def jvp(image_fn):
        kl.clear_grad(params)
        loss = mse(image_fn(), TARGET)
        kl.forward_from(w, seed)
        return kl.grad(loss).numpy().copy()

    reference = jvp(lambda: fn(ORIGINS, DIRS, INDEX))
    assert abs(float(reference)) > 0
    chunked = jvp(lambda: kl.chunked_map(fn, (ORIGINS, DIRS, INDEX), chunk_size=7))
    np.testing.assert_allclose(chunked, reference, rtol=1e-4, atol=1e-7)
    # And the reverse-mode gradient agrees with it: <grad, seed> = JVP.
    _, grads = loss_and_grads(params, lambda: fn(ORIGINS, DIRS, INDEX))
    np.testing.assert_allclose((grads[[id(p) for p in params].index(id(w))] * seed.numpy()).sum(), reference, rtol=1e-3)


# ---------------------------------------------------------------------------- (e) errors


def test_wrong_output_rows_is_size_error():
    with pytest.raises(kl.SizeError, match="rows"):
        kl.chunked_map(lambda o: o[0:1], ORIGINS, chunk_size=4)


def test_inputs_with_different_row_counts():
    with pytest.raises(kl.SizeError, match="same leading extent"):
        kl.chunked_map(lambda o, d: o + d, (ORIGINS, DIRS[0:5]), chunk_size=4)


@pytest.mark.parametrize("kwargs", [dict(), dict(chunk_size=4, chunk_bytes=64)], ids=["neither", "both"])
def test_chunk_size_xor_chunk_bytes(kwargs):
    with pytest.raises(ValueError, match="exactly one"):
        kl.chunked_map(lambda o: o, ORIGINS, **kwargs)


@pytest.mark.parametrize("bad", [0, -3, 2.5])
def test_bad_chunk_size(bad):
    with pytest.raises(ValueError):
        kl.chunked_map(lambda o: o, ORIGINS, chunk_size=bad)


def test_zero_d_input_and_non_tensor_input():
    with pytest.raises(kl.SizeError):
        kl.chunked_map(lambda x: x, kl.TensorXf(kl.Float(1.0), []), chunk_size=1)
    with pytest.raises(TypeError):
        kl.chunked_map(lambda x: x, (3.0,), chunk_size=1)


# ---------------------------------------------------------------------------- (f) nn


def test_adam_reduces_the_loss(model):
    pe, mlp, params = model
    fn = make_render(pe, mlp, 16)
    opt = kl.nn.Adam(params, lr=1e-2)
    losses = []
    for _ in range(8):
        opt.zero_grad()
        loss = mse(kl.chunked_map(fn, (ORIGINS, DIRS, INDEX), chunk_size=8), TARGET)
        kl.backward(loss)
        losses.append(float(loss.numpy()))
        opt.step()
    assert losses[-1] < 0.8 * losses[0], losses


def test_sgd_step_is_p_minus_lr_g(model):
    pe, mlp, params = model
    fn = make_render(pe, mlp, 8)
    lr = 0.05
    _, grads = loss_and_grads(params, lambda: kl.chunked_map(fn, (ORIGINS, DIRS, INDEX), chunk_size=8))
    before = [p.numpy().copy() for p in params]
    kl.nn.SGD(params, lr=lr).step()
    for p, p0, g in zip(params, before, grads):
        np.testing.assert_allclose(p.numpy(), p0 - lr * g, rtol=1e-6, atol=1e-7)
        assert kl.grad_enabled(p)
        np.testing.assert_array_equal(kl.grad(p).numpy(), 0)   # a fresh leaf


def test_module_parameters_and_encoding_width():
    pe, mlp = make_model()
    assert pe.out_features(3) == 3 * (2 * N_FREQ + 1)
    params = mlp.parameters()
    assert len(params) == 2 * LAYERS
    assert [p.shape for p in params[:2]] == [(27, WIDTH), (WIDTH,)]
    x = kl.TensorXf(np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3))
    enc = pe(x).numpy()
    xs = x.numpy()
    np.testing.assert_allclose(enc[:, :3], xs)
    np.testing.assert_allclose(enc[:, 3:6], np.sin(np.pi * xs), atol=1e-6)
    np.testing.assert_allclose(enc[:, 6:9], np.cos(np.pi * xs), atol=1e-6)
