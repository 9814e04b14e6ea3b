# Cairn's build, run, test, bench and lint entry points. `make run` and
# `make test` are all a fresh machine needs.

GO        ?= go
BIN       := bin/cairn
UNIT_PKGS := ./config/... ./glob/... ./hll/... ./sockio/... ./storage/... ./pubsub/... ./notify/... ./replication/... ./server/... ./commands/... ./scripting/... ./cmd/... ./examples/...

.PHONY: all build run primary replica test test-unit test-e2e test-e2e-race deps bench lint clean

all: build

build:
	$(GO) build -o $(BIN) ./cmd/cairn

run: build
	./$(BIN)

# primary and replica run the README's walkthrough pair in two terminals: a
# primary on 6666 and its replica on 6667, both publishing keyspace events,
# data under ./cairn-demo.
primary: build
	./$(BIN) --port 6666 --dir ./cairn-demo/primary --notify-keyspace-events KEA

replica: build
	./$(BIN) --port 6667 --dir ./cairn-demo/replica --notify-keyspace-events KEA --slaveof "127.0.0.1 6666"

# deps installs what the tests need and the machine lacks: Debian's
# redis-server (the reference of the differential tests), redis-tools
# (redis-cli, redis-benchmark) and redis-sentinel (TestSentinelFailover).
# A failed install fails the run.
deps:
	@if ! command -v redis-server >/dev/null || ! command -v redis-benchmark >/dev/null || ! command -v redis-sentinel >/dev/null; then \
		echo "installing redis-server, redis-tools and redis-sentinel"; \
		apt-get update && apt-get install -y redis-server redis-tools redis-sentinel; \
	fi

# test runs the unit tests, then the two end-to-end passes side by side:
# each keeps about three quarters of a core busy (its servers and clients
# wait on each other the rest of the time), so on two cores they take
# little more than the longer one alone. Each pass has its own range of
# server ports (CAIRN_TEST_PORTS, tests/harness_test.go); make prints a
# pass's output when it ends.
test: deps build
	$(MAKE) --no-print-directory test-unit
	$(MAKE) --no-print-directory -j2 --output-sync=target test-e2e test-e2e-race

test-unit:
	$(GO) test -race -count=1 -timeout 300s $(UNIT_PKGS)

test-e2e:
	CAIRN_BIN=$(CURDIR)/$(BIN) CAIRN_TEST_PORTS=20000-25999 $(GO) test -count=1 -timeout 540s ./tests/...

# test-e2e-race runs the end-to-end tests again against a server built with
# the race detector: a race stops that server (the test then fails) and its
# report is printed here. To keep `make test` under ten minutes on two
# cores, the differentials send fewer random commands than in test-e2e
# (strings 6,000 of 40,000, events 1,000 of 3,000, large edits 300 of 600;
# TestPubSubNoLeakAfterManyCycles 2,000 connections of 10,000)
# and TestSentinelFailover, 20 s of Sentinel's timers whose server paths
# TestRoleChangeBesideKeys and transactions.txt also run, is left to
# test-e2e, as are the differentials' script streams (the TestScript*
# tests run the scripting paths under the race detector),
# TestHugeValues, 28 s under the race detector (its path of a batch
# Pebble applies as a memtable of its own runs under the race detector in
# storage's unit tests, TestApplyReplicatedKeepsTheBytes), and the three
# kill -9 scenarios TestLargeValueFaultsKill9,
# TestReplicationPrimaryRestart and TestFunctionsSurviveRestartAndKill9,
# 14, 17 and 6 s of restarts: what a killed
# server did concurrently is not checked, and the restarted one's paths
# (recovery, resuming replication) run under the race detector in
# TestListSurvivesKill9, TestHashSurvivesRestartAndKill9 and
# TestReplicationReplicaKilledResumesPartially. So is hll.txt, whose
# PFSELFTEST takes 5 s under the race detector for ten million additions
# in one goroutine (the differentials send PF commands there).
RACE_LOGS := $(CURDIR)/bin/race-logs
test-e2e-race:
	$(GO) build -race -o bin/cairn-race ./cmd/cairn
	rm -rf $(RACE_LOGS) && mkdir -p $(RACE_LOGS)
	@status=0; GORACE="halt_on_error=1 log_path=$(RACE_LOGS)/cairn" CAIRN_BIN=$(CURDIR)/bin/cairn-race CAIRN_TEST_PORTS=26000-31999 \
		CAIRN_DIFF_N=6000 CAIRN_EVENTS_N=1000 CAIRN_LARGE_N=300 CAIRN_PUBSUB_CYCLES=2000 \
		$(GO) test -count=1 -timeout 540s -skip '^TestSentinelFailover$$|^TestHugeValues$$|^TestLargeValueFaultsKill9$$|^TestReplicationPrimaryRestart$$|^TestFunctionsSurviveRestartAndKill9$$|^TestDifferential(StringsAndKeys|Events)$$/^script$$|^TestScripts$$/^hll$$' ./tests/... || status=$$?; \
	if ls $(RACE_LOGS)/cairn.* >/dev/null 2>&1; then echo "data races in bin/cairn-race:"; cat $(RACE_LOGS)/cairn.*; exit 1; fi; \
	exit $$status

# bench runs every benchmark beside redis-server and regenerates
# docs/BENCHMARKS.md from their tables.
bench: deps build
	./scripts/benchmarks.sh

# staticcheck's module version (it calls itself 2026.2.2): the module proxy
# serves the v0 tags, not the year-numbered ones.
STATICCHECK_VERSION := 0.8.2
STATICCHECK := $(shell $(GO) env GOPATH)/bin/staticcheck

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	@if ! $(STATICCHECK) -version 2>/dev/null | grep -qF "($(STATICCHECK_VERSION))"; then \
		$(GO) install honnef.co/go/tools/cmd/staticcheck@v$(STATICCHECK_VERSION); fi
	$(STATICCHECK) ./...

clean:
	rm -rf bin cairn-demo
