# The two commands of the README. Both install what is missing first.
BUILD ?= build
BUILD_TYPE ?= Release
JOBS ?= $(shell nproc)

.PHONY: all deps build run test test-sanitize test-fuzz install clean wasm test-wasm

all: build

deps:
	./scripts/install-deps.sh

build: deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE)
	cmake --build $(BUILD) -j$(JOBS)

run: build
	$(BUILD)/tools/webtensor info
	$(BUILD)/tools/webtensor bench --quick
	@echo "Training a short epoch of the Fashion-MNIST example on the best backend here:"
	$(BUILD)/train_fashion_mnist --backend auto --epochs 1 --train-limit 12800 --eval-limit 2000

test: build
	cd $(BUILD) && ctest --output-on-failure -j1
	$(MAKE) --no-print-directory test-js
	@if [ "$(CI)" = true ]; then $(MAKE) --no-print-directory test-sanitize test-fuzz; fi

# The tests labelled "sanitize" under AddressSanitizer + UBSan + LeakSanitizer,
# in a build folder of their own (tests/RELIABILITY.md).
test-sanitize: deps
	cmake -S . -B $(BUILD)-sanitize -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWT_SANITIZE=ON
	cmake --build $(BUILD)-sanitize -j$(JOBS)
	cd $(BUILD)-sanitize && ctest --output-on-failure -j1 -L sanitize

# CPU-against-WebGPU differential fuzzing for FUZZ_SECONDS (clang,
# libFuzzer, ASan + UBSan), from the seed corpus in tests/fuzz/corpus; new
# inputs go to $(BUILD)-fuzz/corpus, a finding to $(BUILD)-fuzz/crash-*.
FUZZ_SECONDS ?= 60
test-fuzz:
	./scripts/install-deps.sh --fuzz
	CC=clang cmake -S . -B $(BUILD)-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWT_FUZZ=ON
	cmake --build $(BUILD)-fuzz -j$(JOBS) --target fuzz_diff
	mkdir -p $(BUILD)-fuzz/corpus
	cd $(BUILD)-fuzz && EGL_PLATFORM=surfaceless \
	  ASAN_OPTIONS=allocator_may_return_null=1:detect_leaks=0 \
	  tests/fuzz_diff corpus $(CURDIR)/tests/fuzz/corpus -max_total_time=$(FUZZ_SECONDS) \
	  -max_len=512 -rss_limit_mb=4096 -print_final_stats=1

# --- WebAssembly: the library for wasm32 (Emscripten) in $(WASM_BUILD),
# its suites run in Node (npm webgpu: Dawn on lavapipe) and in headless
# Chromium (SwiftShader). Emscripten 3.1.6's own JS tools need Debian's
# node modules when the node on PATH is another build.
WASM_BUILD ?= build-wasm
WASM_ENV = NODE_PATH=/usr/share/nodejs$(if $(NODE_PATH),:$(NODE_PATH))
wasm:
	./scripts/install-deps.sh --wasm
	$(WASM_ENV) emcmake cmake -S . -B $(WASM_BUILD) -DCMAKE_BUILD_TYPE=Release
	$(WASM_ENV) cmake --build $(WASM_BUILD) -j$(JOBS)

# --- JavaScript API: its tests (Node's test runner: the CPU backend and
# WebGPU through the npm webgpu package; the demo page in headless
# Chromium) and the demo page, served on 127.0.0.1.
WEB_PORT ?= 8000
JS_TESTS = tests/js/ops.test.mjs tests/js/api.test.mjs tests/js/readme.test.mjs tests/js/page.test.mjs
.PHONY: test-js web
test-js: wasm
	WT_WEB_DIR=$(CURDIR)/$(WASM_BUILD)/web node --expose-gc --test --test-concurrency=1 $(JS_TESTS)

web: wasm
	@echo "The demo page: http://127.0.0.1:$(WEB_PORT)/index.html"
	@echo "Open it with:  chromium --enable-unsafe-webgpu http://127.0.0.1:$(WEB_PORT)/index.html"
	@echo "(WebGPU on Linux needs --enable-unsafe-webgpu; Ctrl-C stops the server.)"
	cd $(WASM_BUILD)/web && python3 -m http.server --bind 127.0.0.1 $(WEB_PORT)

install: build
	cmake --install $(BUILD)

clean:
	rm -rf $(BUILD) $(BUILD)-sanitize $(BUILD)-fuzz $(WASM_BUILD)
