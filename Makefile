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

# The C++ suite once under AddressSanitizer and UndefinedBehaviorSanitizer.
sanitize:
	@$(MAKE) test BUILD=build-sanitize CMAKE_FLAGS="-DKILN_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug -DKILN_BUILD_BENCH=OFF"

clean:
	@rm -rf $(BUILD) build-sanitize
