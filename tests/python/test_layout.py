"""Construction and shape with Dr.Jit's names: kl.ones, zeros/full/ones/empty of vectors
and matrices, repeat, tile and meshgrid (against NumPy), ravel/unravel, width and shape."""

import numpy as np
import pytest

import kiln as kl


def test_ones_and_composite_constructors():
    assert kl.ones(kl.Float, 3).numpy().tolist() == [1.0, 1.0, 1.0]
    z = kl.zeros(kl.Array3f, 4)
    assert type(z) is kl.Array3f and z.numpy().shape == (4, 3) and not z.numpy().any()
    np.testing.assert_array_equal(kl.full(kl.Array2u, 7, 2).numpy(), np.full((2, 2), 7, np.uint32))
    np.testing.assert_array_equal(kl.ones(kl.Matrix3f, 5).numpy(), np.ones((5, 3, 3), np.float32))
    assert kl.width(kl.empty(kl.Array4f, 6)) == 6
    with pytest.raises(ValueError, match="must not be negative"):
        kl.zeros(kl.Array3f, -1)


def test_repeat_and_tile_as_numpy():
    a = np.array([4, -1, 9], np.int32)
    np.testing.assert_array_equal(kl.repeat(kl.Int32(a), 2).numpy(), np.repeat(a, 2))
    np.testing.assert_array_equal(kl.tile(kl.Int32(a), 3).numpy(), np.tile(a, 3))
    assert kl.repeat(kl.Float([1.0]), 0).size() == 0


@pytest.mark.parametrize("indexing", ["xy", "ij"])
def test_meshgrid_as_numpy(indexing):
    x = np.array([0, 1, 2], np.float32)
    y = np.array([10, 20], np.float32)
    z = np.array([-1, -2, -3, -4], np.float32)
    got = kl.meshgrid(kl.Float(x), kl.Float(y), indexing=indexing)
    for g, want in zip(got, np.meshgrid(x, y, indexing=indexing)):
        np.testing.assert_array_equal(g.numpy(), want.ravel())
    got = kl.meshgrid(kl.Float(x), kl.Float(y), kl.Float(z), indexing=indexing)
    for g, want in zip(got, np.meshgrid(x, y, z, indexing=indexing)):
        np.testing.assert_array_equal(g.numpy(), want.ravel())
    with pytest.raises(ValueError, match="indexing must be 'xy'"):
        kl.meshgrid(kl.Float(x), kl.Float(y), indexing="yx")


def test_ravel_unravel_width_shape():
    v = kl.Array3f(kl.Float([1, 2]), kl.Float([3, 4]), kl.Float([5, 6]))
    flat = kl.ravel(v)
    assert flat.numpy().tolist() == [1, 3, 5, 2, 4, 6]
    np.testing.assert_array_equal(kl.unravel(kl.Array3f, flat).numpy(), v.numpy())
    assert kl.shape(v) == (3, 2)
    assert kl.shape(kl.Float([1, 2, 3])) == (3,)
    assert kl.shape(kl.Matrix2f.identity()) == (2, 2, 1)
    assert kl.width(v) == 2
    with pytest.raises(ValueError, match="not a whole number of 3-component"):
        kl.unravel(kl.Array3f, kl.Float([1, 2]))
