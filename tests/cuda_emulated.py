#!/usr/bin/env python3
"""The GPU lowering tested where there is no GPU (ctest `cuda_emulated`; docs/testing.md).

1. Runs the core C++ test binaries on the emulated CUDA device (KILN_DEVICE=cuda-emulated:
   every kernel lowered for NVPTX, one lane per thread, its entry a host loop), the fuzzer
   comparing it with the interpreter, while KILN_PTX_DIR collects the PTX of every kernel
   they compile for sm_75 and sm_90.
2. Assembles all of it with ptxas for its architecture and reports the register and spill
   counts of the largest kernels. Where ptxas is missing, says so and skips this half.

usage: cuda_emulated.py <directory of test binaries> <test name>... [--fuzz-programs N]
Exit status: 0 when everything passed, 1 otherwise.
"""
import concurrent.futures
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

BATCH = 200  # PTX files per ptxas call: one process per file would spend most of its time starting
ENTRY = re.compile(r"Compiling (entry )?function '([^']+)' for '(sm_\d+)'")
SPILLS = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
REGISTERS = re.compile(r"Used (\d+) registers")


def run_tests(binaries, names, ptx_dir, fuzz_programs):
    """Runs each test binary on the emulated device; returns the names that failed."""
    environment = dict(os.environ, KILN_DEVICE="cuda-emulated", KILN_DISK_CACHE="0", KILN_PTX_DIR=str(ptx_dir),
                       KILN_FUZZ_PROGRAMS=str(fuzz_programs))

    def run(name):
        result = subprocess.run([str(binaries / f"test_{name}")], env=environment, capture_output=True, text=True)
        return name, result

    failed = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        for name, result in pool.map(run, names):
            print(f"  {name}: {'passed' if result.returncode == 0 else 'FAILED'} on the emulated CUDA device")
            if result.returncode != 0:
                print(result.stdout[-6000:] + result.stderr[-3000:])
                failed.append(name)
    return failed


def find_ptxas():
    for candidate in (os.environ.get("KILN_PTXAS"), shutil.which("ptxas"), "/usr/local/cuda/bin/ptxas"):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


def assemble(ptxas, arch, files):
    """Assembles `files` in one ptxas call; returns (error text or '', [(function, arch,
    registers, spill bytes)])."""
    with tempfile.TemporaryDirectory() as out:
        result = subprocess.run([ptxas, f"-arch={arch}", "-v", "-o", f"{out}/kernels.o", *map(str, files)],
                                capture_output=True, text=True)
    if result.returncode != 0:
        return result.stderr or result.stdout or f"ptxas exited with {result.returncode}", []
    usage, current = [], None
    for line in result.stderr.splitlines() + result.stdout.splitlines():
        if m := ENTRY.search(line):
            current = [m.group(2), m.group(3), 0, 0]
            usage.append(current)
        elif current and (m := SPILLS.search(line)):
            current[3] = int(m.group(2)) + int(m.group(3))
        elif current and (m := REGISTERS.search(line)):
            current[2] = int(m.group(1))
    return "", usage


def check_ptx(ptxas, ptx_dir):
    """Assembles every collected PTX file; returns the number of failures."""
    jobs = []
    for arch in ("sm_75", "sm_90"):
        files = sorted(ptx_dir.glob(f"*.{arch}.ptx"))
        jobs += [(arch, files[k:k + BATCH]) for k in range(0, len(files), BATCH)]
    kernels = sum(len(files) for _, files in jobs)
    failures, usage = 0, []
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        for (arch, files), (error, batch_usage) in zip(jobs, pool.map(lambda job: assemble(ptxas, *job), jobs)):
            usage += batch_usage
            if not error:
                continue
            for single in files:  # find the files of the failed batch that ptxas refuses
                single_error, _ = assemble(ptxas, arch, [single])
                if single_error:
                    failures += 1
                    print(f"  ptxas -arch={arch} refused {single.name}:\n{single_error[:3000]}")
    print(f"  ptxas ({ptxas}): {kernels - failures} of {kernels} modules assembled for sm_75 and sm_90")
    print("  largest kernels (registers per thread, spilled bytes):")
    for name, arch, registers, spills in sorted(usage, key=lambda u: (-u[2], -u[3]))[:6]:
        print(f"    {name} {arch}: {registers} registers, {spills} bytes spilled")
    spilling = [u for u in usage if u[3] > 0]
    print(f"  functions that spill: {len(spilling)} of {len(usage)}")
    return failures


def main(argv):
    fuzz_programs = 1500
    if "--fuzz-programs" in argv:
        k = argv.index("--fuzz-programs")
        fuzz_programs = int(argv[k + 1])
        del argv[k:k + 2]
    binaries, names = pathlib.Path(argv[1]), argv[2:]
    with tempfile.TemporaryDirectory() as directory:
        ptx_dir = pathlib.Path(directory)
        failed = run_tests(binaries, names, ptx_dir, fuzz_programs)
        ptxas = find_ptxas()
        if ptxas is None:
            print("  ptxas not found (KILN_PTXAS, PATH, /usr/local/cuda/bin): the PTX was not assembled")
            ptx_failures = 0
        else:
            ptx_failures = check_ptx(ptxas, ptx_dir)
    if failed:
        print(f"FAILED on the emulated CUDA device: {', '.join(failed)}")
    return 1 if failed or ptx_failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
