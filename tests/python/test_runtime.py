"""Evaluation, fusion, kernel caches, opaque values, flags, logging and introspection."""

import dataclasses
import os
import shutil
import subprocess

import numpy as np
import pytest

import kiln as kl

HISTORY_KEYS = {"hash", "shape_hash", "size", "ops", "source", "reason", "codegen_ms", "compile_ms", "run_ms", "ir"}


@pytest.fixture(autouse=True)
def cold_cache(tmp_path):
    """Each test starts with no kernel in memory, a private empty disk cache and no history."""
    kl.set_disk_cache_dir(str(tmp_path))
    kl.clear_disk_cache()
    kl.flush_kernel_cache()
    kl.kernel_history(True)
    yield tmp_path
    kl.set_disk_cache_dir("")


def sources():
    return [h["source"] for h in kl.kernel_history()]


def compilations(history):
    return sum(h["source"] in ("compiled", "generalized") for h in history)


def pending(n=50):
    """Base data and pending values of every kind, all of n lanes."""
    base = kl.arange(kl.Float, n)
    kl.eval(base)
    kl.kernel_history(True)
    return {
        "array": base * 2.0,
        "vector": kl.Array3f(base + 1.0, base * 3.0, base - 4.0),
        "matrix": kl.Matrix2f(base + 5.0, base * 6.0, base - 7.0, base * base),
        "rng": kl.PCG32(n),
    }


def check_pending_values(values, n=50):
    b = np.arange(n, dtype=np.float32)
    np.testing.assert_array_equal(values["array"].numpy(), b * 2)
    np.testing.assert_array_equal(values["vector"].numpy(), np.stack([b + 1, b * 3, b - 4], axis=1))
    np.testing.assert_array_equal(values["matrix"].numpy(), np.stack([b + 5, b * 6, b - 7, b * b], axis=1).reshape(n, 2, 2))
    assert values["rng"].state.numpy().shape == (n,)


@pytest.mark.parametrize("call", [
    pytest.param(lambda v: kl.eval(v["array"], v["vector"], v["matrix"], v["rng"]), id="arguments"),
    pytest.param(lambda v: kl.eval([v["array"], v["vector"], v["matrix"], v["rng"]]), id="list"),
    pytest.param(lambda v: kl.eval((v["array"], [v["vector"], (v["matrix"],)]), v["rng"]), id="nested"),
])
def test_eval_takes_arrays_vectors_matrices_rngs_and_lists_in_one_kernel(call):
    values = pending()
    call(values)
    [launch] = kl.kernel_history(True)
    assert launch["size"] == 50 and launch["outputs"] == 1 + 3 + 4 + 2  # with the generator's state and inc
    kl.eval(list(values.values()))
    assert kl.kernel_history() == []  # everything was evaluated already
    check_pending_values(values)


@pytest.mark.parametrize("bad", [1.0, "x", None, [kl.Float(1.0), object()], np.zeros(3)])
def test_eval_and_schedule_reject_other_objects(bad):
    with pytest.raises(TypeError, match="expected Kiln arrays"):
        kl.eval(bad)
    with pytest.raises(TypeError):
        kl.schedule(bad)


@pytest.mark.parametrize("kind", ["array", "vector", "matrix", "rng", "all"])
def test_schedule_defers_to_the_next_eval(kind):
    values = pending()
    scheduled = list(values.values()) if kind == "all" else values[kind]
    kl.schedule(scheduled)
    assert kl.kernel_history() == []  # nothing runs yet
    kl.eval(values["array"] + 0.5)
    history = kl.kernel_history(True)
    assert len(history) == 1 and history[0]["outputs"] >= 2
    kl.eval(scheduled)
    assert kl.kernel_history() == []  # the scheduled values ran in the first kernel
    check_pending_values(values)


def test_twenty_op_expression_is_one_kernel():
    x = kl.Float(np.full(1000, 0.5, np.float32))
    kl.eval(x)
    kl.kernel_history(True)
    y = x
    for _ in range(10):
        y = y * 1.5 + 0.25  # 20 ops
    kl.eval(y)
    [launch] = kl.kernel_history()
    assert HISTORY_KEYS <= set(launch)
    assert launch["ops"] == 20 and launch["size"] == 1000
    assert launch["inputs"] == 1 and launch["outputs"] == 1
    expected = np.float32(0.5)
    for _ in range(10):
        expected = expected * np.float32(1.5) + np.float32(0.25)
    assert y[999] == pytest.approx(expected, rel=1e-6)


def test_history_record_fields():
    x = kl.arange(kl.Float, 64)
    kl.eval(kl.sqrt(x) * 3.0)
    kl.eval(kl.sqrt(x) * 3.0)
    first, hit = kl.kernel_history()
    for launch in (first, hit):
        assert HISTORY_KEYS <= set(launch)
        assert len(launch["hash"]) == len(launch["shape_hash"]) == 32 and int(launch["hash"], 16) >= 0
        assert launch["size"] == 64 and launch["ops"] >= 3
        for key in ("codegen_ms", "compile_ms", "run_ms"):
            assert isinstance(launch[key], float) and launch[key] >= 0
        assert isinstance(launch["ir"], str) and "Sqrt" in launch["ir"]
    assert first["source"] == "compiled"
    assert isinstance(first["reason"], str) and "first time" in first["reason"]
    assert hit["source"] == "memory" and hit["reason"] is None and hit["hash"] == first["hash"]
    assert kl.kernel_history(clear=True) and kl.kernel_history() == []


def test_kernel_ir_contains_labels():
    x = kl.arange(kl.Float, 16)
    kl.set_label(x, "pixel")
    y = x * 0.5
    kl.set_label(y, "half_pixel")
    assert y.label() == "half_pixel"
    kl.eval(y)
    ir = kl.kernel_history()[-1]["ir"]
    assert "label `half_pixel`" in ir and "label `pixel`" in ir and "Mul" in ir
    assert "test_runtime.py" in ir  # where the label was set


def test_kernel_ir_of_a_cache_hit_shows_the_labels_of_that_launch():
    for label, n in (("first_trace", 10), ("second_trace", 1000)):
        x = kl.arange(kl.Float, n)
        kl.set_label(x, label)
        kl.eval(x * x + 1.0)
    first, second = kl.kernel_history()
    assert second["source"] == "memory" and second["hash"] == first["hash"]
    assert "label `first_trace`" in first["ir"]
    assert "label `second_trace`" in second["ir"], second["ir"]  # "as traced for this launch"
    assert "first_trace" not in second["ir"]


@pytest.mark.parametrize("make", [
    pytest.param(lambda a: kl.opaque(kl.Float, a), id="opaque"),
    pytest.param(lambda a: made_opaque(kl.Float(a)), id="make_opaque"),
])
def test_changing_an_opaque_value_compiles_nothing_new(make):
    x = kl.arange(kl.Float, 20)
    results = []
    for a in (1.0, 2.0, 3.0, -4.5):
        scale = make(a)
        assert scale.item() == a
        results.append((x * scale + scale * 2.0)[19])
    history = kl.kernel_history()
    launches = [h for h in history if h["size"] == 20]
    assert compilations(history) == 1
    assert launches[0]["parameters"] >= 1
    assert [h["source"] for h in launches[1:]] == ["memory"] * 3
    assert len({h["hash"] for h in launches}) == 1
    assert results == [21.0, 42.0, 63.0, -94.5]


def made_opaque(value):
    kl.make_opaque(value)
    return value


def test_make_opaque_in_place():
    v, m, rng, data = kl.Array3f(1.0, 2.0, 3.0), kl.Matrix2f.identity(), kl.PCG32(3), kl.Float([1.0, 2.0])
    node, later = data.index, kl.arange(kl.Float, 4) + 1.0
    kl.make_opaque(v, [m, rng, (data, later)])
    assert data.index == node  # evaluated arrays stay as they are
    assert len(kl.kernel_history(True)) >= 1  # pending work ran
    kl.eval(later)
    assert kl.kernel_history() == []
    np.testing.assert_array_equal(later.numpy(), [1, 2, 3, 4])
    np.testing.assert_array_equal(v.numpy(), [[1.0, 2.0, 3.0]])
    np.testing.assert_array_equal(m.numpy(), [np.eye(2)])
    kl.kernel_history(True)
    for z in (3.0, 4.0, 5.0):
        w = made_opaque(kl.Array3f(1.0, 2.0, z))
        np.testing.assert_array_equal((w * kl.Float(np.arange(8, dtype=np.float32))).numpy()[7], [7, 14, 7 * z])
    assert sources()[-2:] == ["memory", "memory"]
    with pytest.raises(ValueError, match="make_opaque"):
        kl.make_opaque(kl.Float())


def test_a_changed_python_scalar_generalizes_once():
    kl.set_generalization_threshold(2)
    x = kl.arange(kl.Float, 40)
    results = {c: (kl.sqrt(x) * c + 0.125).numpy().copy() for c in (1.5, 2.5, 3.5, -8.0)}
    history = kl.kernel_history()
    assert len(history) == 4 and history[0]["source"] == "compiled" and history[0]["parameters"] == 0
    assert history[1]["source"] == "generalized" and history[1]["parameters"] == 1
    assert "changed 1.5 → 2.5" in history[1]["reason"]
    assert [h["source"] for h in history[2:]] == ["memory", "memory"]
    assert history[3]["hash"] == history[1]["hash"]
    assert compilations(history) == 2  # at most once more than the first
    for c, got in results.items():
        np.testing.assert_allclose(got, np.sqrt(np.arange(40, dtype=np.float32)) * c + 0.125, rtol=1e-6)
    assert kl.cache_stats().generalizations >= 1


def test_generalization_off_compiles_every_changed_literal():
    kl.set_flag(kl.Flag.Generalize, False)
    assert kl.flag(kl.Flag.Generalize) is False
    x = kl.arange(kl.Float, 40)
    for c in (1.5, 2.5, 3.5, 1.5):
        np.testing.assert_allclose((kl.exp(x * 0.01) * c).numpy(), np.exp(np.arange(40) * 0.01) * c, rtol=1e-5)
    history = kl.kernel_history()
    assert [h["source"] for h in history] == ["compiled", "compiled", "compiled", "memory"]
    assert all(h["parameters"] == 0 for h in history)
    assert "generalization is off" in history[1]["reason"]
    assert len({h["shape_hash"] for h in history}) == 1
    assert len({h["hash"] for h in history[:3]}) == 3


PROGRAMS = {
    "float": lambda: [kl.select(kl.linspace(kl.Float, -3, 3, 1001) > 0, kl.sqrt(kl.linspace(kl.Float, -3, 3, 1001)),
                                kl.floor(kl.linspace(kl.Float, -3, 3, 1001) * 3.0))],
    "integer": lambda: [(kl.arange(kl.UInt32, 500) * 2654435761) >> 7, kl.arange(kl.Int32, 300) % 7 - 3],
    "vector": lambda: [kl.cross(kl.Array3f(kl.arange(kl.Float, 64), 1.0, 2.0), kl.Array3f(3.0, kl.arange(kl.Float, 64), 5.0))],
    "matrix": lambda: [kl.Matrix2f(kl.arange(kl.Float, 33) + 1.0, 2.0, 3.0, 4.0) @ kl.Array2f(1.0, kl.arange(kl.Float, 33))],
    "random": lambda: (lambda rng: [rng.next_uint32(), rng.next_float32(), rng.next_uint32_bounded(kl.UInt32(1000))])(kl.PCG32(77)),
    "reduction": lambda: [kl.sum(kl.arange(kl.Int64, 10_000) * 3), kl.prefix_sum(kl.arange(kl.Int32, 100))],
}


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_interpreter_gives_the_same_results(name):
    kl.set_flag(kl.Flag.Interpreter, False)
    jit = [np.array(r.numpy()) for r in PROGRAMS[name]()]
    kl.set_flag(kl.Flag.Interpreter, True)
    assert kl.flag(kl.Flag.Interpreter) is True
    reference = [np.array(r.numpy()) for r in PROGRAMS[name]()]
    assert len(jit) == len(reference)
    for a, b in zip(jit, reference):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a, b)


def test_cache_stats_fields():
    stats = kl.cache_stats()
    for field in ("memory_hits", "disk_hits", "compiles", "generalizations", "kernels", "disk_bytes"):
        assert isinstance(getattr(stats, field), int) and getattr(stats, field) >= 0
    assert stats.kernels == 0  # flushed by the fixture
    assert stats.disk_enabled is True and stats.disk_problem == ""
    x = kl.arange(kl.Float, 30)
    kl.eval(x * 9.75 - 2.0)
    compiled = kl.cache_stats()
    assert (compiled.compiles, compiled.kernels) == (stats.compiles + 1, 1) and compiled.disk_bytes > 0
    kl.eval(x * 9.75 - 2.0)
    hit = kl.cache_stats()
    assert (hit.memory_hits, hit.compiles) == (compiled.memory_hits + 1, compiled.compiles)
    kl.set_flag(kl.Flag.DiskCache, False)
    assert kl.cache_stats().disk_enabled is False
    kl.flush_kernel_cache()  # forgets every kernel
    assert kl.cache_stats().kernels == 0
    kl.eval(x * 9.75 - 2.0)
    last = kl.kernel_history()[-1]
    assert last["source"] == "compiled" and "first time" in last["reason"]


def test_a_directory_writable_by_others_is_refused(cold_cache, capfd):
    shared = cold_cache / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    kl.set_disk_cache_dir(str(shared))
    stats = kl.cache_stats()
    assert stats.disk_enabled is False
    assert "writable by group or others" in stats.disk_problem
    assert "writable" in capfd.readouterr().err  # a warning
    np.testing.assert_array_equal((kl.arange(kl.Float, 5) * 8.5).numpy(), np.arange(5) * 8.5)
    assert os.listdir(shared) == []  # cached in memory only


def test_disk_cache_serves_kernels_after_a_flush(cold_cache):
    assert kl.disk_cache_dir() == str(cold_cache)
    x = kl.arange(kl.Float, 45)
    first = (kl.sqrt(x) * 6.5 + 2.0).numpy().copy()
    second = (kl.exp(x * 0.01) - 1.0).numpy().copy()  # a second kernel
    assert sources() == ["compiled", "compiled"]
    assert kl.cache_stats().disk_bytes > 0
    assert os.listdir(cold_cache)
    kl.flush_kernel_cache()
    kl.kernel_history(True)
    hits = kl.cache_stats().disk_hits
    np.testing.assert_array_equal((kl.exp(x * 0.01) - 1.0).numpy(), second)
    np.testing.assert_array_equal((kl.sqrt(x) * 6.5 + 2.0).numpy(), first)
    history = kl.kernel_history()
    assert [h["source"] for h in history] == ["disk", "disk"]
    assert all(h["reason"] is None for h in history)
    assert kl.cache_stats().disk_hits == hits + 2

    kl.clear_disk_cache()
    assert kl.cache_stats().disk_bytes == 0
    kl.flush_kernel_cache()
    kl.kernel_history(True)
    kl.eval(kl.exp(x * 0.01) - 1.0)
    assert sources() == ["compiled"]
    kl.set_disk_cache_dir("")  # the default again
    default = os.environ.get("KILN_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "kiln")
    assert kl.disk_cache_dir().rstrip("/") == default.rstrip("/")


def test_memory_stats_and_peak_reset():
    kl.flush_memory_cache()
    kl.reset_peak_memory()
    base = kl.memory_stats()
    assert base.peak_bytes == base.current_bytes
    assert base.cached_bytes == 0
    big = kl.empty(kl.Float, 1 << 20)  # 4 MiB
    stats = kl.memory_stats()
    assert stats.current_bytes >= base.current_bytes + (4 << 20) and stats.allocations > base.allocations
    assert stats.peak_bytes >= stats.current_bytes
    del big
    freed = kl.memory_stats()
    assert freed.current_bytes == base.current_bytes
    assert freed.peak_bytes >= base.current_bytes + (4 << 20)  # the peak is remembered
    assert freed.cached_bytes >= 4 << 20  # kept for reuse
    kl.reset_peak_memory()
    assert kl.memory_stats().peak_bytes == kl.memory_stats().current_bytes
    kl.flush_memory_cache()
    assert kl.memory_stats().cached_bytes == 0


def test_kernel_source_lowers_without_launching():
    x = kl.arange(kl.Float, 1000)
    y = kl.sqrt(x * 2.0 + 1.0)
    z = kl.Array2f(kl.arange(kl.Float, 10), kl.arange(kl.Float, 10) + 1.0)  # another size: a second kernel
    kl.kernel_history(True)
    ptx = kl.kernel_source(y, [z])
    assert kl.kernel_history() == []  # nothing compiled for the host, nothing launched
    assert ptx.startswith("// kernel 1 of 2: 1000 lanes") and "// kernel 2 of 2: 10 lanes" in ptx
    assert ".target sm_90" in ptx and ".visible .entry kiln_source_0(" in ptx and "sqrt.rn.f32" in ptx
    llvm = kl.kernel_source(y, device="cuda", format="llvm")
    assert "define ptx_kernel void @kiln_source_0(" in llvm and "llvm.nvvm.read.ptx.sreg.tid.x" in llvm
    cpu = kl.kernel_source(y, device="cpu")
    assert cpu.startswith("; kernel 1 of 1: 1000 lanes") and "define void @kiln_source_0(" in cpu
    assert "sqrt" in cpu and "ptx_kernel" not in cpu
    assert np.allclose(y.numpy(), np.sqrt(np.arange(1000) * 2.0 + 1.0))  # still computes afterwards
    assert kl.kernel_source(y).startswith("// nothing to compute")
    for bad in [dict(device="gpu"), dict(device="cpu", format="ptx"), dict(device="cuda", format="sass")]:
        with pytest.raises(ValueError, match="kernel_source"):
            kl.kernel_source(x + 1.0, **bad)
    with pytest.raises(TypeError):
        kl.kernel_source(x, "cuda")  # the device is a keyword


@pytest.mark.skipif(shutil.which("ptxas") is None and not os.path.exists("/usr/local/cuda/bin/ptxas"),
                    reason="ptxas is not installed (CUDA toolkit)")
def test_kernel_source_ptx_assembles(tmp_path):
    ptxas = shutil.which("ptxas") or "/usr/local/cuda/bin/ptxas"
    x = kl.arange(kl.Float, 100)
    i = kl.arange(kl.UInt32, 100) // 2
    target = kl.zeros(kl.Float, 50)
    kl.scatter_reduce(kl.ReduceOp.Add, target, kl.sin(x), i)
    ptx = kl.kernel_source(kl.gather(target, i) + 1.0)
    for k, module in enumerate(ptx.split("// kernel ")[1:]):
        path = tmp_path / f"k{k}.ptx"
        path.write_text(module.split("\n", 1)[1])
        result = subprocess.run([ptxas, "-arch=sm_90", str(path), "-o", str(tmp_path / "k.cubin")],
                                capture_output=True, text=True)
        assert result.returncode == 0, result.stderr


def test_graphviz_returns_dot_text():
    x = kl.arange(kl.Float, 8)
    kl.set_label(x, "xs")
    dot = kl.graphviz(kl.sqrt(x) + 2.0)
    assert dot.startswith("digraph kiln {")
    assert "Sqrt f32[8]" in dot and "xs" in dot and " -> " in dot
    assert dot.rstrip().endswith("}") and dot.endswith("\n")
    several = kl.graphviz(kl.Array2f(x * 3.0, x - 1.0), [x + 4.0])
    assert several.count("Mul") >= 1 and several.count("Sub") >= 1 and several.count("Add") >= 1
    with pytest.raises(ValueError):
        kl.graphviz(kl.Float())


def test_info_log_prints_a_line_per_launch(capfd):
    x = kl.arange(kl.Float, 33)
    kl.set_log_level(kl.LogLevel.Info)
    assert kl.log_level() == kl.LogLevel.Info
    kl.eval(x * 1.875 + 3.0)
    kl.eval(x * 1.875 + 3.0)
    err = capfd.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("kiln:")]
    assert len(lines) == 2, err
    assert "n=33" in lines[0] and "compiled" in lines[0] and "first time" in lines[0]
    assert "memory" in lines[1]
    kl.set_log_level(kl.LogLevel.Warn)
    kl.eval(x * 1.875 + 3.0)
    assert "kiln:" not in capfd.readouterr().err


def test_ir_listing_shows_pending_labelled_nodes():
    x = kl.Float([1.0, 2.0])
    kl.set_label(x, "listing_x")
    y = x + 1.0
    kl.set_label(y, "listing_y")
    listing = kl.ir_listing()
    assert "# listing_x" in listing and "# listing_y" in listing
    assert "Add" in listing
    assert listing == kl.ir_listing()
    kl.eval(y)
    [line] = [line for line in kl.ir_listing().splitlines() if "listing_y" in line]
    assert "Data" in line  # evaluated


def test_live_nodes_decrease_when_arrays_are_deleted():
    before = kl.live_nodes()
    a = kl.arange(kl.Float, 10)
    b = a * 2.0 + 1.0
    c = kl.Array3f(kl.sqrt(b), b, a)
    during = kl.live_nodes()
    assert during > before
    del c
    assert kl.live_nodes() < during
    del a, b
    assert kl.live_nodes() == before
    x = kl.arange(kl.Float, 100)
    y = (x + 1.0) * (x - 1.0)
    del x
    kl.eval(y)
    assert kl.live_nodes() == before + 1  # evaluated: only y's data remains
    assert y[3] == 8.0


def test_packet_width_and_block_size():
    width = kl.packet_width()
    assert width in (4, 8, 16)
    assert kl.block_size() % width == 0


def test_kernel_split_gives_the_same_results():
    saved = kl.kernel_split()
    kl.set_flag(kl.Flag.DiskCache, False)  # a kernel compiled whole must not stand in (conftest restores it)
    x = np.linspace(-1.0, 1.0, 100, dtype=np.float32)
    try:
        results = []
        for split in (0, 3):  # whole, then pieces of 3 statements
            kl.set_kernel_split(split)
            assert kl.kernel_split() == split
            kl.flush_kernel_cache()
            v = kl.Float(x)
            for k in range(40):
                v = kl.select(v > 0.5, v * 0.5, v + 0.25) if k % 2 else v * 0.9 + 0.1
            results.append(v.numpy())
        np.testing.assert_array_equal(results[0], results[1])
    finally:
        kl.set_kernel_split(saved)


@pytest.mark.parametrize("bad, message", [(-1, "must not be negative"), (2**40, "more than 4294967295")])
def test_kernel_split_rejects_counts_out_of_range(bad, message):
    with pytest.raises(ValueError, match=message):
        kl.set_kernel_split(bad)


def _child_settings(env_vars):
    """Runs a child Python with the given KILN_* variables; returns (settings, stderr)."""
    import json
    import os
    import subprocess
    import sys
    code = ("import json, kiln as kl; print(json.dumps({'log': kl.log_level().name, "
            "'checks': kl.flag(kl.Flag.Checks), 'symbolic': kl.flag(kl.Flag.Symbolic), "
            "'interpreter': kl.flag(kl.Flag.Interpreter)}))")
    env = {k: v for k, v in os.environ.items() if not k.startswith("KILN_") or k == "KILN_CACHE_DIR"}
    env.update(env_vars)
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout), done.stderr


def test_environment_variables_take_the_usual_spellings():
    settings, err = _child_settings({"KILN_LOG": "INFO", "KILN_CHECKS": "True", "KILN_SYMBOLIC": "no",
                                     "KILN_BACKEND": "Interpreter"})
    assert settings == {"log": "Info", "checks": True, "symbolic": False, "interpreter": True}
    assert "not a valid value" not in err


def test_bad_environment_values_warn_with_the_accepted_ones():
    settings, err = _child_settings({"KILN_BACKEND": "gpu", "KILN_CHECKS": "maybe", "KILN_LOG": "loud"})
    assert settings == {"log": "Warn", "checks": False, "symbolic": True, "interpreter": False}
    assert 'KILN_BACKEND="gpu" is not a valid value (accepted: llvm|cpu, interp|interpreter)' in err
    assert 'KILN_CHECKS="maybe" is not a valid value' in err
    assert 'KILN_LOG="loud" is not a valid value (accepted: error, warn|warning, info, debug)' in err


def test_eval_and_make_opaque_take_tensors():
    tensor = kl.TensorXf(np.arange(6, dtype=np.float32).reshape(2, 3)) * 2.0
    kl.kernel_history(True)
    kl.eval(tensor)
    assert len(kl.kernel_history(True)) == 1
    kl.make_opaque(tensor)
    assert kl.kernel_history() == []
    np.testing.assert_array_equal(tensor.numpy(), np.arange(6).reshape(2, 3) * 2)


@dataclasses.dataclass
class _Pair:
    first: kl.Float
    second: dict


def _every_value_type():
    """A pending value of every Kiln value type, and a pytree of them."""
    base = kl.arange(kl.Float, 4) * 2.0
    texels = kl.TensorXf(np.arange(8, dtype=np.float32).reshape(2, 2, 2)) * 1.0
    return {
        "quaternion": kl.Quaternion4f(base, base + 1.0, base * 3.0, base - 1.0),
        "quaternion64": kl.Quaternion4f64(kl.Float64(1.5) * 2.0, kl.Float64(0.0), kl.Float64(0.0), kl.Float64(1.0)),
        "texture": kl.Texture2f(texels),
        "mask": kl.Array3f(base, base, base) < 3.0,
        "tensor": texels * 2.0,
        "pytree": _Pair(base + 5.0, {"v": kl.Array3f(base, base, base) * 2.0, "m": kl.Matrix2f(base, base, base, base)}),
    }


@pytest.mark.parametrize("name", list(_every_value_type()))
@pytest.mark.parametrize("function", ["eval", "schedule", "make_opaque"])
def test_every_value_type_is_evaluated_scheduled_and_made_opaque(name, function):
    value = _every_value_type()[name]
    getattr(kl, function)(value)
    kl.eval(value)
    kl.kernel_history(True)
    kl.eval(value)  # nothing left to compute
    assert kl.kernel_history() == []


def test_evaluated_values_keep_their_contents():
    values = _every_value_type()
    kl.eval(values)
    np.testing.assert_array_equal(values["quaternion"].z.numpy(), np.arange(4) * 6.0)
    np.testing.assert_array_equal(values["mask"].x.numpy(), np.arange(4) * 2 < 3)
    np.testing.assert_array_equal(values["pytree"].second["v"].numpy()[:, 1], np.arange(4) * 4.0)
    kl.make_opaque(values["texture"])
    np.testing.assert_array_equal(values["texture"].value().numpy(), np.arange(8))


@pytest.mark.parametrize("bad", [{"a": 1.0}, _Pair(kl.Float(1.0), {"x": "text"}), [kl.Float(1.0), None]])
def test_eval_names_what_is_not_a_kiln_value_inside_containers(bad):
    with pytest.raises(TypeError, match="expected Kiln arrays.*got (float|str|NoneType)"):
        kl.eval(bad)
    with pytest.raises(TypeError, match="make_opaque"):
        kl.make_opaque(bad)


def test_cuda_status_says_what_kiln_sees_of_cuda():
    # A child process, so KILN_LIBCUDA_PATH is read on its first use of the driver.
    import sys
    code = "import kiln as kl; print(kl.cuda_status())"
    env = dict(os.environ, KILN_LIBCUDA_PATH="/nonexistent/libcuda.so.1")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.startswith("no NVIDIA driver: /nonexistent/libcuda.so.1 could not be loaded (")
    assert "KILN_LIBCUDA_PATH" in out.stdout
    assert isinstance(kl.cuda_status(), str) and kl.cuda_status()


def test_kiln_device_cuda_without_a_gpu_says_why_and_creates_arrays_on_the_cpu():
    import sys
    env = dict(os.environ, KILN_DEVICE="cuda", KILN_LIBCUDA_PATH="/nonexistent/libcuda.so.1")
    code = "import kiln as kl; print((kl.Float([1, 2]) + 1.0).numpy(), kl.default_device())"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[2. 3.] cpu"
    assert "KILN_DEVICE=cuda: no NVIDIA driver" in out.stderr and "arrays are created on the CPU" in out.stderr
