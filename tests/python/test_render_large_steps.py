"""kr.ad.LargeSteps (issue 30): the large steps parameterization of vertex positions (Nicolet et
al. 2021), as Mitsuba's mi.ad.LargeSteps, with a conjugate gradient solve in Kiln arrays.
Checked against a dense NumPy solve of (I + lambda L) v = u built independently here, for
values and for both modes of derivatives."""

import sys
from pathlib import Path

import numpy as np
import pytest

import kiln as kl
import kiln.render as kr

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "render"))

import scenes  # noqa: E402

LAMBDA = 19.0


def torus():
    scene = kr.load_dict({"type": "scene", "torus": {"type": "obj", "filename": str(scenes.DATA_DIR / "torus.obj")}})
    params = kr.traverse(scene)
    return params["torus.vertex_positions"], params["torus.faces"]


def dense_system(positions, faces, lambda_):
    """I + lambda L over the fused vertices, with the map from vertices to fused ones."""
    p = np.asarray(positions).reshape(-1, 3)
    _, first, fused = np.unique(p, axis=0, return_index=True, return_inverse=True)
    # Fused in order of appearance (np.unique sorts; renumber by first occurrence).
    order = np.argsort(first)
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    fused = rank[fused.ravel()]
    n = len(first)
    f = fused[np.asarray(faces).reshape(-1, 3)]
    adjacency = np.zeros((n, n))
    for a, b in [(0, 1), (1, 2), (2, 0)]:
        for i, j in zip(f[:, a], f[:, b]):
            if i != j:
                adjacency[i, j] = adjacency[j, i] = 1.0
    laplacian = np.diag(adjacency.sum(1)) - adjacency
    return np.eye(n) + lambda_ * laplacian, fused, first[order]


def test_round_trip_and_the_solve_match_a_dense_solve():
    positions, faces = torus()
    steps = kr.ad.LargeSteps(positions, faces, LAMBDA)
    matrix, fused, first = dense_system(positions, faces, LAMBDA)
    assert steps.n_verts == matrix.shape[0]
    p = np.asarray(positions, dtype=np.float64).reshape(-1, 3)
    u = np.asarray(steps.to_differential(positions), dtype=np.float64).reshape(-1, 3)
    np.testing.assert_allclose(u, matrix @ p[first], rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(np.asarray(steps.from_differential(steps.to_differential(positions))), np.asarray(positions),
                               atol=2e-4)
    # Another right-hand side: the solve against NumPy's.
    b = np.random.default_rng(1).normal(size=u.shape)
    v = np.asarray(steps.from_differential(kl.Float(b.astype(np.float32).ravel())), dtype=np.float64).reshape(-1, 3)
    np.testing.assert_allclose(v, np.linalg.solve(matrix, b)[fused], atol=1e-4)


def test_derivatives_of_from_differential_are_solves():
    positions, faces = torus()
    steps = kr.ad.LargeSteps(positions, faces, LAMBDA)
    matrix, fused, _ = dense_system(positions, faces, LAMBDA)
    rng = np.random.default_rng(2)
    u = kl.Float(steps.to_differential(positions))
    kl.enable_grad(u)
    v = steps.from_differential(u)
    weights = rng.normal(size=len(v))
    kl.backward_from(v, kl.Float(weights.astype(np.float32)))
    # d<w, v>/du = M^-T (sum of w over each fused vertex's copies); M is symmetric.
    summed = np.zeros((matrix.shape[0], 3))
    np.add.at(summed, fused, weights.reshape(-1, 3))
    expected = np.linalg.solve(matrix, summed)
    np.testing.assert_allclose(np.asarray(kl.grad(u)).reshape(-1, 3), expected, atol=1e-4)
    # Forward mode: the tangent of v for a tangent of u is the solve of it.
    u2 = kl.Float(steps.to_differential(positions))
    kl.enable_grad(u2)
    v2 = steps.from_differential(u2)
    tangent = rng.normal(size=len(u2))
    kl.set_grad(u2, kl.Float(tangent.astype(np.float32)))
    np.testing.assert_allclose(np.asarray(kl.forward_to(v2)).reshape(-1, 3),
                               np.linalg.solve(matrix, tangent.reshape(-1, 3))[fused], atol=1e-4)


def test_a_step_on_u_moves_the_mesh_smoothly():
    """The point of the method: a gradient concentrated on one vertex spreads to its neighbours."""
    positions, faces = torus()
    steps = kr.ad.LargeSteps(positions, faces, LAMBDA)
    u = np.asarray(steps.to_differential(positions), dtype=np.float64).reshape(-1, 3)
    u[0, 1] += 1.0
    moved = np.asarray(steps.from_differential(kl.Float(u.astype(np.float32).ravel()))).reshape(-1, 3)
    shift = np.abs(moved - np.asarray(positions).reshape(-1, 3))[:, 1]
    assert (shift > 1e-3).sum() > 10 and shift.max() < 0.2


@pytest.mark.parametrize("make, error, words", [
    (lambda p, f: kr.ad.LargeSteps(p, f, -1.0), ValueError, "lambda_ must be a finite number"),
    (lambda p, f: kr.ad.LargeSteps(kl.Float([0.0, 1.0]), f), ValueError, "3 values per vertex"),
    (lambda p, f: kr.ad.LargeSteps(p, kl.UInt32([0, 1, 100000])), ValueError, "refers to vertex 100000"),
    (lambda p, f: kr.ad.LargeSteps(p, f).to_differential(kl.Float([1.0, 2.0, 3.0])), kl.SizeError, "3 per vertex"),
    (lambda p, f: kr.ad.LargeSteps(p, f).from_differential(kl.Float([1.0, 2.0, 3.0])), kl.SizeError,
     r"as to_differential\(\) gives"),
])
def test_bad_input_is_a_clear_error(make, error, words):
    positions, faces = torus()
    with pytest.raises(error, match=words):
        make(positions, faces)
