# The reliability suite (tests/reliability, docs/reliability.md): duplexmpe SIGKILLed at
# seeded random points and resumed, compared with an uninterrupted run (0 lost, 0 differ,
# 0 orphan processes, 0 temporary files); the fault plugins (panic, crash, hang, wedge,
# hung start and close, garbage and NaN audio, log floods, slow starts, Python sys.exit)
# in one evaluation; the damaged-input catalogue through the CLI; issue 24's hostile runs
# (text flood, setsid child, a model failing every conversation, two writers and a stale
# lock, a foreign out folder, symlinks, missing folders, viewer debris: TestHostileRuns).
# `go test ./...` skips it.
# RELIABILITY_TRIALS and RELIABILITY_SEED choose the kill trials; the figures are written
# to build/reliability.jsonl.

RELIABILITY_TRIALS ?= 10
RELIABILITY_SEED   ?= 1

.PHONY: test-reliability

test-reliability: deps build
	@mkdir -p build && rm -f build/reliability.jsonl
	DUPLEXMPE_RELIABILITY=1 DUPLEXMPE_RELIABILITY_TRIALS=$(RELIABILITY_TRIALS) DUPLEXMPE_RELIABILITY_SEED=$(RELIABILITY_SEED) \
		DUPLEXMPE_RELIABILITY_REPORT=$(CURDIR)/build/reliability.jsonl \
		$(GO) test -count=1 -timeout 60m ./tests/reliability/
	@cat build/reliability.jsonl

# The full timing sweeps of issue 24 (core/session/edge_test.go; the default tests run a
# short version of each): faint output after an answer, alone and ended by a click, with
# every sweep frame size and rate; clicks of 32-96 ms every second at every 5 ms phase of
# 1 s and 80 ms frames, to the 60 s cap. Figures in docs/vad.md (timing edge cases).
.PHONY: test-timing-sweep
test-timing-sweep:
	@mkdir -p build
	@DUPLEXMPE_FULL_SWEEP=1 $(GO) test -count=1 -timeout 30m -v -run '^(TestFaintSweep|TestClickSweep)$$' ./core/session/ \
		>build/timing-sweep.log 2>&1; s=$$?; grep -E 'sessions|edge_test|^(ok|FAIL)' build/timing-sweep.log; exit $$s

test-reliability: test-timing-sweep
