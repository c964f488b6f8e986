#!/usr/bin/env bash
# The device check: Kiln's C++ suite, the fuzzer against the interpreter, the renderer on the
# GPU against the CPU and Mitsuba's references, and the GPU benchmarks, run on a lent NVIDIA
# GPU (docs/testing.md, "On a real GPU").
#
#   scripts/device_check.sh pack [BUILD]   here: packs the test binaries, kiln_bench,
#                                          render_device_check with the reference scenes as XML
#                                          (scripts/scene_xml.py) and Mitsuba's references, libkiln,
#                                          libkiln_render and every library they load (glibc's loader too, so
#                                          the bundle runs on the GPU machine's older or newer
#                                          Ubuntu) into device-check/kiln-device-check.tar.xz
#                                          (git-ignored; at most 64 MiB, what a run carries)
#   scripts/device_check.sh run            there (the repository root, $OUT set): unpacks, runs
#                                          everything with KILN_DEVICE=cuda within 8 minutes,
#                                          writes summary.txt (with the benchmark table) and
#                                          logs.txt to $OUT
#
# With the device tool: run(command="bash scripts/device_check.sh run", carry=["device-check"]).
set -euo pipefail
cd "$(dirname "$0")/.."

SUITES="ops eval errors math vector random elementwise construct reduce control record control_errors
control_buffers autodiff_rules autodiff_singular autodiff autodiff_control tensor map nn deep_graphs
quaternion texture kernel_split shared_bodies horizontal"
BUNDLE=device-check/kiln-device-check.tar.xz
LIMIT=$((64 << 20))

pack() {
  local build=${1:-build}
  cmake --build "$build" -j 2 >/dev/null
  local stage
  stage=$(mktemp -d)
  mkdir -p "$stage/bin" "$stage/lib"
  for suite in $SUITES fuzz; do cp "$build/tests/test_$suite" "$stage/bin/"; done
  cp "$build/bench/kiln_bench" "$build/tests/render_device_check" "$stage/bin/"
  cp "$build/libkiln.so" "$build/render/libkiln_render.so" "$stage/lib/"
  # The renderer check's scenes and references.
  local python=python3
  [ -x "$build/venv/bin/python" ] && python=$build/venv/bin/python
  "$python" scripts/scene_xml.py "$stage/scenes"
  cp -r tests/render/references "$stage/references"
  # Every library the binaries load, the loader included (resolved through symbolic links).
  for file in "$stage"/bin/* "$stage"/lib/libkiln*.so; do
    ldd "$file" | awk '/=> \// { print $3 } $1 ~ /^\/.*ld-linux/ { print $1 }'
  done | sort -u | while read -r library; do
    cp -L "$library" "$stage/lib/$(basename "$library")"
  done
  strip --strip-unneeded "$stage"/bin/* "$stage"/lib/* 2>/dev/null || true
  # Dr.Jit for the GPU machine's Python 3.12 (no package registry there): the path tracer's peer.
  mkdir -p "$stage/wheels"
  "$python" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
    --platform manylinux_2_28_x86_64 -d "$stage/wheels" drjit==1.5.0 ||
    echo "device check: the drjit wheel could not be downloaded; the run will skip Dr.Jit's CUDA path tracer" >&2
  mkdir -p device-check
  tar -C "$stage" -cf - bin lib wheels scenes references | xz -9e -T2 >"$BUNDLE"
  rm -rf "$stage"
  local bytes
  bytes=$(stat -c %s "$BUNDLE")
  echo "device check: $BUNDLE, $((bytes >> 20)) MiB ($bytes bytes)"
  if [ "$bytes" -gt "$LIMIT" ]; then
    echo "device check: the bundle is over the 64 MiB a run carries" >&2
    exit 1
  fi
}

run() {
  local out=${OUT:?run on the GPU machine, where \$OUT is set}
  set +e +o pipefail  # a failing suite is reported, and the rest still run
  local root=/tmp/kiln-device-check
  local summary=$out/summary.txt logs=$out/logs.txt
  local started=$SECONDS
  rm -rf "$root" && mkdir -p "$root" && tar -xJf "$BUNDLE" -C "$root"
  local lib=$root/lib loader
  loader=$(ls "$lib"/ld-linux-x86-64.so.*)
  local libcuda
  libcuda=$(ldconfig -p | awk '/libcuda\.so\.1 / { print $NF; exit }')
  [ -n "$libcuda" ] || libcuda=$(ls /usr/local/nvidia/lib64/libcuda.so.1 /usr/lib/x86_64-linux-gnu/libcuda.so.1 2>/dev/null | head -1)
  local libcublas  # the toolkit's, else pip's nvidia-cublas (the machine's Python environments)
  libcublas=$(ls /usr/local/cuda/lib64/libcublas.so.1[23] /usr/local/cuda/targets/x86_64-linux/lib/libcublas.so.1[23] \
    /opt/*/.venv/lib/python3*/site-packages/nvidia/{cu13,cublas}/lib/libcublas.so.1[23] \
    /usr/local/lib/python3*/dist-packages/nvidia/{cu13,cublas}/lib/libcublas.so.1[23] 2>/dev/null | head -1)
  export KILN_LIBCUDA_PATH=$libcuda KILN_DEVICE=cuda KILN_CACHE_DIR=$root/cache KILN_BENCH_DIR=$PWD/bench
  [ -z "$libcublas" ] || export KILN_LIBCUBLAS_PATH=$libcublas
  {
    echo "Kiln device check, $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 || true
    echo "libcuda: ${libcuda:-not found}"
    echo "libcublas: ${libcublas:-not found (matmul on the GPU will say so)}"
  } >"$summary"
  : >"$logs"
  local failed=0
  for suite in $SUITES; do
    local status=passed
    if ! timeout 60 "$loader" --library-path "$lib" "$root/bin/test_$suite" --gtest_brief=1 >"$root/$suite.log" 2>&1; then
      status=FAILED
      failed=$((failed + 1))
    fi
    echo "suite $suite: $status ($(grep -c '^\[  FAILED  \] .*\.' "$root/$suite.log" || true) failing tests)" >>"$summary"
    { echo "=== $suite: $status"; grep -A12 'Failure\|FAILED\|what()' "$root/$suite.log" | head -60; } >>"$logs"
  done
  if grep -q "KILN_DEVICE=cuda:" "$root/ops.log"; then
    echo "NO GPU USED: $(grep -m1 'KILN_DEVICE=cuda:' "$root/ops.log") (everything above ran on the CPU)" >>"$summary"
  fi
  local fuzz=passed
  KILN_FUZZ_PROGRAMS=1000 timeout 150 "$loader" --library-path "$lib" "$root/bin/test_fuzz" \
    --gtest_filter=Fuzz.JitMatchesInterpreter:Fuzz.SymbolicLoopsMatchInterpreter --gtest_brief=1 \
    >"$root/fuzz.log" 2>&1 || fuzz=FAILED
  echo "fuzzer (1,000 programs and the loop programs, CUDA against the CPU interpreter): $fuzz" >>"$summary"
  { echo "=== fuzz: $fuzz"; head -c 20000 "$root/fuzz.log"; } >>"$logs"
  # The renderer on the GPU (the Kiln BVH) against the CPU and Mitsuba's references.
  local renderer=passed
  (cd "$root" && timeout 170 "$loader" --library-path "$lib" "$root/bin/render_device_check" scenes references) \
    >"$root/render.log" 2>&1 || renderer=FAILED
  { echo "renderer on the GPU: $renderer"; grep -v '^$' "$root/render.log" | tail -30; } >>"$summary"
  { echo "=== renderer: $renderer"; tail -c 6000 "$root/render.log"; } >>"$logs"
  local remaining=$((470 - (SECONDS - started)))
  if [ "$remaining" -gt 30 ]; then
    timeout "$remaining" "$loader" --library-path "$lib" "$root/bin/kiln_bench" --only gpu \
      >>"$summary" 2>"$root/bench.log" || echo "benchmarks: FAILED or cut short (see logs.txt)" >>"$summary"
    { echo "=== bench"; tail -c 4000 "$root/bench.log"; } >>"$logs"
  else
    echo "benchmarks: skipped, the 8 minutes were spent" >>"$summary"
  fi
  # The path tracer on the GPU: Kiln's (kiln_bench's control group) against Dr.Jit's CUDA
  # backend on the same workload (bench/python_bench.py --drjit-cuda; goal: Kiln at least as fast).
  remaining=$((470 - (SECONDS - started)))
  if [ "$remaining" -gt 60 ]; then
    timeout $((remaining / 2)) "$loader" --library-path "$lib" "$root/bin/kiln_bench" --only control \
      >>"$summary" 2>>"$root/bench.log" || echo "control benchmark: FAILED or cut short" >>"$summary"
    local wheel
    wheel=$(ls "$root"/wheels/drjit-*.whl 2>/dev/null | head -1)
    if [ -n "$wheel" ] && python3 -m pip install -q --no-index --no-deps --target "$root/py" "$wheel" >>"$root/bench.log" 2>&1; then
      remaining=$((470 - (SECONDS - started)))
      DRJIT_LIBCUDA_PATH=$libcuda PYTHONPATH=$root/py timeout "$remaining" python3 bench/python_bench.py --drjit-cuda \
        >>"$summary" 2>>"$root/bench.log" || echo "Dr.Jit CUDA path tracer: FAILED or cut short" >>"$summary"
    else
      echo "Dr.Jit CUDA path tracer: skipped (no drjit wheel in the bundle, or it did not install)" >>"$summary"
    fi
    { echo "=== bench (control, Dr.Jit)"; tail -c 4000 "$root/bench.log"; } >>"$logs"
  else
    echo "path tracer against Dr.Jit: skipped, the 8 minutes were spent" >>"$summary"
  fi
  echo "suites failed: $failed; fuzzer: $fuzz; renderer: $renderer; $((SECONDS - started)) s" >>"$summary"
  cat "$summary"
}

case "${1:-}" in
  pack) pack "${2:-build}" ;;
  run) run ;;
  *) echo "usage: $0 pack [BUILD] | run" >&2; exit 2 ;;
esac
