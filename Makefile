# The two commands a fresh Debian 12 machine needs: `make demo` and `make test`.
PRESET ?= default
BUILD_DIR := build/$(PRESET)
JOBS ?= $(shell nproc)

.PHONY: deps build demo test fuzz bench clean

deps:
	./scripts/install-deps.sh

build: deps
	cmake --preset $(PRESET)
	cmake --build --preset $(PRESET) -j $(JOBS)

# The demo runs only the lockstep command, so only it is built (not the test binaries).
demo: deps
	cmake --preset $(PRESET)
	cmake --build --preset $(PRESET) -j $(JOBS) --target lockstep
	./scripts/demo.sh $(BUILD_DIR)

test: deps
	./scripts/test.sh $(PRESET) $(JOBS)

# Every reader's libFuzzer target for FUZZ_SECONDS each (a clang build of its own in
# build/fuzz); their corpora also run as unit tests in `make test`.
FUZZ_SECONDS ?= 60
FUZZ_TARGETS := $(patsubst tests/fuzz/fuzz_%_reader.cpp,%,$(wildcard tests/fuzz/fuzz_*_reader.cpp))
fuzz: deps
	@mkdir -p build/fuzz
	@for target in $(FUZZ_TARGETS); do \
	  echo "== fuzz $$target ($(FUZZ_SECONDS) s)"; \
	  log=build/fuzz/fuzz-$$target.log; \
	  ./scripts/fuzz.sh $$target $(FUZZ_SECONDS) build/fuzz > $$log 2>&1 || { tail -n 40 $$log; exit 1; }; \
	  grep -E "^(stat::number_of_executed_runs|Done)" $$log | sed 's/^/   /'; \
	done

bench: PRESET = release
bench: build
	./scripts/bench.sh build/release

clean:
	rm -rf build
