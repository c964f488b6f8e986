"""Devices in the Python API: every array on 'cpu' or 'cuda', kl.set_device and device=,
x.to(), the error naming both devices, memory_stats per device, kernel_history's device,
NumPy and DLPack. Without a GPU, 'cuda' is refused with the reason; the emulated CUDA
device (KILN_DEVICE=cuda-emulated, a test device whose memory is the host's: Kiln reads it
through copies, NumPy and DLPack share it) runs the rest in a subprocess."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import kiln as kl


def run_emulated(code):
    """Runs `code` with the emulated CUDA device; returns its stdout."""
    env = dict(os.environ, KILN_DEVICE="cuda-emulated")
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_device_names():
    assert kl.Float([1, 2]).device in ("cpu", "cuda")
    with pytest.raises(ValueError, match="unknown device 'tpu'"):
        kl.set_device("tpu")
    with pytest.raises(ValueError, match="one GPU per process"):
        kl.Float([1.0], device="cuda:1")


@pytest.mark.skipif(kl.default_device() != "cpu" or "device" in kl.cuda_status(),
                    reason="a CUDA device is in use or available")
def test_cuda_without_a_gpu_is_refused_with_the_reason():
    for attempt in (lambda: kl.set_device("cuda"), lambda: kl.Float([1.0, 2.0], device="cuda"),
                    lambda: kl.Float([1.0]).to("cuda"), lambda: kl.Float(1.0, device="cuda")):
        with pytest.raises(ValueError, match="the cuda device cannot be used: .*cuda_status"):
            attempt()
    assert kl.default_device() == "cpu"
    assert kl.memory_stats("cuda").current_bytes == 0


def test_arrays_move_between_devices_and_refuse_mixing():
    out = run_emulated("""
        import numpy as np, kiln as kl
        assert kl.default_device() == "cuda"
        x = kl.Float([1.0, 2.0, 4.0])
        assert x.device == "cuda"
        host = kl.Float([1.0, 2.0, 4.0], device="cpu")
        assert host.device == "cpu" and host.to("cuda").device == "cuda"
        y = kl.sqrt(x) * 2.0 + 1.0                  # a literal joins any device
        assert y.device == "cuda"
        print(np.allclose(y.numpy(), 2 * np.sqrt([1, 2, 4]) + 1), y.to("cpu").device)
        try:
            x + host
        except ValueError as e:
            print("refused:", "cuda and cpu" in str(e), ".to(" in str(e))
        v = kl.Array3f(x, x, x)
        print(v.device, v.to("cpu").device, v.to("cpu").numpy().shape)
        kl.set_device("cpu")
        print(kl.Float([1.0]).device, kl.Float(np.arange(3, dtype=np.float32), device="cuda").device)
        with kl.device_scope("cuda"):
            print(kl.zeros(kl.Float, 4).device)
        print(kl.default_device())
    """)
    assert out.split("\n")[:6] == ["True cpu", "refused: True True", "cuda cpu (3, 3)", "cpu cuda", "cuda", "cpu"]


def test_memory_stats_and_history_per_device():
    out = run_emulated("""
        import kiln as kl
        before = kl.memory_stats("cuda").current_bytes, kl.memory_stats("cpu").current_bytes
        x = kl.arange(kl.Float, 1 << 20) * 2.0
        kl.kernel_history(clear=True)
        kl.eval(x)
        record = kl.kernel_history()[-1]
        print(record["device"], record["backend"])
        print(kl.memory_stats("cuda").current_bytes - before[0] >= 4 << 20,
              kl.memory_stats("cpu").current_bytes - before[1] < 4 << 20)
        gpu_sum, cpu_sum = kl.sum(x).item(), kl.sum(x.to("cpu")).item()  # a device kernel, host loops
        print(abs(gpu_sum - cpu_sum) <= 1e-5 * cpu_sum, kl.kernel_history()[-1]["device"])
    """)
    assert out.split("\n")[:3] == ["cuda cuda-emulated", "True True", "True cuda"]


def test_numpy_and_dlpack_share_the_emulated_devices_host_memory():
    out = run_emulated("""
        import numpy as np, kiln as kl
        x = kl.Float([1.0, 2.0])
        print(x.__dlpack_device__(), np.from_dlpack(x).tolist(), x.numpy().tolist())
        print(kl.from_dlpack(np.arange(3, dtype=np.float32)).device, np.shares_memory(x.numpy(), x.numpy()))
    """)
    assert out.split("\n")[:2] == ["(1, 0) [1.0, 2.0] [1.0, 2.0]", "cuda True"]


def test_tensors_export_their_shape_through_dlpack_on_a_device():
    out = run_emulated("""
        import numpy as np, kiln as kl
        t = kl.tensor(np.arange(6, dtype=np.float32).reshape(2, 3)) * 2.0
        print(t.array.device, t.__dlpack_device__(), np.from_dlpack(t).tolist())
        try:
            t.array._export([4, 2])
        except ValueError as e:
            print("refused:", "8 elements for an array of 6" in str(e))
    """)
    assert out.split("\n")[:2] == ["cuda (1, 0) [[0.0, 2.0, 4.0], [6.0, 8.0, 10.0]]", "refused: True"]


def test_derivatives_cross_devices_with_to():
    out = run_emulated("""
        import kiln as kl
        w = kl.Float([1.0, 2.0, 3.0], device="cpu")        # parameters on the CPU
        kl.enable_grad(w)
        loss = kl.sum(kl.square(w.to("cuda")) * 3.0)       # a loss computed on the GPU
        kl.backward(loss)
        g = kl.grad(w)
        print(g.device, g.numpy().tolist())                 # 6 w, back on the CPU
        x = kl.Float([0.5, 1.5])                            # on the GPU, to the CPU and back
        kl.enable_grad(x)
        y = (x.to("cpu") * 4.0).to("cuda")
        kl.set_grad(x, kl.Float([1.0, 10.0]))
        kl.forward_to(y)
        print(kl.grad(y).device, kl.grad(y).numpy().tolist())
    """)
    assert out.split("\n")[:2] == ["cpu [6.0, 12.0, 18.0]", "cuda [4.0, 40.0]"]
