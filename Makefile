# The verbs of the project. `make run` and `make test` do all set-up on a
# fresh machine: pinned tools are built with `go install` into .tools/bin,
# PostgreSQL is installed from Debian's packages when it is missing.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := build

GO        ?= go
TOOLS     := $(CURDIR)/.tools/bin
DEPS      := $(CURDIR)/.deps/proto
export PATH := $(TOOLS):$(PATH)

# Pinned tool versions. Bump deliberately; `make generate` must then be run
# and its output committed.
BUF_VERSION                  := v1.75.0
PROTOC_GEN_GO_VERSION        := v1.36.12
PROTOC_GEN_CONNECT_GO_VERSION := v1.19.1
PROTOC_GEN_GO_GRPC_VERSION   := v1.6.2
SQLC_VERSION                 := v1.31.1
STATICCHECK_VERSION          := v0.8.2
# grpcurl: the tests call the gateway's gRPC methods with it, as a user does.
GRPCURL_VERSION              := v1.9.4
# Dependency protos are read from these Go modules at generate time.
PROTOVALIDATE_PROTO_VERSION  := v1.2.2
GOOGLEAPIS_FROM              := github.com/grpc-ecosystem/grpc-gateway@v1.16.0

# Product plugins: every plugins/<name> with a main package, except the SDK
# and the partner examples (built separately). The test plugin lives in
# internal/testplugin.
PLUGINS   := $(filter-out sdk examples,$(notdir $(patsubst %/main.go,%,$(wildcard plugins/*/main.go))))
ADDR      ?= 127.0.0.1:8080
DATA_DIR  ?= ./var
# The example partner plugin is a module of its own (example.com/hello), as
# a partner's is: the main module's ./... skips it, so it is built, tested
# and linted from its folder.
EXAMPLE   := plugins/examples/hello
EXAMPLE_DEPS := $(EXAMPLE)/.deps/proto
TEST_PG   := $(CURDIR)/.tmp/pgtest
# Screenshots and other files tests keep (go test -artifacts)
TEST_OUT  := $(CURDIR)/.tmp/test-output

# The commit bin/gateway --version names ("-dirty" with uncommitted
# changes), passed by -ldflags: Go's own VCS stamping misses git worktrees
# and GOFLAGS=-buildvcs=false. Empty outside a git checkout.
COMMIT    := $(shell git describe --always --dirty --abbrev=40 --match=NONE 2>/dev/null)

.PHONY: build run smoke test test-go test-node lint generate check-generated tools postgres browser runtimes wrk soak bench bench-go profile proto-check clean

## build: bin/gateway, one binary per product plugin in bin/plugins/, and
## (outside the plugins folder) the test plugin, the example partner plugin
## and the fake OpenAI upstream the Node.js tests use
## Binaries are static (no cgo): nothing needs libc, and each process then
## maps neither libc nor pthread stacks (about 1.5 MB of RSS each).
build: export CGO_ENABLED = 0
build:
	$(GO) build -ldflags "-X main.commit=$(COMMIT)" -o bin/gateway ./gateway/cmd/gateway
	@mkdir -p bin/plugins
	@for p in $(PLUGINS); do echo "go build -o bin/plugins/$$p ./plugins/$$p"; $(GO) build -o bin/plugins/$$p ./plugins/$$p; done
	@chmod go-w bin/plugins/* # the gateway launches only plugins no one else can replace
	$(GO) build -o bin/testplugin ./internal/testplugin
	$(GO) build -o bin/fake-openai-upstream ./internal/openaitest/cmd/fake-openai-upstream
	cd $(EXAMPLE) && $(GO) build -o $(CURDIR)/bin/examples/hello .

## run: build everything and start the platform on the embedded database
run: postgres build
	./bin/gateway --addr $(ADDR) --data-dir $(DATA_DIR) --plugins-dir ./bin/plugins

## smoke: check the platform `make run` serves, end to end (gateway smoke)
smoke:
	./bin/gateway smoke --base-url http://$(ADDR) --credentials $(DATA_DIR)/dev-credentials.json

## test: install what the tests need and run the whole suite
test: tools postgres browser runtimes check-generated build test-go test-node

test-go:
	@rm -rf $(TEST_PG) $(TEST_OUT); mkdir -p $(dir $(TEST_PG)) $(TEST_OUT)
	@url=$$($(GO) run ./internal/cmd/pgtestd start --dir $(TEST_PG)); \
	status=0; \
	SVC_TEST_DATABASE_URL="$$url" SVC_BIN_DIR=$(CURDIR)/bin SVC_GRPCURL=$(TOOLS)/grpcurl $(GO) test -count=1 -timeout 30m -artifacts -outputdir $(TEST_OUT) ./... || status=$$?; \
	(cd $(EXAMPLE) && SVC_TEST_DATABASE_URL="$$url" $(GO) test -count=1 ./...) || status=$$?; \
	$(GO) run ./internal/cmd/pgtestd stop --dir $(TEST_PG) || true; \
	exit $$status

## test-node: the OIDC flow with the npm openid-client package, chat
## completions with the npm openai package, a client generated from the
## OpenAPI document (openapi-typescript, tsc, openapi-fetch)
test-node: build
	cd tests/node-oidc && npm ci --no-audit --no-fund --loglevel=error && SVC_BIN_DIR=$(CURDIR)/bin node --test
	cd tests/node-openai && npm ci --no-audit --no-fund --loglevel=error && SVC_BIN_DIR=$(CURDIR)/bin node --test
	cd tests/node-openapi && npm ci --no-audit --no-fund --loglevel=error && SVC_BIN_DIR=$(CURDIR)/bin node --test

## lint: gofmt, go mod tidy, go vet, staticcheck
lint: tools proto-check
	@out=$$(gofmt -l $$(git ls-files '*.go' | grep -v '^gen/' | grep -v 'db/[a-z_.]*.go$$')); if [ -n "$$out" ]; then echo "not gofmt-formatted:"; echo "$$out"; exit 1; fi
	$(GO) mod tidy -diff
	$(GO) vet ./...
	$(TOOLS)/staticcheck ./...
	cd $(EXAMPLE) && $(GO) mod tidy -diff && $(GO) vet ./... && $(TOOLS)/staticcheck ./...

# BREAKING_AGAINST is the commit the protos must stay compatible with: the
# last commit of main (the working tree is what is about to change it).
BREAKING_AGAINST ?= $(shell git rev-parse --verify -q main^{commit} || git rev-parse HEAD)

## proto-check: buf lint, and buf breaking against BREAKING_AGAINST (default main), so that a v1 proto never breaks
proto-check: tools $(DEPS)/.ok $(EXAMPLE_DEPS)/.ok
	$(TOOLS)/buf lint
	cd $(EXAMPLE) && $(abspath $(TOOLS))/buf lint
	@base=.tmp/proto-base; rm -rf $$base; mkdir -p $$base/.deps; \
	git archive $(BREAKING_AGAINST) proto buf.yaml | tar -x -C $$base; \
	ln -s $(abspath $(DEPS)) $$base/.deps/proto; \
	$(TOOLS)/buf build -o .tmp/proto-now.binpb && (cd $$base && $(abspath $(TOOLS))/buf build -o ../proto-base.binpb) && \
	echo "buf breaking against $(BREAKING_AGAINST)" && $(TOOLS)/buf breaking .tmp/proto-now.binpb --against .tmp/proto-base.binpb

## generate: regenerate protobuf and sqlc code (committed), the example
## partner plugin's too (from its own proto/ and buf.gen.yaml)
generate: tools $(DEPS)/.ok $(EXAMPLE_DEPS)/.ok
	$(TOOLS)/buf generate
	$(TOOLS)/buf generate --template buf.gen.grpc.yaml
	$(TOOLS)/sqlc generate
	cd $(EXAMPLE) && PATH=$(abspath $(TOOLS)):$$PATH $(abspath $(TOOLS))/buf generate

## check-generated: fail when regenerating would change anything
GENERATED = gen $(shell sed -n 's/^ *out: *//p' sqlc.yaml) $(EXAMPLE)/gen
check-generated:
	@sum() { find $(GENERATED) -type f 2>/dev/null | sort | xargs -r sha256sum; }; \
	before=$$(sum); $(MAKE) --no-print-directory generate; after=$$(sum); \
	if [ "$$before" != "$$after" ]; then echo "generated code is stale: run 'make generate' and commit"; \
	  diff <(echo "$$before") <(echo "$$after") || true; exit 1; fi

$(DEPS)/.ok: Makefile
	@rm -rf $(DEPS); mkdir -p $(DEPS)/google/api $(DEPS)/buf/validate
	@pv=$$($(GO) mod download -json github.com/bufbuild/protovalidate@$(PROTOVALIDATE_PROTO_VERSION) | sed -n 's/.*"Dir": "\(.*\)".*/\1/p'); \
	cp $$pv/proto/protovalidate/buf/validate/validate.proto $(DEPS)/buf/validate/
	@ga=$$($(GO) mod download -json $(GOOGLEAPIS_FROM) | sed -n 's/.*"Dir": "\(.*\)".*/\1/p'); \
	cp $$ga/third_party/googleapis/google/api/{annotations,http}.proto $(DEPS)/google/api/
	@chmod -R u+w $(DEPS); touch $@

# The example partner plugin compiles its protos against the platform's
# published ones (svc/plugin/v1/options.proto and its dependencies), which
# a partner fetches from a release; here they are copied from this checkout.
$(EXAMPLE_DEPS)/.ok: $(DEPS)/.ok proto/svc/plugin/v1/options.proto
	@rm -rf $(EXAMPLE_DEPS); mkdir -p $(EXAMPLE_DEPS)/svc/plugin/v1
	@cp proto/svc/plugin/v1/options.proto $(EXAMPLE_DEPS)/svc/plugin/v1/
	@cp -R $(DEPS)/google $(DEPS)/buf $(EXAMPLE_DEPS)/
	@chmod -R u+w $(EXAMPLE_DEPS); touch $@

## tools: build the pinned code generators and linters
tools: $(TOOLS)/.buf-$(BUF_VERSION) $(TOOLS)/.protoc-gen-go-$(PROTOC_GEN_GO_VERSION) \
       $(TOOLS)/.protoc-gen-connect-go-$(PROTOC_GEN_CONNECT_GO_VERSION) $(TOOLS)/.protoc-gen-go-grpc-$(PROTOC_GEN_GO_GRPC_VERSION) \
       $(TOOLS)/.sqlc-$(SQLC_VERSION) \
       $(TOOLS)/.staticcheck-$(STATICCHECK_VERSION) $(TOOLS)/.grpcurl-$(GRPCURL_VERSION)

$(TOOLS)/.buf-%:
	GOBIN=$(TOOLS) $(GO) install github.com/bufbuild/buf/cmd/buf@$*
	@touch $@
$(TOOLS)/.protoc-gen-go-%:
	GOBIN=$(TOOLS) $(GO) install google.golang.org/protobuf/cmd/protoc-gen-go@$*
	@touch $@
$(TOOLS)/.protoc-gen-connect-go-%:
	GOBIN=$(TOOLS) $(GO) install connectrpc.com/connect/cmd/protoc-gen-connect-go@$*
	@touch $@
$(TOOLS)/.protoc-gen-go-grpc-%:
	GOBIN=$(TOOLS) $(GO) install google.golang.org/grpc/cmd/protoc-gen-go-grpc@$*
	@touch $@
$(TOOLS)/.sqlc-%:
	GOBIN=$(TOOLS) $(GO) install github.com/sqlc-dev/sqlc/cmd/sqlc@$*
	@touch $@
$(TOOLS)/.staticcheck-%:
	GOBIN=$(TOOLS) $(GO) install honnef.co/go/tools/cmd/staticcheck@$*
	@touch $@
$(TOOLS)/.grpcurl-%:
	GOBIN=$(TOOLS) $(GO) install github.com/fullstorydev/grpcurl/cmd/grpcurl@$*
	@touch $@

# apt_install: install Debian packages $(2) unless the shell test $(1) passes
apt_install = if $(1); then :; else echo "installing $(2) (apt-get install -y $(2))"; \
	  SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); \
	  $$SUDO apt-get update -q && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q $(2); fi

## postgres: install the PostgreSQL server from Debian's packages if missing
postgres:
	@$(call apt_install,command -v initdb >/dev/null && command -v postgres >/dev/null || ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1,postgresql)

## wrk: install Debian's wrk for make bench if missing (the outside client the
## load generator is checked against)
wrk:
	@$(call apt_install,command -v wrk >/dev/null,wrk)

## browser: install Debian's Chromium for the browser tests if missing (no
## tool downloads a browser of its own)
browser:
	@$(call apt_install,command -v chromium >/dev/null || [ -n "$${SVC_CHROMIUM:-}" ],chromium)

## runtimes: install Debian's python3 and nodejs if missing: the e2e test
## runs the webhook receivers of docs/examples/webhooks with them (standard
## libraries only)
runtimes:
	@$(call apt_install,command -v python3 >/dev/null,python3)
	@$(call apt_install,command -v node >/dev/null,nodejs)

## soak: the steady-load test for ten minutes (make test runs it for 40 s);
## prints the gateway's RSS, goroutines and open files per third of the run
SOAK ?= 10m
soak: postgres build
	@rm -rf $(CURDIR)/.tmp/pgsoak; mkdir -p $(CURDIR)/.tmp
	@url=$$($(GO) run ./internal/cmd/pgtestd start --dir $(CURDIR)/.tmp/pgsoak); status=0; \
	SVC_SOAK=$(SOAK) SVC_TEST_DATABASE_URL="$$url" SVC_BIN_DIR=$(CURDIR)/bin $(GO) test -count=1 -timeout 30m -v \
	  -run 'TestASteadyLoadKeepsMemoryGoroutinesAndFilesFlat' ./e2e/ | grep -E 'FIGURES|^(---|ok|FAIL)' || status=$$?; \
	$(GO) run ./internal/cmd/pgtestd stop --dir $(CURDIR)/.tmp/pgsoak || true; exit $$status

## bench: each target of shared/PERFORMANCE.md against its reference in the same
## run, then the curves (read and write at 1..128 connections beside pgbench),
## about 6 minutes -> bench/RESULTS.md and bench/curves.svg. Medians on a busy
## machine: make bench BENCH_FLAGS='-rounds 3 -d 5s'; without the curves:
## make bench BENCH_FLAGS=-curves=false
BENCH_FLAGS ?=
bench: postgres wrk build
	$(GO) run ./bench/cmd/benchreport $(BENCH_FLAGS)

## profile: the Graph read under make bench's load with CPU and allocation profiles of the gateway and the book plugin, into .tmp/profile; its report there, with the CPU per stage (bench/RESULTS.md is left alone), then the top of each CPU profile
profile: postgres build
	$(GO) run ./bench/cmd/benchreport -skip-startup -skip-loadgen-check -only read -profile .tmp/profile -o .tmp/profile/RESULTS.md -work .tmp/profile-work $(BENCH_FLAGS)
	@for f in .tmp/profile/*.cpu.pprof; do echo "== $$f (go tool pprof -top $$f)"; $(GO) tool pprof -top -nodecount=25 $$f 2>/dev/null | sed -n 1,32p; done

## bench-go: Go benchmarks (plugin hop, fast-lane call, book's list read, webhook delivery, token exchange)
bench-go: build
	$(GO) test -run '^$$' -bench . -benchmem ./gateway/internal/host/ ./sdk/ ./plugins/book/ ./gateway/internal/webhook/ ./gateway/internal/oauth/ ./bench/

clean:
	rm -rf bin .tmp .deps
