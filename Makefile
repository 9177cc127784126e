# The two commands of the README. Both install what is missing first.
BUILD ?= build
BUILD_TYPE ?= Release
JOBS ?= $(shell nproc)

.PHONY: all deps build run test test-sanitize install clean

all: build

deps:
	./scripts/install-deps.sh

build: deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE)
	cmake --build $(BUILD) -j$(JOBS)

run: build
	$(BUILD)/tools/webtensor info
	$(BUILD)/tools/webtensor bench --quick

test: build
	cd $(BUILD) && ctest --output-on-failure -j1
	@if [ "$(CI)" = true ]; then $(MAKE) --no-print-directory test-sanitize; fi

# The tests labelled "sanitize" under AddressSanitizer + UBSan + LeakSanitizer,
# in a build folder of their own (tests/RELIABILITY.md).
test-sanitize: deps
	cmake -S . -B $(BUILD)-sanitize -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWT_SANITIZE=ON
	cmake --build $(BUILD)-sanitize -j$(JOBS)
	cd $(BUILD)-sanitize && ctest --output-on-failure -j1 -L sanitize

install: build
	cmake --install $(BUILD)

clean:
	rm -rf $(BUILD) $(BUILD)-sanitize
