# The two commands a fresh Debian 12 machine needs: `make demo` and `make test`.
PRESET ?= default
BUILD_DIR := build/$(PRESET)
JOBS ?= $(shell nproc)

.PHONY: deps build demo test bench clean

deps:
	./scripts/install-deps.sh

build: deps
	cmake --preset $(PRESET)
	cmake --build --preset $(PRESET) -j $(JOBS)

demo: build
	./scripts/demo.sh $(BUILD_DIR)

test: build
	ctest --preset $(PRESET) -j $(JOBS)

bench: PRESET = release
bench: build
	./scripts/bench.sh build/release

clean:
	rm -rf build
