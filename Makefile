# The two commands of the README. Both install what is missing first.
BUILD ?= build
BUILD_TYPE ?= Release
JOBS ?= $(shell nproc)

.PHONY: all deps build run test install clean

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

install: build
	cmake --install $(BUILD)

clean:
	rm -rf $(BUILD)
