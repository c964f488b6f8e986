"""Bad input raises a specific Python exception naming the operation and the values, and never crashes."""

import builtins
import re
import subprocess
import sys

import numpy as np
import pytest

import kiln as kl



def namespace():
    """The names every case's code may use (fresh arrays per case)."""
    x3 = kl.Float([1.0, 2.0, 3.0])
    return {"kl": kl, "np": np, "x3": x3, "x5": kl.arange(kl.Float, 5), "i3": kl.UInt32([0, 1, 2]),
            "m3": kl.Bool([True, False, True]), "t3": kl.Float([0.0, 0.0, 0.0]), "v3": kl.Array3f(x3, x3, x3)}


def check_message(code, message, patterns):
    missing = [p for p in patterns if not re.search(p, message)]
    assert not missing, f"{code}: the message does not name {missing}: {message!r}"


def expect(code, exc, patterns):
    """Runs `code` in this interpreter and checks the exception and its message."""
    with pytest.raises(exc) as info:
        exec(code, namespace())
    check_message(code, str(info.value), patterns)


def case(code, exc, *patterns):
    return pytest.param(code, exc, patterns, id=code)


def run_python(code, timeout=120):
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout)

ISOLATED = """
import kiln as kl
try:
    exec({code!r})
except BaseException as e:
    print("raised", type(e).__name__)
    print(e)
else:
    print("raised nothing")
"""


TYPE_CASES = [
    case("kl.Float([1.0]) + kl.Int32([1])", TypeError, r"\+", "Float", "Int32"),
    case("kl.Int32([1]) * kl.Float([1.0])", TypeError, r"\*", "Int32", "Float"),
    case("kl.Float([1.0]) - kl.Float64([1.0])", TypeError, "-", "Float", "Float64"),
    case("kl.Int32([1]) + 1.5", TypeError, r"\+", "Int32", "float"),
    case("x3 + 'a'", TypeError, r"\+", "Float", "str"),
    case("x3 < 'a'", TypeError, "<", "Float", "str"),
    case("v3 + kl.Array3i(kl.Int32([1]), kl.Int32([1]), kl.Int32([1]))", TypeError, r"\+", "Array3f", "Array3i"),
    case("kl.Matrix2f.identity() @ v3", TypeError, "@", "Matrix2f", "Array3f"),
    case("kl.sqrt('a')", TypeError, "sqrt", "str"),
    case("kl.Int32(1.5)", TypeError, "Int32", "float"),
    case("kl.Float('abc')", TypeError, "Float", "str"),
    case("kl.PCG32('4')", TypeError, "PCG32", "str"),
    case("kl.gather(x3, kl.Int32([0]))", TypeError, "gather", "Int32"),
    case("kl.gather(x3, kl.Float([0.0]))", TypeError, "gather", r"Float, kiln\._kiln\.Float"),
    case("kl.scatter(kl.Int32([0, 0, 0]), x3, i3)", TypeError, "scatter", "Int32", "Float"),
    case("kl.select(kl.Int32([1, 0, 1]), x3, x3)", TypeError, "select", "Int32"),
    case("x3[1.5]", TypeError, "__getitem__", "float"),
    case("kl.set_flag(kl.Flag.Checks, 'yes')", TypeError, "set_flag", "str"),
    case("kl.eval(object())", TypeError, "eval", "object"),
    case("kl.eval(1)", TypeError, "eval", "int"),
    case("kl.eval(np.ones(3))", TypeError, "eval", "ndarray"),
    case("kl.eval([x3, object()])", TypeError, "eval", "object"),
    case("kl.schedule(object())", TypeError, "schedule", "object"),
    case("kl.set_label(object(), 'a')", TypeError, "set_label", "object"),
    case("kl.graphviz(1)", TypeError, "graphviz", "int"),
    case("kl.make_opaque('a')", TypeError, "make_opaque", "str"),
]


@pytest.mark.parametrize("code, exc, patterns", TYPE_CASES)
def test_wrong_types(code, exc, patterns):
    expect(code, exc, patterns)


SIZE_CASES = [
    case("kl.Float([1.0, 2.0, 3.0]) + kl.arange(kl.Float, 5)", kl.SizeError, "Add", r"\b3\b", r"\b5\b"),
    case("x5 - x3", kl.SizeError, "Sub", r"\b5\b", r"\b3\b"),
    case("kl.fma(x3, x5, x3)", kl.SizeError, "Fma", r"\b3\b", r"\b5\b"),
    case("kl.select(m3, x5, x5)", kl.SizeError, "Select", r"\b3\b", r"\b5\b"),
    case("kl.gather(x3, kl.UInt32([0, 1, 2, 0, 1]), m3)", kl.SizeError, "gather", r"\b3\b", r"\b5\b"),
    case("kl.scatter(t3, x3, kl.UInt32([0, 1, 2, 0, 1]))", kl.SizeError, "scatter", r"\b3\b", r"\b5\b"),
    case("kl.dot(x3, x5)", kl.SizeError, r"dot|Mul", r"\b3\b", r"\b5\b"),
    # Vectors are structs of arrays: the sizes meet when the vector is used as a whole.
    case("kl.Array3f(x3, x5, x3).numpy()", kl.SizeError, "flatten", r"\b3\b", r"\b5\b"),
    case("kl.zeros(kl.Float, -1)", ValueError, "zeros", "-1"),
    case("kl.full(kl.Float, 1.0, -1)", ValueError, "full", "-1"),
    case("kl.empty(kl.Float, -1)", ValueError, "empty", "-1"),
    case("kl.opaque(kl.Float, 1.0, -1)", ValueError, "opaque", "-1"),
    case("kl.arange(kl.Float, -1)", ValueError, "arange", "-1"),
    case("kl.arange(kl.UInt32, -1)", ValueError, "arange", "-1"),
    case("kl.linspace(kl.Float, 0.0, 1.0, -1)", ValueError, "linspace", "-1"),
    case("kl.PCG32(-1)", ValueError, "PCG32", "-1"),
    case("kl.block_sum(x3, -1)", ValueError, "block_sum", "-1"),
    case("kl.block_sum(x3, 0)", ValueError, "block_sum", "block"),
    case("kl.set_memory_cache_limit(-1)", ValueError, "set_memory_cache_limit", "-1"),
]


@pytest.mark.parametrize("code, exc, patterns", SIZE_CASES)
def test_bad_sizes(code, exc, patterns):
    expect(code, exc, patterns)


HUGE_CASES = [
    case("kl.empty(kl.Float, 2**50)", (MemoryError, ValueError), "empty", str(2**50)),
    case("x = kl.zeros(kl.Float, 2**62); kl.eval(x)", (MemoryError, ValueError), f"{2**62}|{2**64}"),
    case("x = kl.full(kl.Float, 1.0, 2**62); kl.eval(x)", (MemoryError, ValueError), f"{2**62}|{2**64}"),
    case("x = kl.zeros(kl.Float, 2**62) + 1.0; kl.eval(x)", (MemoryError, ValueError), f"{2**62}|{2**64}"),
    case("kl.eval(kl.zeros(kl.Float, 2**60))", (MemoryError, ValueError), f"{2**60}|{2**62}"),
    case("kl.arange(kl.UInt32, 2**33)", ValueError, "arange", str(2**33)),
    # Both are built on the lane counter, which names itself (arange) and the limit.
    case("kl.linspace(kl.Float, 0.0, 1.0, 2**62)", ValueError, "lanes exceed", str(2**62)),
    case("kl.PCG32(2**62)", ValueError, "lanes exceed", str(2**62)),
]


@pytest.mark.parametrize("code, exc, patterns", HUGE_CASES)
def test_huge_sizes(code, exc, patterns):
    """Each in its own interpreter, so that a crash fails the case instead of the test run."""
    result = run_python(ISOLATED.format(code=code))
    assert result.returncode == 0, f"{code} crashed (exit code {result.returncode}): {result.stderr[-2000:]}"
    first, _, message = result.stdout.partition("\n")
    name = first.removeprefix("raised ").strip()
    raised = getattr(builtins, name, None) or getattr(kl, name, None)
    assert isinstance(raised, type) and issubclass(raised, exc), f"{code}: expected {exc}, got {first!r} {message!r}"
    check_message(code, message, patterns)


INDEX_CASES = [
    case("x3[10]", IndexError, "__getitem__", r"\b10\b", "3 elements"),
    case("x3[3]", IndexError, "__getitem__", r"\b3\b", "3 elements"),
    case("x3[-4]", IndexError, "__getitem__", "-4", "3 elements"),
    case("x3[10] = 1.0", IndexError, "__setitem__", r"\b10\b", "3 elements"),
    case("x3[-4] = 1.0", IndexError, "__setitem__", "-4", "3 elements"),
    case("kl.Float()[0]", IndexError, "__getitem__", r"\b0\b", "0 elements"),
    case("v3[3]", IndexError, "__getitem__", r"\b3\b", "3 elements"),
    case("v3[-4] = x3", IndexError, "__setitem__", "-4", "3 elements"),
    case("kl.Matrix2f.identity()[2, 0]", IndexError, r"\b2\b", "2 elements"),
]

CHECKED_CASES = [
    case("kl.gather(x3, kl.UInt32([0, 5])).numpy()", IndexError, "Gather", r"\b5\b", "3 elements"),
    case("kl.gather(x3, kl.UInt32([0, 5]))[0]", IndexError, "Gather", r"\b5\b", "3 elements"),
    case("kl.gather(kl.Array3f, kl.Float([1, 2, 3, 4, 5, 6]), kl.UInt32([0, 2])).numpy()", IndexError, "Gather",
         "6 elements"),
    case("kl.scatter(t3, kl.Float([1.0, 2.0]), kl.UInt32([0, 7])); kl.eval(t3)", IndexError, "Scatter", r"\b7\b",
         "3 elements"),
    case("kl.scatter(t3, kl.Float([1.0, 2.0]), kl.UInt32([0, 7])); t3.numpy()", IndexError, "Scatter", r"\b7\b"),
    case("kl.scatter_add(t3, kl.Float([1.0]), kl.UInt32([3])); kl.eval(t3)", IndexError, "Scatter", r"\b3\b"),
    case("kl.scatter_reduce(kl.ReduceOp.Max, t3, kl.Float([1.0]), kl.UInt32([9])); kl.eval(t3)", IndexError,
         "Scatter", r"\b9\b"),
    case("kl.eval(kl.scatter_inc(kl.UInt32([0, 0]), kl.UInt32([5])))", IndexError, "ScatterInc", r"\b5\b",
         "2 elements"),
]


@pytest.mark.parametrize("code, exc, patterns", INDEX_CASES)
def test_out_of_range_indices(code, exc, patterns):
    expect(code, exc, patterns)


@pytest.mark.parametrize("code, exc, patterns", CHECKED_CASES)
def test_out_of_range_indices_checked_mode(code, exc, patterns):
    kl.set_flag(kl.Flag.Checks, True)
    expect(code, exc, patterns)
    # Kiln keeps working, and masked-off lanes are not checked.
    source = kl.Float([1.0, 2.0, 3.0])
    got = kl.gather(source, kl.UInt32([2, 9]), kl.Bool([True, False])).numpy()
    np.testing.assert_array_equal(got, [3.0, 0.0])
    np.testing.assert_array_equal((source * 2.0).numpy(), [2.0, 4.0, 6.0])


NONE_CASES = [case(code, TypeError, name, "NoneType") for code, name in [
    ("kl.Float(None)", "Float"), ("kl.Int32(None)", "Int32"), ("kl.Array3f(None, x3, x3)", "Array3f"),
    ("kl.Array3f(x3, x3, None)", "Array3f"), ("kl.Matrix2f(None)", "Matrix2f"), ("kl.PCG32(None)", "PCG32"),
    ("kl.PCG32(4, None)", "PCG32"), ("x3 + None", r"\+"), ("None + x3", r"\+"), ("x3 * None", r"\*"),
    ("x3 < None", "<"), ("x3 ** None", r"\*\*"), ("kl.sqrt(None)", "sqrt"), ("kl.fma(x3, None, x3)", "fma"),
    ("kl.min(None, x3)", "min"), ("kl.select(None, x3, x3)", "select"), ("kl.select(m3, x3, None)", "select"),
    ("kl.gather(None, i3)", "gather"), ("kl.gather(x3, None)", "gather"), ("kl.scatter(None, x3, i3)", "scatter"),
    ("kl.scatter(t3, None, i3)", "scatter"), ("kl.scatter(t3, x3, None)", "scatter"), ("kl.sum(None)", "sum"),
    ("kl.dot(None, x3)", "dot"), ("kl.zeros(None, 3)", "zeros"), ("kl.zeros(kl.Float, None)", "zeros"),
    ("kl.full(kl.Float, None, 3)", "full"), ("kl.arange(kl.Float, None)", "arange"),
    ("kl.linspace(kl.Float, 0.0, 1.0, None)", "linspace"), ("kl.cast(None, x3)", "cast"),
    ("kl.cast(kl.Float, None)", "cast"), ("kl.eval(None)", "eval"), ("kl.eval(x3, None)", "eval"),
    ("kl.eval([x3, None])", "eval"), ("kl.schedule(None)", "schedule"), ("kl.graphviz(None)", "graphviz"),
    ("kl.make_opaque(None)", "make_opaque"), ("kl.set_label(None, 'a')", "set_label"),
    ("kl.set_label(x3, None)", "set_label"), ("x3[None]", "__getitem__"), ("x3[0] = None", "__setitem__"),
    ("kl.Matrix2f.identity()[None]", "__getitem__"), ("v3.x = None", "incompatible function arguments"),
    ("rng = kl.PCG32(4); rng.state = None", "incompatible function arguments"), ("kl.set_flag(None, True)", "set_flag"),
    ("kl.set_disk_cache_dir(None)", "set_disk_cache_dir"), ("kl.from_dlpack(None)", "from_dlpack"),
]]


@pytest.mark.parametrize("code, exc, patterns", NONE_CASES)
def test_none_in_every_position(code, exc, patterns):
    expect(code, exc, patterns)


def test_none_as_mask_means_all_lanes():
    x = kl.Float([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(kl.gather(x, kl.UInt32([2, 0]), None).numpy(), [3.0, 1.0])


VALUE_CASES = [
    case("bool(x3)", ValueError, "bool", "3 elements"),
    case("bool(kl.Float())", ValueError, "bool", "0 elements"),
    case("x3.item()", ValueError, "item", "3 elements"),
    case("kl.arange(kl.Int32, 0, 10, 0)", ValueError, "arange", "step", "zero|0"),
    case("kl.arange(kl.Float, 0.0, 1.0, 0.0)", ValueError, "arange", "step", "zero|0"),
    case("kl.arange(kl.Float, 0.0, 1.0, float('nan'))", ValueError, "arange", "step|nan|NaN"),
    case("kl.arange(kl.Float, 0.0, float('inf'), 1.0)", ValueError, "arange", "stop|inf"),
    case("kl.Float() + x3", ValueError, "Add", "empty"),
    case("kl.sqrt(kl.Float())", ValueError, "Sqrt", "empty"),
    case("kl.sum(kl.Float())", ValueError, "sum", "empty"),
    case("kl.gather(kl.Float(), i3)", ValueError, "gather", "empty"),
    case("kl.scatter(kl.Float(), x3, i3)", ValueError, "scatter", "empty"),
    case("kl.select(kl.Bool(), x3, x3)", ValueError, "Select", "empty"),
    case("kl.Array3f() + v3", ValueError, "Add", "empty"),
    case("kl.Float().numpy()", ValueError, "numpy", "no value"),
    case("kl.Array3f().numpy()", ValueError, "flatten", "no value"),
]


@pytest.mark.parametrize("code, exc, patterns", VALUE_CASES)
def test_invalid_values(code, exc, patterns):
    expect(code, exc, patterns)


def strided(dtype, step=2, start=None):
    return np.arange(10).astype(dtype)[start::step]


def readonly(array):
    array.flags.writeable = False
    return array


LAYOUTS = {
    "float32[::2]": (kl.Float, lambda: strided(np.float32)),
    "float32[::-1]": (kl.Float, lambda: strided(np.float32, -1)),
    "int32[::3]": (kl.Int32, lambda: strided(np.int32, 3)),
    "float64[1::2]": (kl.Float64, lambda: strided(np.float64, 2, 1)),
    "uint64[::2]": (kl.UInt64, lambda: strided(np.uint64)),
    "bool[::2]": (kl.Bool, lambda: np.zeros(10, np.bool_)[::2]),
    "float64 into Float": (kl.Float, lambda: np.arange(5, dtype=np.float64)),
    "read-only float32": (kl.Float, lambda: readonly(np.arange(5, dtype=np.float32))),
    "read-only int64": (kl.Int64, lambda: readonly(np.arange(5, dtype=np.int64))),
    "read-only bool": (kl.Bool, lambda: readonly(np.zeros(5, np.bool_))),
    "read-only float32[::2]": (kl.Float, lambda: readonly(strided(np.float32))),
}


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_numpy_layouts_accepted_by_copying(layout):
    kind, make = LAYOUTS[layout]
    array = make()
    owner = array.base if array.base is not None else array
    before = owner.copy()
    x = kind(array)
    np.testing.assert_array_equal(x.numpy(), array, err_msg=layout)
    new = np.array([7]).astype(array.dtype)[0]
    kl.scatter(x, kind([new.item()]), kl.UInt32([1]))
    x[2] = new.item()
    kl.eval(x)
    assert x[1] == new and x[2] == new, layout
    np.testing.assert_array_equal(owner, before, err_msg=f"{layout}: a scatter wrote the NumPy memory")


VECTOR_LAYOUTS = {
    "(n, 4)[:, :3]": lambda: np.arange(8, dtype=np.float32).reshape(2, 4)[:, :3],
    "Fortran order": lambda: np.asfortranarray(np.arange(6, dtype=np.float32).reshape(2, 3)),
    "float64": lambda: np.arange(6, dtype=np.float64).reshape(2, 3),
    "read-only": lambda: readonly(np.arange(6, dtype=np.float32).reshape(2, 3)),
}


@pytest.mark.parametrize("layout", list(VECTOR_LAYOUTS))
def test_vector_layouts_accepted_by_copying(layout):
    array = VECTOR_LAYOUTS[layout]()
    v = kl.Array3f(array)
    np.testing.assert_array_equal(v.numpy(), array, err_msg=layout)
    np.testing.assert_array_equal(v.y.numpy(), array[:, 1], err_msg=layout)


SHAPE_CASES = [
    # Arrays name the 1-D shape they take; nanobind's overload error lists the accepted signatures
    # with their shape.
    case("kl.Float(np.zeros((2, 3), np.float32))", TypeError, "Float", "1-D", r"shape \(2, 3\)"),
    case("kl.Int32(np.zeros((2, 3), np.int32))", TypeError, "Int32", "1-D", r"shape \(2, 3\)", "kl.tensor"),
    case("kl.from_dlpack(np.zeros((2, 3), np.float32))", TypeError, "from_dlpack", r"shape=\(\*\)"),
    case("kl.Array3f(np.zeros((2, 4), np.float32))", TypeError, "Array3f", r"shape=\(\*, 3\)"),
    case("kl.Array3f(np.zeros(6, np.float32))", TypeError, "Array3f", r"shape=\(\*, 3\)"),
    case("kl.Matrix3f(np.zeros((2, 3), np.float32))", TypeError, "Matrix3f", r"shape=\(\*, 3, 3\)"),
]


@pytest.mark.parametrize("code, exc, patterns", SHAPE_CASES)
def test_wrong_dimensions_and_shapes(code, exc, patterns):
    expect(code, exc, patterns)


RESETS = {
    "flush_kernel_cache": lambda tmp: kl.flush_kernel_cache(),
    "flush_memory_cache": lambda tmp: kl.flush_memory_cache(),
    "clear_disk_cache": lambda tmp: kl.clear_disk_cache(),
    "set_disk_cache_dir(new)": lambda tmp: kl.set_disk_cache_dir(str(tmp / "new-cache")),
    "set_disk_cache_dir(a file)": lambda tmp: (tmp.joinpath("file").write_text(""),
                                               kl.set_disk_cache_dir(str(tmp / "file"))),
}


@pytest.fixture
def restore_cache_dir():
    old = kl.disk_cache_dir()
    yield
    kl.set_disk_cache_dir(old)


@pytest.mark.parametrize("reset", list(RESETS))
def test_arrays_survive_state_reset(reset, tmp_path, restore_cache_dir):
    x = kl.arange(kl.Float, 8)
    kl.eval(x)
    pending = x * 2.0 + 1.0
    view = x.numpy()
    numpy_memory = np.arange(4, dtype=np.float32)
    wrapped = kl.Float(numpy_memory)
    before = (x - 0.5).numpy().copy()
    RESETS[reset](tmp_path)
    RESETS[reset](tmp_path)  # twice in a row
    np.testing.assert_array_equal(pending.numpy(), np.arange(8) * 2.0 + 1.0, err_msg=reset)
    assert x[3] == 3.0
    assert x.numpy().__array_interface__["data"][0] == view.__array_interface__["data"][0]
    np.testing.assert_array_equal((x - 0.5).numpy(), before, err_msg=reset)  # the same kernel again
    np.testing.assert_allclose(kl.sqrt(x * x + 1.0).numpy(), np.sqrt(np.arange(8.0) ** 2 + 1), rtol=1e-6)
    numpy_memory[0] = 9.0
    assert wrapped[0] == 9.0
    kl.scatter(wrapped, kl.Float([4.0]), kl.UInt32([1]))
    kl.eval(wrapped)
    assert numpy_memory[1] == 4.0
    if reset.startswith("set_disk_cache_dir"):
        stats = kl.cache_stats()
        if reset.endswith("(a file)"):
            assert not stats.disk_enabled and str(tmp_path / "file") in stats.disk_problem
        else:
            assert kl.disk_cache_dir() == str(tmp_path / "new-cache")


EXIT_SCRIPT = """
import gc, sys
import numpy as np
import kiln as kl
x = kl.arange(kl.Float, 100)
pending = kl.sqrt(x) * 2.0
view = (x + 1.0).numpy()
a = np.arange(8, dtype=np.float32)
w = kl.Float(a)
wview = w.numpy()
wpending = w * 3.0
ro = np.arange(3, dtype=np.float32)
ro.flags.writeable = False
r = kl.Float(ro)
v = kl.Array3f(np.ones((4, 3), np.float32))
vview = v.numpy()
m = kl.Matrix4f.identity()
rng = kl.PCG32(16)
u = rng.next_float32()
kl.schedule(pending)
class Holder: pass
h = Holder(); h.self = h; h.arrays = [x, w, v, view, pending]
del a
print("done")
mode = {mode!r}
if mode == "gc disabled":
    gc.disable()
elif mode == "sys.exit(0)":
    def leave(local=kl.Float([1.0, 2.0]) * 2.0):
        sys.exit(0)
    leave()
"""


@pytest.mark.parametrize("mode", ["end of script", "sys.exit(0)", "gc disabled"])
def test_exit_with_live_arrays_is_clean(mode):
    result = run_python(EXIT_SCRIPT.format(mode=mode))
    assert result.returncode == 0, f"exit code {result.returncode}; stderr: {result.stderr[-2000:]}"
    assert "done" in result.stdout
    for word in ("leak", "Traceback", "Segmentation", "Fatal", "terminate", "Abort"):
        assert word.lower() not in result.stderr.lower(), f"{word!r} on stderr: {result.stderr[-2000:]}"
