"""A new user's first hour with Kiln, as a program: tests/python/test_stubs.py type-checks it
with mypy against the installed stub (it must pass cleanly) and runs it. Arrays and NumPy,
math, vectors, a while_loop, reverse-mode derivatives and tensors."""

import numpy as np

import kiln as kl

# Arrays: lazy until read; NumPy arrays in and out.
x = kl.linspace(kl.Float, -1.0, 1.0, 1000)
y = kl.select(x > 0, kl.sqrt(x), x * x) * 0.5
total: float = kl.sum(y).item()
samples = kl.Float(np.arange(8, dtype=np.float32))
doubled: np.ndarray = (samples * 2 + 1).numpy()
assert abs(total - float(np.sum(np.where(np.linspace(-1, 1, 1000) > 0, np.sqrt(np.abs(np.linspace(-1, 1, 1000))),
                                         np.linspace(-1, 1, 1000) ** 2) * 0.5))) < 1e-2
assert doubled[3] == 7.0

# Math on integers and a histogram by atomic scatter-add.
bins = kl.zeros(kl.UInt32, 4)
index = kl.arange(kl.UInt32, 100) % 4
kl.scatter_add(bins, kl.UInt32(1), index)
assert list(bins.numpy()) == [25, 25, 25, 25]

# Vectors: structs of arrays.
p = kl.Array3f(x, y, kl.full(kl.Float, 2.0, 1000))
unit = kl.normalize(p)
lengths: kl.Float = kl.norm(unit)
height: kl.Float = p.y
assert np.allclose(lengths.numpy(), 1.0, atol=1e-5)
assert np.allclose(kl.dot(unit, p).numpy(), kl.norm(p).numpy(), rtol=1e-5)
assert height.numpy()[999] == 0.5


# A while_loop: Collatz steps for the starting values 1..99, lane by lane.
def not_done(value: kl.UInt32, steps: kl.UInt32) -> kl.Bool:
    return value != 1


def step(value: kl.UInt32, steps: kl.UInt32) -> tuple[kl.UInt32, kl.UInt32]:
    return kl.select(value % 2 == 0, value >> 1, value * 3 + 1), steps + 1


start = kl.arange(kl.UInt32, 1, 100)
_, steps = kl.while_loop((start, kl.zeros(kl.UInt32, 99)), not_done, step)
assert steps.numpy()[26] == 111  # 27 takes 111 steps

# Reverse-mode derivatives: d/da sum(sin(a) * a) = cos(a) * a + sin(a).
a = kl.Float(np.array([0.5, 1.0, 2.0], dtype=np.float32))
kl.enable_grad(a)
loss = kl.sum(kl.sin(a) * a)
kl.backward(loss)
expected = np.cos(a.numpy()) * a.numpy() + np.sin(a.numpy())
assert np.allclose(kl.grad(a).numpy(), expected, rtol=1e-5)

# Tensors: NumPy-style shapes, indexing and matmul.
t = kl.TensorXf(np.arange(12, dtype=np.float32).reshape(3, 4))
gram: kl.TensorXf = t @ t.T
first_row = t[0]
column_sums = t.sum(axis=0)
assert gram.shape == (3, 3)
assert np.allclose(np.asarray(gram), np.arange(12.0).reshape(3, 4) @ np.arange(12.0).reshape(3, 4).T)
assert list(first_row.numpy()) == [0, 1, 2, 3]
assert list(column_sums.numpy()) == [12, 15, 18, 21]
print("typing_program: ok")
