# vkxla: two commands do all set-up on a fresh Debian machine (as root).
#   make run   — compiles and runs the example program
#   make test  — runs every test (lavapipe with the Khronos validation layer on)
SHELL := /bin/bash
export PATH := $(PATH):/usr/local/go/bin
GO ?= go
# Validation settings (sync validation on) for every device test. make run times the
# example without the layer (it slows each dispatch ~25×): VKXLA_VALIDATION=1 make run
# turns it on.
export VK_LAYER_SETTINGS_PATH := $(CURDIR)/testdata/vk_layer_settings.txt
test test-go test-race test-cgocheck bench: export VKXLA_VALIDATION ?= 1

.PHONY: setup run test test-go test-race test-cgocheck vet fuzz generate bench peer models gomlx gomlx-tests

setup:
	@bash scripts/setup.sh

run: setup
	$(GO) run ./cmd/vkxla

test: setup vet test-go test-race test-cgocheck

vet:
	$(GO) vet ./...

test-go:
	$(GO) test -count=1 ./...

# The device GC stress test, concurrent Runs of one executable, and the runtime's
# stress tests (Compile/Run/Upload/tensor Close/ClearCaches racing Close), under the
# race detector.
test-race:
	$(GO) test -count=1 -race -run 'GCStress|Concurrent' ./device/... .

# The device binding must pass Go's strict cgo pointer checks.
test-cgocheck:
	GOEXPERIMENT=cgocheck2 $(GO) test -count=1 ./device/...

generate:
	$(GO) generate ./...

bench: setup
	$(GO) test -run '^$$' -bench . -benchtime 3x ./...

# A few minutes of parser fuzzing (not part of make test; the seed corpus is).
fuzz:
	$(GO) test -run '^$$' -fuzz FuzzParse -fuzztime 3m ./hlo/

# The peer check (bench/peer, its own module so that the main module gains no
# dependency): the MLP gradient against GoMLX v0.26.0's pure-Go backend, values and
# times side by side, and the model suite's programs translated to GoMLX against
# cpuref. Not part of make test (it downloads GoMLX).
peer: setup
	cd bench/peer && $(GO) test -count=1 -v ./...

# Issue 12's model suite (bench/README.md): the model programs against the same
# run's sgemm, the conv/softmax/layernorm targets and kernel counts, then the peer
# column (the same modules on GoMLX's simplego). Validation off: it times. Not part
# of make test or CI; about 40 minutes on a loaded lavapipe host. MODELS_FLAGS passes flags
# (-reps N, -only REGEXP, -plot FILE.svg, -cpuref).
models: setup
	VKXLA_VALIDATION=0 $(GO) run ./bench/cmd/modelsuite $(MODELS_FLAGS)
	cd bench/peer && VKXLA_VALIDATION=0 $(GO) run ./cmd/peersuite

# The GoMLX backend (gomlx/, its own module: docs/gomlx.md). make gomlx trains the
# MLP example with GoMLX's training loop on vkxla and on simplego (loss curves side
# by side, step times, the train step's device memory) after the module's own tests;
# make gomlx-tests runs GoMLX's own test packages on vkxla and on simplego
# (GOMLX_TESTS_FLAGS passes flags: -pkgs, -run, -out FILE). Neither is part of make
# test: they download GoMLX.
gomlx: setup
	cd gomlx && VKXLA_VALIDATION=1 $(GO) test -count=1 ./...
	cd gomlx && VKXLA_VALIDATION=0 $(GO) run ./cmd/gomlx-mlp

gomlx-tests: setup
	cd gomlx && VKXLA_VALIDATION=1 $(GO) run ./cmd/gomlxtests -repo .. $(GOMLX_TESTS_FLAGS)
