"""Zero-copy interop with NumPy, DLPack and PyTorch: memory is shared, kept alive and not copied."""

import gc

import numpy as np
import pytest

import kiln as kl

DTYPES = {np.bool_: kl.Bool, np.int32: kl.Int32, np.uint32: kl.UInt32, np.int64: kl.Int64,
          np.uint64: kl.UInt64, np.float32: kl.Float, np.float64: kl.Float64}
DTYPE_IDS = [d.__name__ for d in DTYPES]
ALL_TYPES = kl.ARRAY_TYPES + kl.VECTOR_TYPES + kl.MATRIX_TYPES


def address(array):
    """The data pointer of a NumPy array."""
    return array.__array_interface__["data"][0]


def sample(dtype, n=5):
    """n distinct values of `dtype` (for bool: alternating, starting with False)."""
    return (np.arange(n) % 2).astype(dtype) if dtype is np.bool_ else np.arange(10, 10 + n).astype(dtype)


def other(value):
    """A value of the same NumPy type that differs from `value`."""
    return type(value)(not value) if isinstance(value, np.bool_) else type(value)(value + 100)


def instance(kind):
    """A 4-lane value of any array, vector or matrix type."""
    if kind in kl.ARRAY_TYPES:
        return kind(sample(next(d for d, k in DTYPES.items() if k is kind), 4))
    if kind in kl.MATRIX_TYPES:
        n = len(kind.identity())
        return kind(np.arange(4 * n * n, dtype=np.float32).reshape(4, n, n))
    component = type(kind().x)
    dtype = next(d for d, k in DTYPES.items() if k is component)
    return kind(np.arange(4 * len(kind()), dtype=dtype).reshape(4, len(kind())))


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_wrapped_numpy_shares_memory(dtype):
    a = sample(dtype)
    x = DTYPES[dtype](a)
    assert address(x.numpy()) == address(a), "the constructor copied a C-contiguous array of the same dtype"
    a[0] = other(a[0])
    assert x[0] == a[0], "a write into the NumPy array is not seen by x[0]"
    np.testing.assert_array_equal(x.numpy(), a)


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_scatter_into_wrapped_array_writes_numpy_memory(dtype):
    a = sample(dtype)
    x = DTYPES[dtype](a)
    value = other(a[2])
    kl.scatter(x, DTYPES[dtype]([value.item()]), kl.UInt32([2]))
    x[3] = other(a[3]).item()
    kl.eval(x)
    assert a[2] == value and a[3] == other(sample(dtype)[3]), f"NumPy memory not written: {a}"
    assert address(x.numpy()) == address(a)


def test_scatter_into_a_wrapped_array_with_an_exported_view_writes_a_copy():
    """The documented rule: Kiln's writes reach the wrapped NumPy memory only while nothing
    else refers to the array's value; an exported view is such a reference (the view must
    keep its values), so the write goes to a copy and the NumPy array stops seeing x."""
    a = np.zeros(4, np.float32)
    x = kl.Float(a)
    view = x.numpy()
    x[1] = 5.0
    kl.eval(x)
    assert x.numpy().tolist() == [0.0, 5.0, 0.0, 0.0]
    assert a.tolist() == [0.0] * 4 and view.tolist() == [0.0] * 4
    del view
    x[2] = 7.0  # x now owns the copy: the NumPy array stays unaliased
    kl.eval(x)
    assert a.tolist() == [0.0] * 4 and x.numpy().tolist() == [0.0, 5.0, 7.0, 0.0]


def test_numpy_export_shares_memory_with_kiln():
    x = kl.arange(kl.Float, 6) * 2.0
    first, second = x.numpy(), x.numpy()
    assert address(first) == address(second)
    assert address(np.asarray(x)) == address(first)
    first[1] = 42.0
    assert x[1] == 42.0
    assert kl.sum(x).item() == 42.0 + 2 * (0 + 2 + 3 + 4 + 5)
    np.testing.assert_array_equal((x + 1.0).numpy(), [1.0, 43.0, 5.0, 7.0, 9.0, 11.0])
    np.testing.assert_array_equal(kl.gather(x, kl.UInt32([1])).numpy(), [42.0])


@pytest.mark.parametrize("make", [lambda: kl.zeros(kl.Float, 4), lambda: kl.full(kl.Float, 2.0, 4),
                                  lambda: kl.opaque(kl.Float, 3.0, 4), lambda: kl.linspace(kl.Float, 0, 1, 4),
                                  lambda: kl.Float(5.0)],
                         ids=["zeros", "full", "opaque", "linspace", "scalar"])
def test_numpy_writes_into_evaluated_literals_are_seen(make):
    x = make()
    view = x.numpy()
    view[0] = 42.0
    assert address(x.numpy()) == address(view)
    assert x[0] == 42.0 and (x + 1.0)[0] == 43.0


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_numpy_export_dtype_and_values(dtype):
    a = sample(dtype)
    x = DTYPES[dtype](list(a.tolist()))
    exported = x.numpy()
    assert exported.dtype == a.dtype and exported.shape == a.shape
    np.testing.assert_array_equal(np.asarray(x), a)


def test_asarray_converts_and_array_copies():
    x = kl.Float([1.5, 2.5, 3.5])
    converted = np.asarray(x, dtype=np.float64)
    assert converted.dtype == np.float64
    np.testing.assert_array_equal(converted, [1.5, 2.5, 3.5])
    assert not np.shares_memory(converted, x.numpy())
    same = np.asarray(x, dtype=np.float32)
    assert address(same) == address(x.numpy())
    copied = np.array(x)
    copied[0] = 9.0
    assert x[0] == 1.5, "np.array(x) (copy=True) wrote Kiln's memory"


def test_export_outlives_the_array():
    x = kl.arange(kl.Int32, 6) * 3
    exported = x.numpy()
    del x
    gc.collect()
    churn = [kl.arange(kl.Int32, 6) + 100 for _ in range(20)]
    kl.eval(*churn)
    np.testing.assert_array_equal(exported, [0, 3, 6, 9, 12, 15])
    exported[0] = 7  # still writable memory of its own
    assert exported[0] == 7


def test_wrapped_numpy_outlives_its_name():
    a = np.arange(6, dtype=np.float32) * 2
    x = kl.Float(a)
    where = address(a)
    del a
    gc.collect()
    churn = [np.full(6, -1.0, np.float32) for _ in range(100)]
    assert churn[0][0] == -1.0
    np.testing.assert_array_equal(x.numpy(), [0, 2, 4, 6, 8, 10])
    assert address(x.numpy()) == where, "the wrapped memory was replaced"
    np.testing.assert_array_equal((x + 1.0).numpy(), [1, 3, 5, 7, 9, 11])


@pytest.mark.parametrize("kind", ALL_TYPES, ids=lambda t: t.__name__)
def test_dlpack_protocol_exists(kind):
    assert callable(getattr(kind, "__dlpack__", None))
    assert callable(getattr(kind, "__dlpack_device__", None))
    assert instance(kind).__dlpack_device__() == (1, 0)


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_np_from_dlpack_round_trips_without_copy(dtype):
    x = DTYPES[dtype](sample(dtype))
    exported = x.numpy()
    via_dlpack = np.from_dlpack(x)
    assert via_dlpack.dtype == exported.dtype
    assert address(via_dlpack) == address(exported), "np.from_dlpack(x) copied"
    np.testing.assert_array_equal(via_dlpack, sample(dtype))


@pytest.mark.parametrize("kind", kl.VECTOR_TYPES + kl.MATRIX_TYPES, ids=lambda t: t.__name__)
def test_np_from_dlpack_of_vectors_and_matrices(kind):
    value = instance(kind)
    np.testing.assert_array_equal(np.from_dlpack(value), value.numpy())


def test_dlpack_capsule_and_kiln_round_trip():
    x = kl.Float([1.0, 2.0, 3.0])
    capsule = x.__dlpack__()
    assert type(capsule).__name__ == "PyCapsule"
    y = kl.from_dlpack(x)
    assert type(y) is kl.Float and address(y.numpy()) == address(x.numpy())


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_kl_from_dlpack_follows_dtype_and_shares(dtype):
    a = sample(dtype)
    x = kl.from_dlpack(a)
    assert type(x) is DTYPES[dtype]
    assert address(x.numpy()) == address(a)
    a[1] = other(a[1])
    assert x[1] == a[1]
    kl.scatter(x, DTYPES[dtype]([other(a[4]).item()]), kl.UInt32([4]))
    kl.eval(x)
    assert a[4] == other(sample(dtype)[4])


@pytest.mark.parametrize("dtype, bits", [(np.float16, 16), (np.int8, 8), (np.uint8, 8), (np.int16, 16),
                                         (np.complex64, 64)], ids=lambda v: getattr(v, "__name__", str(v)))
def test_kl_from_dlpack_unsupported_dtype(dtype, bits):
    with pytest.raises(TypeError) as info:
        kl.from_dlpack(np.zeros(3, dtype))
    message = str(info.value)
    assert "from_dlpack" in message and f"{bits} bits" in message, message


VECTORS = [(kl.Array2f, np.float32), (kl.Array3f, np.float32), (kl.Array4f, np.float32), (kl.Array3u, np.uint32),
           (kl.Array2i, np.int32), (kl.Array3i, np.int32), (kl.Array3f64, np.float64)]


@pytest.mark.parametrize("kind, dtype", VECTORS, ids=lambda v: getattr(v, "__name__", ""))
def test_vector_numpy_shape_and_values(kind, dtype):
    n, size = 5, len(kind())
    component = type(kind().x)
    columns = [np.arange(n).astype(dtype) * (i + 1) + i for i in range(size)]
    value = kind(*[component(c) for c in columns])
    exported = value.numpy()
    assert exported.shape == (n, size) and exported.dtype == dtype
    np.testing.assert_array_equal(exported, np.stack(columns, axis=1))


@pytest.mark.parametrize("kind, dtype", VECTORS, ids=lambda v: getattr(v, "__name__", ""))
def test_vector_from_numpy_reads_components(kind, dtype):
    n, size = 4, len(kind())
    a = np.arange(n * size).astype(dtype).reshape(n, size)
    value = kind(a)
    for i, name in enumerate("xyzw"[:size]):
        np.testing.assert_array_equal(getattr(value, name).numpy(), a[:, i], err_msg=name)
        np.testing.assert_array_equal(value[i].numpy(), a[:, i], err_msg=name)
    assert value.size() == n


def test_vector_wrapping_numpy_reads_its_memory_until_evaluated():
    # A vector is a struct of arrays and the NumPy array interleaves them: the components
    # gather from the wrapped memory (no copy up front, the memory stays alive) and become
    # Kiln's own arrays once evaluated.
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    value = kl.Array3f(a)
    a[0, 1] = 99.0
    assert value.y[0] == 99.0, "the (n, 3) constructor copied a C-contiguous array"
    np.testing.assert_array_equal(value.z.numpy(), [2.0, 5.0])
    del a
    gc.collect()
    np.testing.assert_array_equal(value.x.numpy(), [0.0, 3.0])


@pytest.mark.parametrize("kind", kl.MATRIX_TYPES, ids=lambda t: t.__name__)
def test_matrix_numpy_round_trip(kind):
    n = len(kind.identity())
    a = np.arange(3 * n * n, dtype=np.float32).reshape(3, n, n)
    m = kind(a)
    assert m.numpy().shape == (3, n, n)
    np.testing.assert_array_equal(m.numpy(), a)
    np.testing.assert_array_equal(m[n - 1, 0].numpy(), a[:, n - 1, 0])


def test_torch_tensor_export_shares_memory():
    torch = pytest.importorskip("torch")
    x = kl.Float([1.0, 2.0, 3.0])
    t = x.torch()
    assert isinstance(t, torch.Tensor) and t.dtype == torch.float32
    assert t.data_ptr() == address(x.numpy())
    t[0] = 10.0
    assert x[0] == 10.0


def test_torch_from_dlpack():
    torch = pytest.importorskip("torch")
    x = kl.Int64([4, 5, 6])
    t = torch.from_dlpack(x)
    assert t.dtype == torch.int64 and t.tolist() == [4, 5, 6]
    assert t.data_ptr() == address(x.numpy())


def test_kiln_wraps_torch_tensor_without_copy():
    torch = pytest.importorskip("torch")
    t = torch.arange(5, dtype=torch.float32)
    x = kl.Float(t)
    assert address(x.numpy()) == t.data_ptr()
    t[2] = 50.0
    assert x[2] == 50.0
    kl.scatter(x, kl.Float([7.0]), kl.UInt32([0]))
    kl.eval(x)
    assert t[0].item() == 7.0
    y = kl.from_dlpack(t)
    assert type(y) is kl.Float and address(y.numpy()) == t.data_ptr()
