# ferry — make help lists the targets.
SHELL := /bin/bash
.DEFAULT_GOAL := help

GO        ?= go
NPM       ?= npm
BIN       := bin
BUILD     := build
NODE_BIN  := infra/node_modules/.bin
# The build's version and commit, stamped into both binaries (internal/buildinfo).
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo unknown)
COMMIT    ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
BUILDINFO := -X github.com/ferryhq/ferry/internal/buildinfo.version=$(VERSION) -X github.com/ferryhq/ferry/internal/buildinfo.commit=$(COMMIT)
export JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION := 20

# The thin binaries: they must never link the CDK.
THIN_PKGS := ./lambdas/... ./client/...
# The pure packages: the state document, health, the state machine's
# table and the names of environments need no AWS service client.
PURE_PKGS := ./internal/execution ./internal/health ./internal/target ./statemachine/shape

.PHONY: help
help: ## List the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-z-]+:.*## / {printf "  %-12s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: build
build: ## Build bin/ferry (the CLI) and build/lambda/bootstrap (the Lambda, linux/arm64)
	$(GO) build -trimpath -ldflags='$(BUILDINFO)' -o $(BIN)/ferry ./client
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 $(GO) build -trimpath -tags lambda.norpc \
		-ldflags='-s -w $(BUILDINFO)' -o $(BUILD)/lambda/bootstrap ./lambdas

.PHONY: install
install: ## Install ferry (the CLI) into GOBIN (else GOPATH/bin), stamped as make build stamps it
	@bin="$$($(GO) env GOBIN)"; bin="$${bin:-$$($(GO) env GOPATH)/bin}"; \
		$(GO) build -trimpath -ldflags='$(BUILDINFO)' -o "$$bin/ferry" ./client && echo "installed $$bin/ferry" && \
		case ":$$PATH:" in *":$$bin:"*) ;; *) echo "$$bin is not on your PATH: export PATH=\"$$bin:\$$PATH\"";; esac

.PHONY: tools
tools: $(NODE_BIN)/.installed ## Install the pinned npm tools (CDK CLI, validators) with npm ci

$(NODE_BIN)/.installed: infra/package.json infra/package-lock.json
	$(NPM) ci --prefix infra --no-audit --no-fund --loglevel=error
	@touch $@

.PHONY: test
test: tools lint thin fuzz ## Run every test (what CI runs)
	$(GO) test -count=1 ./...

.PHONY: iam
iam: tools ## Evaluate the synthesized IAM policies with an independent engine: every call allowed, every attack denied (also part of test)
	set -o pipefail; $(GO) test -count=1 -v -run '^(TestIAM|TestSecurityPageListsEveryAttack)$$' ./infra/iam | grep -E '^(=== RUN|--- |ok|FAIL|PASS)|iam: '

# The fuzz targets CI runs, each for FUZZTIME executions: the release
# decoder, identity proofs' verification and the client's reading of
# execution history. A count, not a
# duration: Go 1.26's fuzz coordinator can fail a duration-bounded run
# with "context deadline exceeded" and no crasher when a worker is still
# busy as the deadline passes (go.dev/issue/75804, fixed in Go 1.27); a
# count has no deadline to race.
FUZZTIME ?= 100000x

.PHONY: fuzz
fuzz: ## Fuzz the release decoder, identity proofs' verification and the client's history reader (FUZZTIME each, default 100000x)
	$(GO) test -run='^$$' -fuzz='^FuzzDecodeValidate$$' -fuzztime=$(FUZZTIME) ./internal/release
	$(GO) test -run='^$$' -fuzz='^FuzzVerify$$' -fuzztime=$(FUZZTIME) ./internal/identity
	$(GO) test -run='^$$' -fuzz='^FuzzFollowHistory$$' -fuzztime=$(FUZZTIME) ./client

.PHONY: reliability
reliability: ## Run the full fault-injection matrix (every call index x every fault kind) of a deploy, of a destroy and of a promotion's own tasks; fails on a violation
	$(GO) run ./internal/proof/reliability/cmd
	$(GO) run ./internal/proof/reliability/cmd -destroy
	$(GO) run ./internal/proof/reliability/cmd -promotion

# How many seeds make chaos runs, and on how many workers (a run mostly
# waits on its region's in-process S3 over loopback HTTP, so twice the
# cores keeps them busy).
CHAOS_SEEDS   ?= 10000
CHAOS_WORKERS ?= 4

.PHONY: chaos
chaos: ## Run CHAOS_SEEDS chaos scenarios (a world that fights back, judged from outside ferry); fails on a violation, printing each seed's shrunk replay command
	$(GO) run ./internal/proof/chaos/cmd -n $(CHAOS_SEEDS) -workers $(CHAOS_WORKERS)

# The mutation run's scope: the safety-critical code, each file set
# (#FUNCS: only those functions) judged by the tests that own it (-short:
# the long reliability samples are not needed to judge one mutant; a
# package's unrelated tests are left out with @RUN; of those, each mutant runs only the tests whose
# coverage reaches it, measured once per target). A target's boolean mutants are built once, into
# one test binary (a mutant schema), the others one binary each. Survivors fail the run unless
# listed, with the reason, in MUTATE_EQUIVALENT.
MUTATE_EQUIVALENT ?= testdata/mutation/equivalent.txt
MUTATE_TIMEOUT    ?= 3m
MUTATE_WORKERS    ?= 2
MUTATE_TARGETS    ?= \
	'internal/health/*.go=./internal/health' \
	'internal/capacity/*.go=./internal/capacity' \
	'internal/fleet/*.go=./internal/fleet' \
	'internal/store/lock/*.go=./internal/store/lock' \
	'internal/store/halt/*.go=./internal/store/halt' \
	'internal/identity/*.go=./internal/identity' \
	'internal/release/validate*.go=./internal/release' \
	'internal/deployer/alarms.go,internal/deployer/errorrate.go,internal/deployer/check_healthy.go,internal/deployer/cleanup_success.go,internal/deployer/cleanup_failure.go,internal/deployer/rollback.go\#$(MUTATE_DEPLOYER_FUNCS)=./internal/deployer' \
	'internal/pipeline/gate.go=./internal/pipeline' \
	'internal/deployer/gate.go,internal/deployer/request_approval.go,internal/deployer/verify_approval.go\#$(MUTATE_GATE_FUNCS)=./internal/deployer@^Test(Gate|Approval|RequestApproval|MayApprove|VerifyApproval|VerifiedApproval)'
# The deployer's clean-up, rollback and checks: the gates before the point
# of no return, the rollback, the re-check and the bounds.
MUTATE_DEPLOYER_FUNCS := checkAlarms|checkGates|checkErrorRates|checkTerminations|Deployer.(checkTimeout|checkHalt|gate|recheck|belowTarget|rollBack|restore|awaitRestored|cleanUpFailure|madeInAWS)|servingIn|notReady|notRestored
# The promotion's gates: a stage held or opened, its wait rounded up,
# and an approval stored, verified, recorded and counted.
MUTATE_GATE_FUNCS := Deployer.(checkGate|endIfHalted|promotionHalt|gateReadings|targetReading|currentSession|approvalReading|checkApproval|verifyApproval|recordApproval|givenPromotion)|recheck|waitSeconds|storedApproval|countVerified|mayApprove|awaitsApproval|servesStill|servingGaps|briefly

.PHONY: mutate
mutate: ## Mutation testing of the safety-critical packages: prints mutation: K/N killed (P%); fails on a survivor not listed equivalent
	$(GO) run ./internal/proof/mutation/cmd -short -workers $(MUTATE_WORKERS) -timeout $(MUTATE_TIMEOUT) \
		-equivalent $(MUTATE_EQUIVALENT) $(foreach t,$(MUTATE_TARGETS),-target $(t))

.PHONY: conformance
conformance: ## Run the conformance suite: the real deployer and state machine against moto_server over HTTP (skipped without moto)
	$(GO) run ./internal/proof/conformance/cmd

.PHONY: lint
lint: ## gofmt, go vet, no dead code (deadcode), no function over 80 lines and at most 2% above complexity 15 (codestats)
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './infra/node_modules/*')); \
		if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	@$(GO) run ./internal/proof/codestats/cmd -over 15 -lines 80 -percent 2 -check -summary
	@$(MAKE) --no-print-directory deadcode

# deadcode is pinned by go.mod's tool directive (go tool deadcode).
.PHONY: deadcode
deadcode: ## Fail on a function no main or test reaches (golang.org/x/tools/cmd/deadcode -test)
	@out=$$($(GO) tool deadcode -test ./...) || exit 1; \
		if [ -n "$$out" ]; then echo "$$out"; echo "deadcode: the functions above are reached by no main and no test: remove them"; exit 1; fi; \
		echo "deadcode: ok"

.PHONY: codestats
codestats: ## List every function above complexity 15 or over 80 lines
	$(GO) run ./internal/proof/codestats/cmd -over 15 -lines 80

# What the Lambda must never link, by folder: the CDK and jsii, the
# embedded region and simulation (internal/local/), the proof tools
# (internal/proof/), the client's own packages (client/) and the CDK app
# (infra/). A package added under one of these folders is covered the day
# it lands.
LAMBDA_FORBIDDEN := aws-cdk-go|jsii-runtime-go|constructs-go|gofakes3|ferryhq/ferry/(internal/local|internal/proof|client|infra)($$|/)

.PHONY: thin
thin: ## Check that the Lambda links neither the CDK nor the simulation, and the CLI not the CDK
	@if $(GO) list -deps ./lambdas/... | grep -E '$(LAMBDA_FORBIDDEN)'; then \
		echo "thin: the Lambda links the packages above"; exit 1; fi
	@if $(GO) list -deps $(THIN_PKGS) | grep -E 'aws-cdk-go|jsii-runtime-go|constructs-go'; then \
		echo "thin: the CLI links the CDK"; exit 1; fi
	@if $(GO) list -deps $(PURE_PKGS) | grep -E 'aws-sdk-go-v2/service/'; then \
		echo "thin: a pure package links an AWS service client"; exit 1; fi; echo "thin: ok"

.PHONY: synth
synth: tools build ## Regenerate the state machine definition and bootstrap template; synthesize the CDK app into build/cdk.out
	$(GO) run ./statemachine/gen
	$(GO) run ./infra/gen
	CDK_OUTDIR=$(BUILD)/cdk.out $(GO) run ./infra
	node infra/cfn-validate.mjs $(BUILD)/cdk.out/ferry-deployer.template.json $(BUILD)/cdk.out/ferry-bootstrap.template.json

.PHONY: demo
demo: build ## Run the demo on the local region
	./client/demo.sh

.PHONY: bench
bench: build ## Run the deploy benchmark: write build/bench.json and the table of client/help/performance.md
	@mkdir -p $(BUILD)
	$(GO) test ./client -run '^TestFollowCost$$' -count=1 -args -follow-cost $(abspath $(BUILD))/follow.json
	$(GO) run ./internal/proof/bench/cmd -out $(BUILD)/bench.json -follow $(BUILD)/follow.json \
		-lambda $(BUILD)/lambda/bootstrap -ferry $(BIN)/ferry -page

.PHONY: clean
clean: ## Remove build outputs
	rm -rf $(BIN) $(BUILD)
