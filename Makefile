# The two commands of the README. Both install what is missing first.
BUILD ?= build
BUILD_TYPE ?= Release
JOBS ?= $(shell nproc)

.PHONY: all deps build run test test-sanitize test-fuzz test-tsan install clean wasm test-wasm

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
	$(MAKE) --no-print-directory test-wasm
	$(MAKE) --no-print-directory test-js
	@if [ "$(CI)" = true ]; then $(MAKE) --no-print-directory test-sanitize test-fuzz test-tsan; fi

# The tests labelled "sanitize" under AddressSanitizer + UBSan + LeakSanitizer,
# in a build folder of their own (tests/RELIABILITY.md).
test-sanitize: deps
	cmake -S . -B $(BUILD)-sanitize -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWT_SANITIZE=ON
	cmake --build $(BUILD)-sanitize -j$(JOBS)
	cd $(BUILD)-sanitize && ctest --output-on-failure -j1 -L sanitize

# CPU-against-WebGPU differential fuzzing for FUZZ_SECONDS (clang,
# libFuzzer, ASan + UBSan), from the seed corpus in tests/fuzz/corpus; new
# inputs go to $(BUILD)-fuzz/corpus, a finding to $(BUILD)-fuzz/crash-*.
# Then the parsers (.npy, safetensors, GGUF, options and knobs) for
# PARSE_FUZZ_SECONDS each, from tests/fuzz/corpus_<name>, with leak checks
# (not for options: its WebGPU contexts load drivers, whose leaks LSan
# cannot name without the sanitized build's keep-loaded preload).
FUZZ_SECONDS ?= 60
# A fixed seed: the same mutations on every CI run (a longer run, with
# another FUZZ_SEED, explores further: tests/RELIABILITY.md).
FUZZ_SEED ?= 1
PARSE_FUZZ_SECONDS ?= 20
PARSE_FUZZERS = npy safetensors gguf options tokenizer_json tokenize
test-fuzz:
	./scripts/install-deps.sh --fuzz
	CC=clang cmake -S . -B $(BUILD)-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWT_FUZZ=ON
	cmake --build $(BUILD)-fuzz -j$(JOBS) --target fuzz_diff $(addprefix fuzz_,$(PARSE_FUZZERS))
	mkdir -p $(BUILD)-fuzz/corpus
	cd $(BUILD)-fuzz && EGL_PLATFORM=surfaceless \
	  ASAN_OPTIONS=allocator_may_return_null=1:detect_leaks=0 \
	  tests/fuzz_diff corpus $(CURDIR)/tests/fuzz/corpus -max_total_time=$(FUZZ_SECONDS) -seed=$(FUZZ_SEED) \
	  -max_len=512 -rss_limit_mb=4096 -print_final_stats=1
	for t in $(PARSE_FUZZERS); do \
	  mkdir -p $(BUILD)-fuzz/corpus_$$t && \
	  (cd $(BUILD)-fuzz && EGL_PLATFORM=surfaceless \
	    ASAN_OPTIONS=allocator_may_return_null=1:detect_leaks=$$([ $$t = options ] && echo 0 || echo 1) \
	    tests/fuzz_$$t corpus_$$t $(CURDIR)/tests/fuzz/corpus_$$t -max_total_time=$(PARSE_FUZZ_SECONDS) -seed=$(FUZZ_SEED) \
	    -max_len=4096 -rss_limit_mb=2048 -print_final_stats=1) || exit 1; \
	done

# The thread tests under ThreadSanitizer (clang), in a build folder of
# their own; only the library and the test program are built (-O0 and line
# tables: what TSan needs for its reports, at the least compile time: the
# build is 30 % shorter than at -O1 and the tests' time is the drivers').
test-tsan:
	./scripts/install-deps.sh --fuzz
	CC=clang cmake -S . -B $(BUILD)-tsan -DCMAKE_BUILD_TYPE=None "-DCMAKE_C_FLAGS=-O0 -gline-tables-only" -DWT_TSAN=ON
	cmake --build $(BUILD)-tsan -j$(JOBS) --target runtime_multi
	cd $(BUILD)-tsan && ctest --output-on-failure -j1 -L tsan

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

# The wasm suites: every program on the CPU backend and on WebGPU in Node
# (Dawn on lavapipe), and on WebGPU in headless Chromium (SwiftShader).
WASM_NODE_RUNS = gemm_portable:cpu core_api_check:cpu core_api_check:webgpu api_misuse:cpu api_misuse:webgpu \
                 bad_input:cpu bad_input:webgpu conformance:cpu conformance:webgpu \
                 WT_NODE_WEBGPU=backend=null@no_real_adapter:webgpu \
                 WT_NODE_WEBGPU=none@no_real_adapter:webgpu \
                 runtime_errors:cpu runtime_errors:webgpu
# In Chromium the conformance suite runs without its eight slowest ops
# (two thirds of its time, SwiftShader being slow at their large cases);
# they run in Node. Every other op of the suite runs there, a new one too.
WASM_CONFORMANCE_BROWSER_SKIP = add sum exp matmul copy layernorm softmax rmsnorm
wasm_empty :=
wasm_comma := ,
WASM_CHROMIUM_RUNS = core_api_check:webgpu api_misuse:webgpu bad_input:webgpu runtime_errors:webgpu \
                     conformance:webgpu:$(subst $(wasm_empty) $(wasm_empty),$(wasm_comma),$(addprefix -,$(WASM_CONFORMANCE_BROWSER_SKIP)))
test-wasm: wasm
	node tests/web/run_suites.mjs node $(WASM_BUILD) $(WASM_NODE_RUNS)
	node tests/web/run_suites.mjs chromium $(WASM_BUILD) $(WASM_CHROMIUM_RUNS)

# --- JavaScript API: its tests (Node's test runner: the CPU backend and
# WebGPU through the npm webgpu package; the demo page in headless
# Chromium) and the demo page, served on 127.0.0.1.
WEB_PORT ?= 8000
JS_TESTS = tests/js/ops.test.mjs tests/js/api.test.mjs tests/js/readme.test.mjs tests/js/page.test.mjs \
           tests/js/tokenizer.test.mjs
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
	rm -rf $(BUILD) $(BUILD)-sanitize $(BUILD)-fuzz $(BUILD)-tsan $(WASM_BUILD)
