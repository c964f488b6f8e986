"""PyTorch interop with derivatives: Kiln functions inside torch's autograd (kl.wrap_torch,
reverse and forward mode, zero-copy) and torch functions inside Kiln's (kl.torch_op).
Skipped where PyTorch is not installed."""

import numpy as np
import pytest

import kiln as kl

torch = pytest.importorskip("torch")
from kiln.torch_interop import to_kiln, to_torch  # noqa: E402  (needs torch)


def kiln_fn(x, y):
    return kl.sin(x) * y + kl.sum(x * x)


def torch_fn(x, y):
    return torch.sin(x) * y + torch.sum(x * x)


def inputs(dtype=torch.float64, n=6):
    gen = torch.Generator().manual_seed(0)
    x = torch.rand(n, dtype=dtype, generator=gen).requires_grad_(True)
    y = torch.rand(n, dtype=dtype, generator=gen).requires_grad_(True)
    return x, y


def test_wrap_torch_reverse_mode_matches_torch():
    f = kl.wrap_torch(kiln_fn)
    x, y = inputs()
    out = f(x, y)
    assert isinstance(out, torch.Tensor) and out.dtype == torch.float64 and out.shape == (6,)
    seed = torch.linspace(-1, 1, 6, dtype=torch.float64)
    gx, gy = torch.autograd.grad(out, (x, y), seed)
    rx, ry = torch.autograd.grad(torch_fn(x, y), (x, y), seed)
    torch.testing.assert_close(out, torch_fn(x, y))
    torch.testing.assert_close(gx, rx)
    torch.testing.assert_close(gy, ry)


@pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated:FutureWarning")  # inside gradcheck
def test_wrap_torch_gradcheck_both_modes():
    f = kl.wrap_torch(kiln_fn)
    assert torch.autograd.gradcheck(f, inputs(), check_forward_ad=True, check_backward_ad=True)


def test_wrap_torch_forward_mode():
    import torch.autograd.forward_ad as fwAD

    f = kl.wrap_torch(kiln_fn)
    x, y = (t.detach() for t in inputs())
    dx = torch.ones_like(x)
    with fwAD.dual_level():
        out = f(fwAD.make_dual(x, dx), y)
        tangent = fwAD.unpack_dual(out).tangent
    torch.testing.assert_close(tangent, torch.cos(x) * y + 2 * x.sum())


def test_wrap_torch_float32_vectors_and_several_outputs():
    def fn(points, scale):
        return kl.normalize(points) * scale, kl.norm(points), kl.UInt32([1, 2, 3])

    f = kl.wrap_torch(fn)
    p = torch.tensor([[1.0, 2.0, 2.0], [0.0, 3.0, 4.0], [1.0, 0.0, 0.0]], requires_grad=True)
    s = torch.tensor(2.0, requires_grad=True)  # 0-D: a one-lane array
    unit, length, ids = f(p, s)
    assert unit.shape == (3, 3) and length.shape == (3,) and ids.dtype == torch.uint32
    assert not ids.requires_grad
    (unit.sum() + length.sum()).backward()
    pr = p.detach().clone().requires_grad_(True)
    sr = s.detach().clone().requires_grad_(True)
    ((pr / pr.norm(dim=1, keepdim=True) * sr).sum() + pr.norm(dim=1).sum()).backward()
    torch.testing.assert_close(p.grad, pr.grad)
    assert s.grad.shape == ()
    torch.testing.assert_close(s.grad, sr.grad)


def test_wrap_torch_backward_twice_with_retain_graph():
    f = kl.wrap_torch(lambda x: x * x * x)
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = f(x).sum()
    y.backward(retain_graph=True)
    y.backward()
    torch.testing.assert_close(x.grad, 2 * 3 * x.detach() ** 2)


def test_wrap_torch_passes_other_arguments_through():
    f = kl.wrap_torch(lambda x, k: x * k)
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    f(x, 3.0).sum().backward()
    torch.testing.assert_close(x.grad, torch.tensor([3.0, 3.0]))
    # Keyword arguments too (the PyTorch tutorial calls render_texture(t, spp=..., seed=...)),
    # in reverse and forward mode.
    g = kl.wrap(source="torch", target="drjit")(lambda x, scale=1.0, offset=0.0: x * scale + offset)
    x.grad = None
    g(x, scale=4.0, offset=1.0).sum().backward()
    torch.testing.assert_close(x.grad, torch.tensor([4.0, 4.0]))
    import torch.autograd.forward_ad as fwAD
    with fwAD.dual_level():
        dual = fwAD.make_dual(x.detach(), torch.tensor([1.0, -1.0]))
        torch.testing.assert_close(fwAD.unpack_dual(g(dual, scale=2.0)).tangent, torch.tensor([2.0, -2.0]))


def test_conversions_share_memory():
    t = torch.arange(5, dtype=torch.float32)
    a = to_kiln(t)
    assert type(a) is kl.Float and np.asarray(a).ctypes.data == t.data_ptr()
    back = to_torch(a)
    assert back.data_ptr() == t.data_ptr()
    v = to_kiln(torch.zeros(4, 3))
    assert type(v) is kl.Array3f
    m = to_kiln(torch.arange(14, dtype=torch.float32).reshape(2, 7))  # other shapes: a Kiln tensor
    assert type(m) is kl.TensorXf and m.shape == (2, 7) and m.numpy()[1, 6] == 13
    with pytest.raises(TypeError, match="no Kiln type"):
        to_kiln(torch.zeros((2, 7), dtype=torch.int64))


def test_wrap_torch_errors():
    f = kl.wrap_torch(lambda x: 1.0)
    with pytest.raises(TypeError, match="must return a Kiln value"):
        f(torch.zeros(2))


def test_torch_op_inside_kiln_both_modes():
    g = kl.torch_op(lambda t, s: torch.tanh(t) * s + t.pow(3))
    x = kl.Float64(np.linspace(-1, 1, 5))
    s = kl.Float64(np.linspace(0.5, 2, 5))
    kl.check_grads(lambda x, s: kl.exp(g(kl.sin(x), s)), (x, s))


def test_torch_op_several_outputs_and_reductions():
    g = kl.torch_op(lambda t: (t.sum() * t, torch.cumsum(t, 0)))
    x = kl.Float64(np.linspace(0.1, 1.0, 4))
    kl.check_grads(g, (x,))


def test_torch_inside_kiln_inside_torch():
    inner = kl.torch_op(lambda t: torch.sigmoid(t))
    f = kl.wrap_torch(lambda x: inner(x * 2.0) * x)
    x = torch.linspace(-1, 1, 5, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(f, (x,), check_forward_ad=True)
