"""Textures (kl.Texture1f ... Texture3f64) against a NumPy reference written here: every
dimension, filter and wrap mode at random and edge positions, the defined results for
non-finite and inactive lanes, bad input, and gradient checks on texels and positions."""

import itertools

import numpy as np
import pytest

import kiln as kl

TEXTURES = {(1, np.float32): kl.Texture1f, (2, np.float32): kl.Texture2f, (3, np.float32): kl.Texture3f,
            (1, np.float64): kl.Texture1f64, (2, np.float64): kl.Texture2f64, (3, np.float64): kl.Texture3f64}
SHAPES = {1: (7, 2), 2: (5, 4, 3), 3: (3, 4, 2, 2)}
WRAPS = [kl.WrapMode.Repeat, kl.WrapMode.Clamp, kl.WrapMode.Mirror]
FILTERS = ["nearest", "linear", "cubic"]


def wrap(i, n, mode):
    """Integer texel coordinates mapped into [0, n) as NumPy arrays."""
    if mode == kl.WrapMode.Clamp:
        return np.clip(i, 0, n - 1)
    if mode == kl.WrapMode.Repeat:
        return np.mod(i, n)
    p = np.mod(i, 2 * n)
    return np.where(p >= n, 2 * n - 1 - p, p)


def bspline_weights(a):
    return [(1 - a) ** 3 / 6, (3 * a**3 - 6 * a**2 + 4) / 6, (-3 * a**3 + 3 * a**2 + 3 * a + 1) / 6, a**3 / 6]


def reference(texels, pos, filter, mode):
    """The texture read in NumPy (float64 weights): `texels` of shape (res..., C), `pos` a
    list of per-axis coordinate arrays (x first, float32 or float64). Texel coordinates are
    rounded to the position's precision as the kernel computes them (a product, a fused
    multiply-add)."""
    dim = texels.ndim - 1
    axes = []
    for axis, p in enumerate(pos):
        n = texels.shape[dim - 1 - axis]
        exact = p.astype(np.float64) * n  # exact for float32 positions
        if filter == "nearest":
            axes.append([(wrap(np.floor(exact.astype(p.dtype)).astype(np.int64), n, mode), 1.0)])
            continue
        scaled = (exact - 0.5).astype(p.dtype).astype(np.float64)
        first = np.floor(scaled).astype(np.int64)
        a = scaled - first
        if filter == "linear":
            axes.append([(wrap(first, n, mode), 1 - a), (wrap(first + 1, n, mode), a)])
        else:
            axes.append([(wrap(first - 1 + k, n, mode), w) for k, w in enumerate(bspline_weights(a))])
    out = 0
    for taps in itertools.product(*axes):
        index = tuple(t[0] for t in reversed(taps))  # outermost axis first
        weight = np.prod([t[1] for t in taps], axis=0)
        out = out + (weight * np.ones_like(pos[0], dtype=np.float64))[:, None] * texels[index]
    return out  # (lanes, C)


def positions(dim, dtype, shape, seed=3):
    """Random coordinates in [-1.5, 2.5] (outside on both sides), then 0, 1, -0, texel
    centers, -1 and 2 on every axis."""
    rng = np.random.default_rng(seed)
    out = []
    for axis in range(dim):
        n = shape[dim - 1 - axis]
        edges = [0, 1, -0.0, 0.5 / n, 1.5 / n, 1 - 0.5 / n, -1, 2]
        out.append(np.concatenate([rng.uniform(-1.5, 2.5, 61), edges]).astype(dtype))
    return out


def make_texture(dim, dtype, texels, filter, mode):
    array = (kl.Float if dtype == np.float32 else kl.Float64)(np.ascontiguousarray(texels.ravel()))
    tensor = (kl.TensorXf if dtype == np.float32 else kl.TensorXd)(array, list(texels.shape))
    return TEXTURES[dim, dtype](tensor, kl.FilterMode.Nearest if filter == "nearest" else kl.FilterMode.Linear, mode)


def read(texture, pos, filter, dtype, active=None):
    array = kl.Float if dtype == np.float32 else kl.Float64
    coordinates = [array(p) for p in pos]
    arg = coordinates[0] if len(pos) == 1 else coordinates
    channels = texture.eval_cubic(arg, active) if filter == "cubic" else texture.eval(arg, active)
    return np.stack([c.numpy() for c in channels], axis=1)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("dim", [1, 2, 3])
@pytest.mark.parametrize("filter", FILTERS)
@pytest.mark.parametrize("mode", WRAPS, ids=lambda m: m.name)
def test_eval_matches_numpy(dim, dtype, filter, mode):
    shape = SHAPES[dim]
    texels = np.random.default_rng(11).uniform(-1, 1, shape).astype(dtype)
    pos = positions(dim, dtype, shape)
    got = read(make_texture(dim, dtype, texels, filter, mode), pos, filter, dtype)
    assert got.dtype == dtype and got.shape == (len(pos[0]), shape[-1])
    np.testing.assert_allclose(got, reference(texels.astype(np.float64), pos, filter, mode),
                               rtol=0, atol=2e-6 if dtype == np.float32 else 1e-12)


def test_vector_positions_and_texel_centers():
    texels = np.arange(12, dtype=np.float32).reshape(2, 3, 2)
    texture = make_texture(2, np.float32, texels, "linear", kl.WrapMode.Clamp)
    x, y = kl.Float([0.5 / 3, 2.5 / 3]), kl.Float([0.25, 0.75])
    from_vector = np.stack([c.numpy() for c in texture.eval(kl.Array2f(x, y))], axis=1)
    from_list = np.stack([c.numpy() for c in texture.eval((x, y))], axis=1)
    np.testing.assert_allclose(from_vector, [[0, 1], [10, 11]], atol=1e-6)  # texel centers: the texels
    np.testing.assert_array_equal(from_list, from_vector)
    texture3 = kl.Texture3f([2, 2, 2], 1)
    assert texture3.eval(kl.Array3f(0.5, 0.5, 0.5))[0].numpy().tolist() == [0.0]


@pytest.mark.parametrize("filter", FILTERS)
def test_non_finite_and_inactive_lanes(filter):
    texture = make_texture(1, np.float32, np.array([[1], [2], [3]], np.float32), filter, kl.WrapMode.Repeat)
    pos = [np.array([np.nan, np.inf, -np.inf, 1e30, -1e30, 0.5], np.float32)]
    got = read(texture, pos, filter, np.float32, kl.Bool([True] * 5 + [False]))[:, 0]
    assert np.isnan(got[:3]).all()  # a non-finite coordinate: NaN
    assert np.isfinite(got[3:5]).all() and (got[3:5] >= 1).all() and (got[3:5] <= 3).all()
    assert got[5] == 0  # inactive: 0
    clamped = make_texture(1, np.float32, np.array([[1], [2], [3]], np.float32), filter, kl.WrapMode.Clamp)
    if filter != "cubic":
        assert read(clamped, [np.array([1e30, -1e30], np.float32)], filter, np.float32)[:, 0].tolist() == [3, 1]


def test_shape_value_and_setters():
    texture = kl.Texture3f((2, 3, 4), 5, kl.FilterMode.Nearest, kl.WrapMode.Mirror)
    assert texture.shape == (2, 3, 4, 5) and texture.channels == 5
    assert texture.filter_mode == kl.FilterMode.Nearest and texture.wrap_mode == kl.WrapMode.Mirror
    assert (texture.value().numpy() == 0).all() and texture.value().size() == 120
    t1 = kl.Texture1f([2], 1)
    t1.set_value(kl.Float([4, 8]))
    assert t1.eval(kl.Float(0.5))[0].numpy().tolist() == [6]
    t1.set_tensor(kl.TensorXf(kl.Float([1, 2, 3, 4, 5, 6]), [3, 2]))
    assert t1.shape == (3, 2)
    assert t1.tensor().shape == (3, 2)
    np.testing.assert_array_equal(t1.tensor().array.numpy(), [1, 2, 3, 4, 5, 6])


def test_bad_input_raises():
    with pytest.raises(ValueError, match=r"Texture2f\(\): a 2-D texture needs the shape \(height, width, channels\); got \(6,\)"):
        kl.Texture2f(kl.TensorXf(kl.Float(np.zeros(6, np.float32))))
    with pytest.raises(ValueError, match="a resolution of 0"):
        kl.Texture2f([0, 3], 1)
    with pytest.raises(ValueError, match="no channels"):
        kl.Texture2f([2, 3], 0)
    with pytest.raises(ValueError, match="must not be negative"):
        kl.Texture2f([2, 3], -1)
    with pytest.raises(ValueError, match=r"Texture2f\(\): shape has 3 entries; a 2-D texture needs 2"):
        kl.Texture2f([2, 3, 4], 1)
    with pytest.raises(ValueError, match="exceeds the largest supported"):
        kl.Texture1f([2**30 + 1], 1)
    with pytest.raises(kl.SizeError, match=r"11 elements given for a texture of shape \(2, 2, 3\) \(12 elements\)"):
        kl.Texture2f([2, 2], 3).set_value(kl.Float(np.zeros(11, np.float32)))
    with pytest.raises(TypeError):
        kl.Texture2f([2, 2], 1).eval(kl.Float(0.5))  # one coordinate for a 2-D texture
    with pytest.raises(TypeError):
        kl.Texture2f([2, 2], 1).eval([kl.Float(0.5)] * 3)
    with pytest.raises(TypeError):
        kl.Texture2f([2, 2], 1, "linear")
    with pytest.raises(kl.SizeError, match=r"Texture2f.eval\(\): the coordinates have 3, 2 lanes and the mask 1"):
        kl.Texture2f([2, 2], 1).eval([kl.Float([0.1, 0.2, 0.3]), kl.Float([0.1, 0.2])])
    with pytest.raises(kl.SizeError, match=r"eval_cubic\(\): the coordinates have 2, 1 lanes and the mask 3"):
        kl.Texture2f([2, 2], 1).eval_cubic([kl.Float([0.1, 0.2]), kl.Float(0.5)], kl.Bool([True, False, True]))


# ---- gradients ------------------------------------------------------------------------------

@pytest.mark.parametrize("dim", [1, 2, 3])
@pytest.mark.parametrize("filter", ["linear", "cubic"])
def test_gradients_on_texels_and_positions(dim, filter):
    shape = SHAPES[dim]
    rng = np.random.default_rng(5)
    texels = kl.Float64(rng.uniform(-1, 1, int(np.prod(shape))))
    pos = [kl.Float64(rng.uniform(-0.4, 1.4, 9)) for _ in range(dim)]
    mode = WRAPS[dim - 1]

    def f(texels, *pos):
        texture = kl.__dict__[f"Texture{dim}f64"](kl.TensorXd(texels, list(shape)), kl.FilterMode.Linear, mode)
        arg = pos[0] if dim == 1 else list(pos)
        return tuple(texture.eval_cubic(arg) if filter == "cubic" else texture.eval(arg))

    kl.check_grads(f, (texels, *pos))


def test_nearest_gradients_reach_texels():
    rng = np.random.default_rng(7)
    pos = [kl.Float64(rng.uniform(-0.4, 1.4, 9)) for _ in range(2)]

    def f(texels):
        texture = kl.Texture2f64(kl.TensorXd(texels, [3, 2, 2]), kl.FilterMode.Nearest, kl.WrapMode.Repeat)
        return tuple(texture.eval(pos))

    kl.check_grads(f, (kl.Float64(rng.uniform(-1, 1, 12)),))


def test_non_finite_lanes_leave_gradients_finite():
    texels = kl.Float64([1.0, 2.0, 3.0])
    pos = kl.Float64([0.4, np.nan, np.inf])
    kl.enable_grad(texels, pos)
    out = kl.Texture1f64(kl.TensorXd(texels, [3, 1])).eval(pos)[0]
    kl.backward(kl.sum(out * kl.Float64([1.0, 0.0, 0.0])))
    g = kl.grad(texels).numpy()
    assert np.isfinite(g).all() and abs(g.sum() - 1) < 1e-12
    assert abs(kl.grad(pos).numpy()[0] - 3.0) < 1e-12  # resolution times the slope
