"""The Recorder and print_async from Python: records appended inside loops and calls (in both
modes, as views of the Recorder's memory), format specifications, and their errors."""

import numpy as np
import pytest

import kiln as kl
from checks import MODES, assert_same, in_both_modes

N = 37  # lanes: not a multiple of any packet width


def record_bounces(mode, recorder):
    """A loop over 8 lanes with per-lane depths 0..7 that records (lane, depth, value) per
    iteration."""
    def body(lane, depth, n):
        recorder.append(True, lane, depth, kl.cast(kl.Float, lane * 10 + depth) * 0.5,
                        pos=kl.Array3f(kl.cast(kl.Float, lane), kl.cast(kl.Float, depth), kl.Float(1.0)))
        return lane, depth + 1, n

    n = kl.UInt32([3, 0, 7, 1, 5, 2, 6, 4])
    kl.while_loop((kl.arange(kl.UInt32, 8), kl.zeros(kl.UInt32, 8), n), lambda lane, d, n: d < n, body, mode=mode)


EXPECTED_RECORDS = sorted((lane, depth) for lane, n in enumerate([3, 0, 7, 1, 5, 2, 6, 4]) for depth in range(n))


@pytest.mark.parametrize("mode", MODES)
def test_recorder_holds_every_record_of_a_loop(mode):
    rec = kl.Recorder({"lane": kl.UInt32, "depth": kl.UInt32, "value": kl.Float, "pos": kl.Array3f}, 100)
    record_bounces(mode, rec)
    assert rec.count() == len(EXPECTED_RECORDS) == 28
    assert rec.capacity == 100
    data = rec.numpy()
    assert set(data) == {"lane", "depth", "value", "pos"}
    order = np.lexsort((data["depth"], data["lane"]))
    assert [(int(data["lane"][r]), int(data["depth"][r])) for r in order] == EXPECTED_RECORDS
    lane, depth = data["lane"][order], data["depth"][order]
    assert_same(data["value"][order], ((lane * 10 + depth) * 0.5).astype(np.float32))
    pos = np.asarray(rec["pos"])
    assert pos.shape == (28, 3)
    assert_same(pos[order], np.stack([lane, depth, np.ones(28)], axis=1).astype(np.float32))
    assert isinstance(rec[3], kl.Array3f) and isinstance(rec.field("lane"), kl.UInt32)
    rec.clear()
    assert rec.count() == 0 and len(rec["lane"]) == 0


def test_recorder_fields_are_views_of_its_memory():
    rec = kl.Recorder([kl.UInt32, kl.Float], 64)
    lane = kl.arange(kl.UInt32, 20)
    rec.append(lane % 2 == 0, lane, kl.cast(kl.Float, lane))
    first, second = np.asarray(rec[0]), np.asarray(rec.field(0))
    assert first.__array_interface__["data"][0] == second.__array_interface__["data"][0]
    assert np.shares_memory(first, second)
    assert np.shares_memory(rec.numpy()[0], first)
    assert sorted(first.tolist()) == list(range(0, 20, 2))
    assert sorted(np.asarray(rec[1]).tolist()) == [float(v) for v in range(0, 20, 2)]


def test_recorder_vector_and_matrix_fields_are_views_too():
    """numpy() of a vector (n, N) or matrix (n, N, N) field shares the recorder's memory: the
    components of a field are stored interleaved (they used to be copied into one array)."""
    rec = kl.Recorder({"lane": kl.UInt32, "p": kl.Array3f, "m": kl.Matrix2f}, 32)
    lane = kl.arange(kl.UInt32, 6)
    x = kl.cast(kl.Float, lane)
    rec.append(lane < 5, lane=lane, p=kl.Array3f(x, x * 2, x * 3), m=kl.Matrix2f(x, x + 1, x + 2, x + 3))
    data, again = rec.numpy(), rec.numpy()
    assert data["p"].shape == (5, 3) and data["m"].shape == (5, 2, 2)
    assert np.shares_memory(data["p"], again["p"]) and np.shares_memory(data["m"], again["m"])
    assert not data["p"].flags.owndata
    order = np.argsort(data["lane"])
    f = np.arange(5, dtype=np.float32)
    assert_same(data["p"][order], np.stack([f, 2 * f, 3 * f], axis=1))
    assert_same(data["m"][order], np.stack([f, f + 1, f + 2, f + 3], axis=1).reshape(5, 2, 2))
    p = rec["p"]
    assert isinstance(p, kl.Array3f) and sorted(p.y.numpy().tolist()) == [0.0, 2.0, 4.0, 6.0, 8.0]
    assert isinstance(rec["m"], kl.Matrix2f) and sorted(rec["m"][1, 0].numpy().tolist()) == [2.0, 3.0, 4.0, 5.0, 6.0]


def test_recorder_fields_as_torch_tensors_share_its_memory():
    """torch() gives the fields as tensors over the recorder's memory (DLPack), on its
    device, shaped as numpy()'s."""
    torch = pytest.importorskip("torch")
    rec = kl.Recorder({"lane": kl.UInt32, "p": kl.Array3f, "m": kl.Matrix2f}, 32)
    lane = kl.arange(kl.UInt32, 6)
    x = kl.cast(kl.Float, lane)
    rec.append(lane < 5, lane=lane, p=kl.Array3f(x, x * 2, x * 3), m=kl.Matrix2f(x, x + 1, x + 2, x + 3))
    tensors, views = rec.torch(), rec.numpy()
    assert tensors["p"].shape == (5, 3) and tensors["m"].shape == (5, 2, 2) and tensors["lane"].shape == (5,)
    for key in ("lane", "p", "m"):
        np.testing.assert_array_equal(tensors[key].cpu().numpy(), views[key])
    expected = {1: "cpu", 2: "cuda"}[rec["p"].x.__dlpack_device__()[0]]  # the emulated device's memory is the host's
    assert tensors["p"].device.type == expected
    if expected == "cpu":
        assert np.shares_memory(tensors["p"].numpy(), views["p"])


def test_recorder_views_do_not_change_under_later_appends():
    rec = kl.Recorder([kl.UInt32], 64)
    lane = kl.arange(kl.UInt32, 10)
    rec.append(True, lane)
    view = np.asarray(rec[0])
    before = view.copy()
    rec.append(True, lane + 100)
    rec.clear()
    rec.append(lane == 4, lane + 7)
    assert_same(view, before)  # an exported view keeps its values (copy on write)
    assert rec.count() == 1 and np.asarray(rec[0]).tolist() == [11]


def test_recorder_inside_dispatch_inside_a_loop():
    registry = kl.Registry()
    registry.add(1)
    registry.add(2)

    def run(mode):
        rec = kl.Recorder({"lane": kl.UInt32, "code": kl.UInt32}, 1000)

        def body(i, lane):
            kl.dispatch(registry, i % 3, lambda k, lane, i: rec.append(True, lane, i * 10 + k), lane, i, mode=mode)
            return i + 1, lane

        kl.while_loop((kl.zeros(kl.UInt32, N), kl.arange(kl.UInt32, N)), lambda i, lane: i < lane, body, mode=mode)
        data = rec.numpy()
        order = np.lexsort((data["code"], data["lane"]))
        return data["lane"][order], data["code"][order]

    lane, code = in_both_modes(run)
    expected = [(l, i * 10 + i % 3) for l in range(N) for i in range(l) if i % 3]
    assert list(zip(lane.tolist(), code.tolist())) == expected


def test_recorder_reads_inside_a_symbolic_body_raise():
    rec = kl.Recorder([kl.UInt32], 100)

    def body(i):
        rec.append(True, i)
        rec[0]
        return i + 1

    with pytest.raises(ValueError, match="inside the body"):
        kl.while_loop(kl.zeros(kl.UInt32, 3), lambda i: i < 2, body, mode="symbolic")


def test_recorder_overflow_names_the_capacity_needed():
    rec = kl.Recorder({"lane": kl.UInt32}, 5)
    rec.append(True, kl.arange(kl.UInt32, 12))
    assert rec.count() == 12
    with pytest.raises(kl.SizeError, match=r"\b12\b"):
        rec["lane"]
    with pytest.raises(kl.SizeError, match=r"\b5\b"):
        rec.numpy()


def test_recorder_bad_appends():
    rec = kl.Recorder({"lane": kl.UInt32, "pos": kl.Array3f}, 8)
    lane = kl.arange(kl.UInt32, 4)
    with pytest.raises(TypeError, match="no value for field 'pos'"):
        rec.append(True, lane)
    with pytest.raises(TypeError, match="'pos' holds kl.Array3f, got kl.UInt32"):
        rec.append(True, lane, pos=lane)
    with pytest.raises(TypeError, match="Recorder"):
        kl.Recorder({"x": int}, 4)
    rec.append(True, 7, pos=kl.Array3f(kl.Float(1.0)))  # Python numbers for array fields
    assert rec["lane"].numpy().tolist() == [7]


# ---------------------------------------------------------------------------------------
# print_async

def lines(capfd):
    return capfd.readouterr().out.splitlines()


def test_print_async_format_specifications(capfd):
    f = kl.Float([3.14159, -0.5])
    i = kl.Int32([42, -7])
    u = kl.UInt32([255, 10])
    kl.print_async("{:.3f}|{:>6}|{:+d}|{:#x}|{:08.2e}|{{{}}}|{:^7.1%}", (f, i, i, u, f, u, f))
    kl.eval()
    want = [f"{a:.3f}|{b:>6}|{b:+d}|{c:#x}|{a:08.2e}|{{{c}}}|{a:^7.1%}"
            for a, b, c in zip(f.numpy().astype(float), [42, -7], [255, 10])]
    assert lines(capfd) == want
    with pytest.raises(ValueError, match="'d' is an integer type"):
        kl.print_async("{:d}", f)
    with pytest.raises(ValueError, match="unknown type 'q'"):
        kl.print_async("{:q}", f)


def test_print_async_formats_each_active_lane(capfd):
    lane = kl.arange(kl.UInt32, 6)
    v = kl.Array2f(kl.cast(kl.Float, lane) * 0.5, kl.Float(-1.0))
    kl.print_async("lane {}: {} {} {}", (lane, v, lane % 2 == 0), active=lane >= 2)
    kl.eval()
    assert lines(capfd) == [f"lane {i}: {i * 0.5:g} -1 {i % 2 == 0}" for i in range(2, 6)]
    kl.print_async("single {}", lane * 3)
    kl.eval()
    assert lines(capfd) == [f"single {i * 3}" for i in range(6)]


@pytest.mark.parametrize("mode", MODES)
def test_print_async_inside_a_loop(capfd, mode):
    def body(lane, i, n):
        kl.print_async("lane {} step {}", (lane, i))
        return lane, i + 1, n

    n = kl.UInt32([2, 0, 3, 1])
    lane, i, _ = kl.while_loop((kl.arange(kl.UInt32, 4), kl.zeros(kl.UInt32, 4), n), lambda lane, i, n: i < n,
                               body, mode=mode)
    kl.eval(lane, i)
    out = lines(capfd)
    expected = [f"lane {lane} step {step}" for lane, n in enumerate([2, 0, 3, 1]) for step in range(n)]
    assert sorted(out) == sorted(expected)
    for k in range(4):  # within a lane, program order
        assert [line for line in out if line.startswith(f"lane {k} ")] == [e for e in expected if e.startswith(f"lane {k} ")]
    if mode == "symbolic":  # one kernel: grouped by lane in lane order
        assert out == expected


def test_print_async_format_must_match_the_values():
    with pytest.raises(ValueError, match="print_async"):
        kl.print_async("{} {}", kl.arange(kl.UInt32, 3))
