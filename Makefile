# nriwasm — build, generate, test. `make help` lists the targets.

SHELL := bash
GO ?= go
# Tools are pinned and installed outside the repository, so clones share them.
TOOLS_BIN ?= $(HOME)/.cache/nriwasm-tools/bin
export PATH := $(TOOLS_BIN):$(PATH)

BUF_VERSION := v1.75.0
PROTOC_GEN_GO_VERSION := v1.36.12
VTPROTO_VERSION := v0.6.0
PROTOBUF_GO_LITE_VERSION := v0.14.0
STATICCHECK_VERSION := v0.8.2

# buf breaking compares the ABI with this (a git ref or a buf image).
BUF_AGAINST ?= .git\#branch=main
# The frozen image of every released ABI version; breaking changes against it fail.
ABI_BASELINE := abi/v1/v1.0.binpb

WASM_ENV := GOOS=wasip1 GOARCH=wasm
WASM_BUILD := $(WASM_ENV) $(GO) build -buildmode=c-shared -trimpath -buildvcs=false
BIN := bin/nriwasm
# Rust: Debian's toolchain and packaged crates, offline (.ci/rust-deps installs
# them; sdk/rust/cargo-debian.toml points cargo at them). Paths are remapped so a
# rebuild anywhere gives the same bytes.
RUST_TARGET_DIR := $(CURDIR)/.cache/cargo-target
CARGO := RUSTC=/usr/bin/rustc RUSTDOC=/usr/bin/rustdoc CARGO_TARGET_DIR=$(RUST_TARGET_DIR) /usr/bin/cargo --config $(CURDIR)/sdk/rust/cargo-debian.toml
RUST_WASM := RUSTFLAGS=--remap-path-prefix=$(CURDIR)=/nriwasm $(CARGO) build --quiet --release --locked --target wasm32-wasi --manifest-path
RUST_OUT := $(RUST_TARGET_DIR)/wasm32-wasi/release
# containerd, runc and crictl for the integration tests, cached outside the repository.
INTEGRATION_BIN ?= $(HOME)/.cache/nriwasm-integration/bin

# Fuzz targets (package:function): every parser of untrusted bytes. make fuzz
# runs each for FUZZTIME; a crasher lands in the package's testdata/fuzz/, the
# seed corpus, and is committed with its fix.
FUZZ_TARGETS := \
	./host/wasm/internal/wasmbin:FuzzParse \
	./host/wasm/internal/wasmbin:FuzzSetCustomSection \
	./host/wasm/internal/interrupt:FuzzInstrument \
	./host/wasm/internal/interrupt:FuzzMergeData \
	./host/wasm:FuzzResponse \
	./host/validate:FuzzAdjustment \
	./host/state:FuzzUnmarshal \
	./host/state:FuzzReplayLog \
	./abi/cpuset:FuzzParseList \
	./sdk/go/kit/jsontext:FuzzParseAsEncodingJSON \
	./host/config:FuzzParse \
	./host/config:FuzzParseQuantity \
	./host/internal/scenario:FuzzParse \
	./host/internal/scenario:FuzzParseQuantity \
	./host/oci/ref:FuzzParse \
	./host/topology:FuzzDiscover \
	./host/topology:FuzzParseSize \
	./host/record:FuzzParseFile
FUZZTIME ?= 10m
FUZZFLAGS ?=

.PHONY: help tools generate policies build test race bench bench-footprint bench-nri-plugins nri-plugins-deps lint buf-lint buf-breaking check-generated ci integration-deps integration browser-test soak e2e rust-deps rust-policies rust fuzz fuzz-short

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-16s %s\n", $$1, $$2}'

tools: ## install buf, the protoc plugins and staticcheck (pinned)
	@mkdir -p $(TOOLS_BIN)
	GOBIN=$(TOOLS_BIN) $(GO) install github.com/bufbuild/buf/cmd/buf@$(BUF_VERSION)
	GOBIN=$(TOOLS_BIN) $(GO) install google.golang.org/protobuf/cmd/protoc-gen-go@$(PROTOC_GEN_GO_VERSION)
	GOBIN=$(TOOLS_BIN) $(GO) install github.com/planetscale/vtprotobuf/cmd/protoc-gen-go-vtproto@$(VTPROTO_VERSION)
	GOBIN=$(TOOLS_BIN) $(GO) install github.com/aperturerobotics/protobuf-go-lite/cmd/protoc-gen-go-lite@$(PROTOBUF_GO_LITE_VERSION)
	GOBIN=$(TOOLS_BIN) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

generate: ## regenerate abi/v1/*.pb.go (host codec and the guest's lite codec, rewritten by abi/internal/guestcodec) and host/record/v1/*.pb.go (host codec) from the .proto files
	rm -rf .cache/abi-lite
	buf generate
	buf generate --template buf.gen.host.yaml
	@# protoc-gen-go has no build-tag option: its files are the host's (!wasip1).
	@for f in abi/v1/*.pb.go; do case $$f in *_vtproto.pb.go|*_lite.pb.go) ;; \
		*) grep -q '^//go:build' $$f || sed -i '1i //go:build !wasip1\n' $$f;; esac; done
	@for f in .cache/abi-lite/abi/v1/*.pb.go; do mv $$f abi/v1/$$(basename $$f .pb.go)_lite.pb.go; done
	@# The guest's codec made smaller, same bytes on the wire (abi/RATIONALE.md):
	@# oneofs by type switch, decode errors by shared constructors.
	$(GO) run ./abi/internal/guestcodec/cmd/guestcodec abi/v1/*_lite.pb.go

policies: rust-policies ## build and seal every .wasm: built-in policies and test fixtures
	$(WASM_BUILD) -o policies/builtin/conformance.wasm ./sdk/go/conformance/cmd/conformance
	$(WASM_BUILD) -o policies/builtin/topology-aware.wasm ./policies/topologyaware/cmd/topology-aware
	$(WASM_BUILD) -o policies/builtin/balloons.wasm ./policies/balloons/cmd/balloons
	$(GO) run ./host/cmd/nriwasm policy seal policies/builtin/conformance.wasm
	$(GO) run ./host/cmd/nriwasm policy seal policies/builtin/topology-aware.wasm
	$(GO) run ./host/cmd/nriwasm policy seal policies/builtin/balloons.wasm
	$(WASM_BUILD) -o host/wasm/testdata/rawguest.wasm ./host/wasm/testdata/rawguest
	$(WASM_BUILD) -tags wrongabi -o host/wasm/testdata/rawguest-wrongabi.wasm ./host/wasm/testdata/rawguest
	$(WASM_BUILD) -tags nocall -o host/wasm/testdata/rawguest-nocall.wasm ./host/wasm/testdata/rawguest
	$(WASM_BUILD) -o host/wasm/testdata/goinwasm.wasm ./host/wasm/testdata/goinwasm
	$(WASM_BUILD) -o host/wasm/internal/interrupt/testdata/spin.wasm ./host/wasm/internal/interrupt/testdata/spin
	$(WASM_BUILD) -o host/abicheck/testdata/faulty.wasm ./host/abicheck/testdata/faulty/cmd/faulty
	$(GO) run ./host/cmd/nriwasm policy seal host/abicheck/testdata/faulty.wasm

rust-deps: ## install Debian's Rust toolchain, wasm32 std and prost crates (apt, only what is missing)
	bash .ci/rust-deps

rust-policies: rust-deps ## build and seal the Rust-built .wasm: policies/netdev, the Rust conformance fixture
	$(RUST_WASM) Cargo.toml --package nriwasm-conformance
	cp $(RUST_OUT)/nriwasm_conformance.wasm host/wasm/testdata/conformance-rust.wasm
	$(RUST_WASM) Cargo.toml --package nriwasm-netdev
	cp $(RUST_OUT)/nriwasm_netdev.wasm policies/netdev/netdev.wasm
	$(GO) run ./host/cmd/nriwasm policy seal host/wasm/testdata/conformance-rust.wasm
	$(GO) run ./host/cmd/nriwasm policy seal policies/netdev/netdev.wasm

rust: rust-policies ## test the Rust SDK, the Rust policies and docs' Rust example natively, build their .wasm, run their Go tests and policy test
	$(CARGO) test --quiet --locked --manifest-path Cargo.toml --package nriwasm
	$(CARGO) test --quiet --locked --manifest-path Cargo.toml --package nriwasm-netdev
	$(CARGO) test --quiet --locked --manifest-path Cargo.toml --package pin-all
	$(RUST_WASM) Cargo.toml --package pin-all
	$(GO) run ./host/cmd/nriwasm policy seal $(RUST_OUT)/pin_all.wasm
	$(GO) run ./host/cmd/nriwasm policy test $(RUST_OUT)/pin_all.wasm --cache-dir $(RUST_TARGET_DIR)/nriwasm-cache
	$(GO) test ./policies/netdev/
	$(GO) test ./host/wasm/ -run TestConformance

build: ## build bin/nriwasm (the built-in policies are embedded)
	$(GO) build -o $(BIN) ./host/cmd/nriwasm

test: ## run every test
	$(GO) test -timeout 30m ./...

fuzz: ## run every fuzz target for FUZZTIME each (default 10m; FUZZFLAGS=-parallel=1 on a shared machine)
	@set -e; for t in $(FUZZ_TARGETS); do \
		echo "== $${t%%:*} $${t##*:} for $(FUZZTIME)"; \
		$(GO) test -run '^$$' -fuzz "^$${t##*:}$$" -fuzztime $(FUZZTIME) $(FUZZFLAGS) "$${t%%:*}"; \
	done

# fuzz-short counts executions instead of seconds: Go 1.26's fuzz coordinator
# can fail a target with a bare "context deadline exceeded" when a timed
# -fuzztime ends under load (go.dev/issue/75804, fixed in Go 1.27); a count
# has no deadline to race.
fuzz-short: ## run every fuzz target for a few hundred executions (CI)
	@$(MAKE) --no-print-directory fuzz FUZZTIME=500x FUZZFLAGS="-fuzzminimizetime=100x $(FUZZFLAGS)"

race: ## run the concurrent packages' tests under the race detector: the ABI, the SDK, the Wasm host and the agent
	$(GO) test -race -timeout 30m ./abi/... ./sdk/... ./host/wasm/... ./host/resmgr/... ./host/nri/... ./host/dra/... \
		./host/claimstatus/... ./host/metrics/... ./host/config/... ./host/state/...

bench: bench-footprint ## run the benchmarks (benchstat-friendly output in bench.txt), footprint included
	$(GO) test -run '^$$' -bench . -skip AgentFootprint -benchmem -count 5 ./... | tee bench.txt

# RSS is per process: each AgentFootprint case runs in a process of its own.
bench-footprint: ## guest sizes (and code per package), the agent's RSS and start to ready with 1,000 containers (cold, warm; in process, and the real agent through NRI's adaptation), a policy's load warm, from the compiled-code seed, on the interpreter and cold (bench-footprint.txt)
	set -o pipefail; $(GO) test -run '^$$' -bench ModuleSize -benchtime 1x ./policies/builtin/ | tee bench-footprint.txt
	set -o pipefail; $(GO) run ./internal/wasmsize/cmd/wasmsize -top 20 policies/builtin/conformance.wasm policies/builtin/topology-aware.wasm policies/builtin/balloons.wasm | tee -a bench-footprint.txt
	set -o pipefail; $(GO) test -run '^$$' -bench 'Load/(warm-cache|seed|interpreter|cold)/go' -benchtime 3x ./host/wasm/ | tee -a bench-footprint.txt
	set -o pipefail; $(GO) test -run '^$$' -bench 'AgentFootprint/cold' -benchtime 1x ./host/nri/ | tee -a bench-footprint.txt
	set -o pipefail; $(GO) test -run '^$$' -bench 'AgentFootprint/warm' -benchtime 1x ./host/nri/ | tee -a bench-footprint.txt
	set -o pipefail; $(GO) test -tags integration,footprint -count=1 -v -run '^TestAgentThousandContainersFigures$$' ./integration/agent/ | grep -E 'FIGURE|^(--- |ok|FAIL)' | tee -a bench-footprint.txt

nri-plugins-deps: ## build nri-plugins' own topology-aware agent at a pinned commit for bench-nri-plugins (cached; NRI_PLUGINS_GIT: where to fetch it, default GitHub)
	NRIWASM_INTEGRATION_BIN=$(INTEGRATION_BIN) bash .ci/nri-plugins-deps

bench-nri-plugins: integration-deps nri-plugins-deps ## nri-plugins' agent and ours against one containerd: start to ready and RSS, side by side (as root)
	NRIWASM_INTEGRATION_BIN=$(INTEGRATION_BIN) $(GO) test -tags integration,nriplugins -count=1 -v -run TestNRIPluginsSideBySide ./integration/agent/

lint: buf-lint buf-breaking ## gofmt, go vet (native and wasip1), staticcheck, go mod tidy, buf lint and breaking
	@$(GO) mod tidy -diff >/dev/null || { echo "go.mod/go.sum are not tidy: run go mod tidy"; $(GO) mod tidy -diff; exit 1; }
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) vet -tags integration ./integration/...
	$(GO) vet -tags integration,e2e ./integration/e2e/
	$(GO) vet -tags integration,browser ./integration/browser/
	$(GO) vet -tags integration,nriplugins ./integration/agent/
	$(GO) vet -tags integration,footprint ./integration/agent/
	$(WASM_ENV) $(GO) vet ./sdk/... ./policies/... ./internal/builtintest/ ./host/wasm/testdata/rawguest/ ./host/wasm/testdata/goinwasm/ ./host/abicheck/testdata/faulty/...
	staticcheck ./...
	staticcheck -tags integration ./integration/...
	staticcheck -tags integration,browser ./integration/browser/
	staticcheck -tags integration,nriplugins ./integration/agent/
	staticcheck -tags integration,footprint ./integration/agent/
	staticcheck -tags integration,e2e ./integration/e2e/

buf-lint:
	buf lint

buf-breaking:
	@if git rev-parse --verify -q main >/dev/null && git cat-file -e main:abi/v1/abi.proto 2>/dev/null; then \
		buf breaking --against '$(BUF_AGAINST)'; else echo "buf breaking: no ABI on main yet"; fi
	buf breaking --against $(ABI_BASELINE)

check-generated: generate policies ## fail if generated code or .wasm fixtures differ from their sources
	@git diff --exit-code --stat -- abi host/record/v1 policies host/wasm/testdata host/wasm/internal/interrupt/testdata host/abicheck/testdata || \
		{ echo "generated files are out of date: run make generate policies and commit"; exit 1; }
	@untracked=$$(git ls-files --others --exclude-standard -- abi host/record/v1 policies host/abicheck/testdata); if [ -n "$$untracked" ]; then \
		echo "untracked generated files: $$untracked"; exit 1; fi

integration-deps: ## install containerd, runc, crictl, busybox, kube-apiserver, etcd, helm, registry, oras and crane for the integration tests (cached)
	NRIWASM_INTEGRATION_BIN=$(INTEGRATION_BIN) bash .ci/integration-deps
	NRIWASM_INTEGRATION_BIN=$(INTEGRATION_BIN) bash .ci/kube-deps
	NRIWASM_INTEGRATION_BIN=$(INTEGRATION_BIN) bash .ci/helm-deps
	NRIWASM_INTEGRATION_BIN=$(INTEGRATION_BIN) bash .ci/oci-deps

integration: integration-deps ## run the tests against a real containerd, kube-apiserver and helm (as root)
	NRIWASM_INTEGRATION_BIN=$(INTEGRATION_BIN) $(GO) test -tags integration -count=1 -v $$($(GO) list -tags integration ./integration/... | grep -v /integration/soak)

# How long `make soak` runs; .ci/run passes a shorter one.
SOAK_DURATION ?= 10m

browser-test: integration-deps ## open the CPU maps (simulate --output html, the agent's /debug/cpus) in headless Chromium, installed from Debian when missing (as root)
	command -v chromium >/dev/null || { apt-get update -qq && apt-get install -y -qq chromium; }
	NRIWASM_INTEGRATION_BIN=$(INTEGRATION_BIN) $(GO) test -tags integration,browser -count=1 -v ./integration/browser/

soak: ## run the agent against real containerd (and kube-apiserver for DRA claims) under churn, kill -9, restarts, traps and live changes for SOAK_DURATION (as root; SOAK_DRA=0 leaves DRA out)
	NRIWASM_INTEGRATION_BIN=$(INTEGRATION_BIN) bash .ci/integration-deps
	NRIWASM_INTEGRATION_BIN=$(INTEGRATION_BIN) bash .ci/kube-deps
	SOAK_DURATION=$(SOAK_DURATION) NRIWASM_INTEGRATION_BIN=$(INTEGRATION_BIN) $(GO) test -tags integration -count=1 -v -timeout 0 -run TestSoak ./integration/soak/

e2e: integration-deps ## a real one-node cluster: helm install, QoS pods, a DRA claim, restarts, upgrade, uninstall (as root; docs/e2e.md)
	NRIWASM_INTEGRATION_BIN=$(INTEGRATION_BIN) $(GO) test -tags integration,e2e -count=1 -v -timeout 20m ./integration/e2e/

ci: tools rust lint check-generated test race fuzz-short integration browser-test ## what .ci/run does: everything, a 2-minute soak, the one-node cluster
	$(MAKE) soak SOAK_DURATION=2m
	$(MAKE) e2e
