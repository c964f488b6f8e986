"""CustomOp from Python: user-supplied derivatives checked against finite differences, AD
inside the callbacks, and the lifetime of the hub node and its graph."""

import gc
import weakref

import numpy as np

import kiln as kl
from test_autodiff import F64, INDEX, SIGNED, f64


class Square(kl.CustomOp):
    def eval(self, x):
        assert not kl.grad_enabled(x)
        self.x = x
        return x * x

    def forward(self, dx):
        return 2.0 * self.x * dx

    def backward(self, g):
        return 2.0 * self.x * g


class GatherScale(kl.CustomOp):
    """Two outputs from three inputs, one of them an index (no gradient)."""

    def eval(self, source, index, scale):
        self.index, self.scale, self.size = index, scale, len(source)
        self.gathered = kl.gather(source, index)
        return self.gathered * scale, kl.sum(source)

    def forward(self, d_source, d_index, d_scale):
        return kl.gather(d_source, self.index) * self.scale + self.gathered * d_scale, kl.sum(d_source)

    def backward(self, g_scaled, g_sum):
        g_source = kl.zeros(F64, self.size) + g_sum
        kl.scatter_add(g_source, g_scaled * self.scale, self.index)
        return g_source, None, kl.sum(g_scaled * self.gathered)


def test_custom_op_gradients():
    kl.check_grads(lambda x: kl.sin(kl.custom(Square, x)), (SIGNED,))
    kl.check_grads(lambda s, k: kl.custom(GatherScale, s, INDEX, k), (f64([1.0, -2.0, 3.0, 0.5, 4.0]), F64(1.5)))


class NestedExp(kl.CustomOp):
    """Derivatives computed with AD inside the callbacks (nested traversals)."""

    def eval(self, x):
        self.x = x
        return kl.exp(x) * x

    def _fresh(self):
        x = F64(self.x)
        kl.enable_grad(x)
        return x, kl.exp(x) * x

    def forward(self, dx):
        x, y = self._fresh()
        kl.forward_from(x, dx)
        return kl.grad(y)

    def backward(self, g):
        x, y = self._fresh()
        kl.backward_from(y, g)
        return kl.grad(x)


def test_custom_op_with_ad_inside_its_callbacks():
    kl.check_grads(lambda x: kl.custom(NestedExp, kl.sin(x)) * x, (SIGNED,))
    # one custom op feeding another
    kl.check_grads(lambda x: kl.custom(Square, kl.custom(NestedExp, x)), (SIGNED,))


def test_custom_op_is_kept_alive_with_its_outputs():
    x = f64([1.0, 2.0])
    kl.enable_grad(x)
    op = Square()
    ref = weakref.ref(op)
    y = kl.custom(op, x)
    del op
    gc.collect()
    assert ref() is not None
    kl.backward_from(y, 1.0)
    np.testing.assert_allclose(kl.grad(x).numpy(), [2, 4])
    del y
    gc.collect()
    assert ref() is None


def test_custom_op_without_derivatives_inputs():
    y = kl.custom(Square, f64([3.0]))
    assert not kl.grad_enabled(y) and y.numpy()[0] == 9.0


def test_custom_op_graph_is_freed():
    gc.collect()
    before = kl._kiln._ad_counts()
    x = f64([1.0, 2.0])
    kl.enable_grad(x)
    y = kl.custom(NestedExp, kl.custom(Square, x))
    kl.backward_from(y, 1.0)
    kl.forward(x)
    del x, y
    gc.collect()
    assert kl._kiln._ad_counts() == before
