"""What a NumPy / Dr.Jit user expects of Kiln values: Kiln's operators win against NumPy arrays
and scalars (gradients kept), conversions between Kiln types are lazy casts, and one-lane
arrays and one-element tensors convert to Python numbers."""

import operator

import numpy as np
import pytest

import kiln as kl
from checks import assert_same


# ---- NumPy operands: Kiln's operators win ------------------------------------------------------

ARITHMETIC = [operator.add, operator.sub, operator.mul, operator.truediv, operator.pow]
COMPARISONS = [operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne]


@pytest.mark.parametrize("op", ARITHMETIC + COMPARISONS, ids=lambda f: f.__name__)
def test_numpy_array_on_either_side_gives_a_kiln_value(op):
    x_values = np.array([0.5, 2.0, 3.0], np.float32)
    a = np.array([1.0, 2.0, 0.25])  # float64: converts to float32, as kl.Float(a) does
    for result, expected in ((op(kl.Float(x_values), a), op(x_values, a.astype(np.float32))),
                             (op(a, kl.Float(x_values)), op(a.astype(np.float32), x_values))):
        assert type(result) is (kl.Bool if op in COMPARISONS else kl.Float)
        np.testing.assert_allclose(result.numpy(), expected, rtol=1e-6)


@pytest.mark.parametrize("scalar", [np.float32(2), np.float64(2), np.int64(2), 2, 2.0],
                         ids=lambda s: type(s).__name__)
def test_numpy_and_python_scalars_on_either_side(scalar):
    x = kl.Float([1.0, 3.0])
    for result, expected in ((x * scalar, [2.0, 6.0]), (scalar * x, [2.0, 6.0]), (scalar + x, [3.0, 5.0]),
                             (x - scalar, [-1.0, 1.0]), (scalar - x, [1.0, -1.0])):
        assert type(result) is kl.Float
        assert_same(result.numpy(), np.array(expected, np.float32))
    assert type(scalar < x) is kl.Bool and (scalar < x).numpy().tolist() == [False, True]


def test_numpy_operands_keep_gradients():
    x = kl.Float([1.0, 2.0, 3.0])
    kl.enable_grad(x)
    weights = np.array([2.0, 3.0, 4.0], np.float32)
    y = weights * x + np.float64(1) + x * np.float32(2)
    assert type(y) is kl.Float
    kl.backward(kl.sum(y))
    assert_same(kl.grad(x).numpy(), weights + 2)


def test_numpy_operands_of_tensors():
    t = kl.TensorXf(np.arange(6, dtype=np.float32).reshape(2, 3))
    kl.enable_grad(t)
    row = np.array([1.0, 2.0, 3.0])
    y = row * t
    assert type(y) is kl.TensorXf and y.shape == (2, 3)
    np.testing.assert_allclose(y.numpy(), row * np.arange(6).reshape(2, 3))
    assert type(np.float32(2) * t) is kl.TensorXf
    assert type(row < t) is kl.TensorXb
    kl.backward(kl.TensorXf.sum(y))
    np.testing.assert_allclose(kl.grad(t).numpy(), np.broadcast_to(row, (2, 3)))


def test_numpy_scalars_defer_to_vectors():
    v = kl.Array3f(1.0, 2.0, 3.0)
    assert type(np.float32(2) * v) is kl.Array3f
    np.testing.assert_allclose((np.float64(2) * v).numpy(), [[2.0, 4.0, 6.0]])


def test_numpy_operand_follows_the_conversion_rule():
    with pytest.raises(TypeError, match="can change values"):
        kl.UInt32([1, 2]) + np.array([0.5, 1.5])
    with pytest.raises(TypeError):  # Kiln arrays are 1-D: use a tensor for n-d data
        kl.Float([1.0, 2.0]) * np.ones((2, 2))


def test_one_lane_kiln_arrays_do_not_pass_as_scalars():
    """float() works on one-lane arrays, yet one never turns into a literal of another type
    (that would mix types silently and drop its derivatives)."""
    with pytest.raises(TypeError):
        kl.Float([1.0]) + kl.Int32([1])
    y = kl.Float64([2.0])
    kl.enable_grad(y)
    with pytest.raises(TypeError):
        kl.Float([1.0]) * y


# ---- conversions between Kiln types --------------------------------------------------------------

def launches(fn):
    kl.kernel_history(clear=True)
    fn()
    return [h for h in kl.kernel_history() if h.get("kind", "kernel") != "library"]


def test_conversion_between_kiln_types_is_lazy_and_fuses():
    n = 1000
    u = kl.arange(kl.UInt32, n) * 3  # pending: the conversion must not evaluate it
    converted = []
    history = launches(lambda: converted.append(kl.Float(u)))
    assert history == []  # recorded, not launched
    y = converted[0] * 0.5 + 1.0
    assert len(launches(lambda: kl.eval(y))) == 1
    assert_same(y.numpy(), (np.arange(n, dtype=np.float32) * 3) * np.float32(0.5) + np.float32(1))


@pytest.mark.parametrize("to, source, values, expected", [
    (kl.Float, kl.UInt32, [1, 7], np.array([1, 7], np.float32)),
    (kl.Float64, kl.Int32, [-3, 4], np.array([-3, 4], np.float64)),
    (kl.Float, kl.Float64, [0.1, 2.5], np.array([0.1, 2.5], np.float32)),
    (kl.Int64, kl.Int32, [-3, 4], np.array([-3, 4], np.int64)),
    (kl.Int64, kl.UInt32, [3, 4], np.array([3, 4], np.int64)),
    (kl.UInt64, kl.UInt32, [3, 4], np.array([3, 4], np.uint64)),
    (kl.Int32, kl.Bool, [True, False], np.array([1, 0], np.int32)),
])
def test_conversions_that_keep_values(to, source, values, expected):
    assert_same(to(source(values)).numpy(), expected)


@pytest.mark.parametrize("to, source, values", [
    (kl.UInt32, kl.Float, [1.5]), (kl.Int32, kl.Float64, [2.0]), (kl.UInt32, kl.Int32, [-1]),
    (kl.Int32, kl.UInt32, [1]), (kl.Int32, kl.Int64, [1]), (kl.Bool, kl.Int32, [1]), (kl.Bool, kl.Float, [1.0]),
])
def test_conversions_that_can_change_values_name_kl_cast(to, source, values):
    with pytest.raises(TypeError, match=r"kl\.cast\(kl\." + to.__name__):
        to(source(values))
    assert len(kl.cast(to, source(values))) == 1


def test_conversion_keeps_gradients():
    x = kl.Float([1.0, 2.0])
    kl.enable_grad(x)
    y = kl.Float64(x) * 3.0
    kl.backward(kl.sum(y))
    assert_same(kl.grad(x).numpy(), np.array([3.0, 3.0], np.float32))


# ---- bool(), float(), int(), item() --------------------------------------------------------------

def test_one_lane_arrays_convert_to_python_numbers():
    assert float(kl.Float(2.5)) == 2.5 and type(float(kl.Int32(-3))) is float
    assert int(kl.Float(-2.7)) == -2 and int(kl.UInt64(2**64 - 1)) == 2**64 - 1
    assert int(kl.Bool(True)) == 1 and type(int(kl.Bool(True))) is int
    assert float(kl.Float([4.0]) * 2) == 8.0
    with pytest.raises(TypeError, match="has 2 elements"):
        float(kl.Float([1.0, 2.0]))
    with pytest.raises(TypeError, match="has 0 elements"):
        int(kl.Int32([]))
    with pytest.raises(ValueError):
        int(kl.Float(float("nan")))


@pytest.mark.parametrize("cls, dtype, value", [(kl.TensorXf, np.float32, -1.5), (kl.TensorXd, np.float64, 2.0),
                                               (kl.TensorXi, np.int32, -3), (kl.TensorXu, np.uint32, 4)])
def test_one_element_tensors_have_a_value(cls, dtype, value):
    for shape in ([], [1], [1, 1]):
        t = cls(np.array(value, dtype).reshape(shape))
        assert t.item() == value and float(t) == float(value) and int(t) == int(value)
        assert bool(t) is True and bool(t < value) is False and bool(t == value) is True


def test_bool_of_a_tensor_uses_its_value():
    """bool(t < 0) used to be True for [False] (Python fell back to len())."""
    t = kl.TensorXf(np.array([1.0], np.float32))
    assert bool(t < 0) is False and bool(t > 0) is True
    assert bool(kl.TensorXf(np.zeros((1, 1), np.float32))) is False
    many = kl.TensorXf(np.zeros((2, 3), np.float32))
    with pytest.raises(ValueError, match=r"shape \(2, 3\) has 6 elements.*kl.any\(\) or kl.all\(\)"):
        bool(many < 0)
    with pytest.raises(TypeError, match="6 elements"):
        float(many)
    with pytest.raises(ValueError, match="6 elements"):
        many.item()
