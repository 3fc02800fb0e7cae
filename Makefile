# Contact Sandbox: the two commands of the README do all set-up.
#   make run    build and run the main job
#   make test   build and pass the tests (the fast tier; `make validate` runs the long validations)
BUILD ?= build
JOBS  ?= $(shell nproc)
SCENE ?=

.PHONY: all deps build run test validate bench demo clean

all: build

deps:
	@bash scripts/install-deps.sh

$(BUILD)/build.ninja: CMakeLists.txt | deps
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release

build: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)

run: build
	./$(BUILD)/sandbox $(SCENE)

# The test tiers (docs/testing.md): ctest entries side by side, one per core.
test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) -LE validate

validate: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) -L validate

bench: build
	bash scripts/bench.sh $(BUILD)

demo: build
	./$(BUILD)/sandbox record pyramid --out demo.mp4 --seconds 8

clean:
	rm -rf $(BUILD)
