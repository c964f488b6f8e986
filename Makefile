# The two set-up commands: `make demo` runs the main job, `make test` runs the test suite.
# Each first installs whatever is missing (scripts/bootstrap.sh).
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=

.PHONY: all bootstrap configure build test demo bench sanitize clean

all: build

bootstrap:
	@bash scripts/bootstrap.sh

configure: bootstrap
	@cmake -S . -B $(BUILD) -G Ninja $(CMAKE_FLAGS) > /dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

test: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)
	@bash tests/package/run.sh $(BUILD)

demo: build
	@$(BUILD)/examples/mandelbrot mandelbrot.png

bench: build
	@$(BUILD)/bench/kiln_bench $(BENCH_ARGS)

# The C++ suite under AddressSanitizer and UndefinedBehaviorSanitizer (debug build, so the
# IR verifier also runs after every evaluation); the fuzzer runs 500 programs there.
SANITIZE_ENV = ASAN_OPTIONS=allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1
sanitize: bootstrap
	@cmake -S . -B build-sanitize -G Ninja -DKILN_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug -DKILN_BUILD_BENCH=OFF > /dev/null
	@cmake --build build-sanitize -j $(JOBS)
	@cd build-sanitize && $(SANITIZE_ENV) ctest --output-on-failure -j $(JOBS) -E fuzz
	@$(SANITIZE_ENV) KILN_FUZZ_PROGRAMS=500 build-sanitize/tests/test_fuzz

clean:
	@rm -rf $(BUILD) build-sanitize
