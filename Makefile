# The two commands a new machine needs (see README):
#   make run    install what is missing, build, measure the default model
#   make test   install what is missing, build, run every test (also under
#               AddressSanitizer + UndefinedBehaviorSanitizer, without CUDA)
# Everything else is a step of those two.

BUILD      ?= build
ASAN_BUILD ?= build-asan
JOBS       ?= $(shell nproc)
CTEST_ARGS ?=

.PHONY: run test build build-asan setup clean

run: build
	$(BUILD)/inferbench

test: build build-asan
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

clean:
	rm -rf $(BUILD) $(ASAN_BUILD)
