# The two set-up commands: `make demo` runs the main job, `make test` runs the test suite.
# Each first installs whatever is missing (scripts/bootstrap.sh).
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=
# The Python package is built and tested in a virtual environment inside the build.
VENV ?= $(BUILD)/venv
PYTHON = $(abspath $(VENV))/bin/python

.PHONY: all bootstrap python-env configure build install-python test demo bench sanitize format format-check clean device-check

all: build

bootstrap:
	@bash scripts/bootstrap.sh

python-env: bootstrap
	@bash scripts/python_env.sh $(VENV)

configure: python-env
	@cmake -S . -B $(BUILD) -G Ninja -DKILN_BUILD_PYTHON=ON -DPython_EXECUTABLE=$(PYTHON) $(CMAKE_FLAGS) > /dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

# `pip install .` into the environment, reusing this build (only the extension is linked).
install-python: build
	@$(PYTHON) -m pip install -q --disable-pip-version-check --no-build-isolation --no-deps \
	  --config-settings=build-dir=$(BUILD) .

test: install-python format-check
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)
	@bash tests/package/run.sh $(BUILD)
	@cd tests/python && KILN_CACHE_DIR=$(abspath $(BUILD))/test-kernel-cache-python $(PYTHON) -m pytest -q --durations=25
	@# Again on the emulated CUDA device (docs/testing.md), the renderer with the Kiln BVH (its
	@# default there: the reference tests against Mitsuba's images run with it; on the CPU,
	@# test_render_accel.py compares its hits with Embree's), but for what does not depend on the
	@# device (the gradient fuzzer's programs, the stub and mypy, message spellings, the XML
	@# writer's files against their dicts) and story 1's inverse rendering, which once compiled
	@# a kernel late there (issue 28's note).
	@cd tests/python && KILN_DEVICE=cuda-emulated KILN_CACHE_DIR=$(abspath $(BUILD))/test-kernel-cache-python \
		$(PYTHON) -m pytest -q --durations=25 -p no:cacheprovider --ignore=test_render_grad_fuzz.py --ignore=test_inverse_crop.py \
		--ignore=test_stubs.py --ignore=test_spelling.py --ignore=test_scene_xml.py

demo: install-python
	@$(BUILD)/examples/mandelbrot mandelbrot.png
	@$(PYTHON) examples/render_demo.py
	@$(PYTHON) examples/render_crop_loop.py
	@$(PYTHON) examples/inverse_crop.py --iterations 150 --out $(BUILD)/inverse_crop
	@$(PYTHON) examples/per_ray_records.py
	@$(PYTHON) examples/render_records_dataset.py
	@$(PYTHON) examples/nerf_tiny.py

# The C++ table, then the Python ones (Dr.Jit joins as a baseline when it can be installed;
# render_bench.py installs Mitsuba 3.9 into build/mitsuba-venv itself).
bench: install-python
	@$(BUILD)/bench/kiln_bench $(BENCH_ARGS)
	@$(PYTHON) -c "import drjit" 2>/dev/null || $(PYTHON) -m pip install -q drjit 2>/dev/null || true
	@$(PYTHON) bench/python_bench.py $(BENCH_ARGS)
	@$(PYTHON) bench/nerf_bench.py $(BENCH_ARGS)
	@$(PYTHON) bench/render_bench.py $(BENCH_ARGS)
	@$(PYTHON) bench/accel_bench.py $(BENCH_ARGS)
	@$(PYTHON) bench/render_grad_bench.py $(BENCH_ARGS)
	@$(PYTHON) bench/radiance_field_bench.py $(BENCH_ARGS)

# The C++ suite under AddressSanitizer and UndefinedBehaviorSanitizer (debug build, so the
# IR verifier also runs after every evaluation); the fuzzer runs 500 programs there.
SANITIZE_ENV = ASAN_OPTIONS=allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1
sanitize: bootstrap
	@cmake -S . -B build-sanitize -G Ninja -DKILN_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug -DKILN_BUILD_BENCH=OFF > /dev/null
	@cmake --build build-sanitize -j $(JOBS)
	@cd build-sanitize && $(SANITIZE_ENV) ctest --output-on-failure -j $(JOBS) -E fuzz
	@$(SANITIZE_ENV) KILN_FUZZ_PROGRAMS=500 build-sanitize/tests/test_fuzz

# Packs the check a lent GPU machine runs (scripts/device_check.sh; docs/testing.md).
device-check: build
	@bash scripts/device_check.sh pack $(BUILD)

# The C++ tree follows .clang-format (clang-format pinned in the environment).
format: python-env
	@bash scripts/format.sh $(abspath $(VENV))/bin/clang-format

format-check: python-env
	@bash scripts/format.sh $(abspath $(VENV))/bin/clang-format --check

clean:
	@rm -rf $(BUILD) build-sanitize
