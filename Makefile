# The two commands a new machine needs (see README):
#   make run    install what is missing, build, measure the default model
#   make test   install what is missing, build, run every test (also under
#               AddressSanitizer + UndefinedBehaviorSanitizer, without CUDA)
# (make mutation, the slow mutation run, is neither: see docs/testing.md.)
# Everything else is a step of those two.

BUILD      ?= build
ASAN_BUILD ?= build-asan
JOBS       ?= $(shell nproc)
CTEST_ARGS ?=

.PHONY: run test build build-asan setup clean mutation llama-server

run: build
	$(BUILD)/inferbench

test: build build-asan llama-server
	cd $(BUILD) && ctest --output-on-failure -j$(JOBS) $(CTEST_ARGS)
	cd $(ASAN_BUILD) && ctest --output-on-failure -j$(JOBS) -LE slow $(CTEST_ARGS)

# setup.sh is idempotent; it prints the ONNX Runtime root the build uses.
build:
	@ort=$$(scripts/setup.sh) && \
	  cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DORT_ROOT="$$ort" >/dev/null && \
	  cmake --build $(BUILD) -j$(JOBS)

build-asan:
	@ort=$$(scripts/setup.sh) && \
	  cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DIB_SANITIZE=ON -DIB_WITH_CUDA=OFF \
	    -DORT_ROOT="$$ort" >/dev/null && \
	  cmake --build $(ASAN_BUILD) -j$(JOBS)

setup:
	scripts/setup.sh

# llama-server for the CPU, the real server the HTTP endpoint's tests start
# (docs/backend-llama.md, "llama-server for the tests"): built once a machine into ~/.cache/inferbench (about
# 8 min of CPU), found there by every clone after; IB_LLAMA_SERVER=PATH
# names one of the user's own. Not part of set-up: only the tests need it.
llama-server:
	@scripts/build-llama-server.sh --optional >/dev/null

# Mutation testing (not part of `make test`, not in CI: each mutant costs a
# rebuild and a test run, 10-40 s here). By default a random sample of
# MUTATION_SAMPLE mutants estimates the score; MUTATION_ARGS= runs all of
# them (hours). docs/testing.md says how to read the result.
MUTATION_FILES  ?= src/base/*.c src/core/*.c src/report/*.c cli/*.c
MUTATION_SAMPLE ?= 150
MUTATION_ARGS   ?= --sample $(MUTATION_SAMPLE) --seed 1
mutation:
	tests/mutation/mutate.py --files $(foreach f,$(MUTATION_FILES),'$(f)') $(MUTATION_ARGS) \
	  --report build-mutation/report.json

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) build-mutation
