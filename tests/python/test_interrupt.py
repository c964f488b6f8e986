"""Ctrl-C stops a Kiln computation that would never end: the program gets
KeyboardInterrupt and Kiln keeps working. Each case runs in a child process, so a hang
or a crash fails the test instead of the run."""
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

CHILD = textwrap.dedent("""
    import signal
    import sys
    # Ctrl-C raises KeyboardInterrupt, as in an interactive session, even where the test
    # suite was started with SIGINT ignored (a background job), which the child inherits
    # and Kiln respects.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    import kiln as kl
    mode, lanes = sys.argv[1], int(sys.argv[2])
    i = kl.zeros(kl.UInt32, lanes)
    print("ready", flush=True)
    try:
        i = kl.while_loop((i,), lambda i: i >= 0, lambda i: i + 1, mode=mode)
        kl.eval(i)
        print("finished?!", flush=True)
    except KeyboardInterrupt:
        print("interrupted", flush=True)
    x = kl.arange(kl.Float, lanes) * 2.0
    print("after", float(x.numpy()[-1]), flush=True)
""")


@pytest.mark.parametrize("mode", ["symbolic", "evaluated"])
@pytest.mark.parametrize("lanes", [1, 100000])
def test_ctrl_c_interrupts_an_endless_loop(mode, lanes):
    child = subprocess.Popen([sys.executable, "-c", CHILD, mode, str(lanes)], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "ready"
        deadline = time.monotonic() + 60
        while child.poll() is None and time.monotonic() < deadline:
            time.sleep(0.3)  # once the loop runs (and again, should the first one land early)
            os.kill(child.pid, signal.SIGINT)
        out, err = child.communicate(timeout=10)
    finally:
        if child.poll() is None:
            child.kill()
    assert child.returncode == 0, err
    assert out.split("\n")[:2] == ["interrupted", f"after {2.0 * (lanes - 1)}"], (out, err)
