# Paper scale (docs/scale.md). `make bench-scale` generates the paper's 2,000-pair script
# set, synthesises the conversations of the largest slice with flite, plays the silent
# baseline over growing slices (each `duplexmpe run --no-score` and `duplexmpe score` a
# process of its own) and reports per conversation the disk, the host CPU (getrusage)
# and the peak RSS; it fails when the peak memory grows by more than 10% from the
# smallest slice to the largest. It is not part of `make test` (about an hour here).
# SLICES, CONCURRENCY and SYNTH_ALL=1 (synthesise all 4,000 conversations) change it.
#
# `make bench-compact RUN=DIR RUN_FILE=FILE.hcl` measures what the 16-bit FLAC store
# changes on a run written with float32 audio (audible.wav): the episodes found offline
# on each against those recorded at play time, and both copies scored from nothing.

SLICES      ?= 100,300,1000
CONCURRENCY ?= 2
BENCH_SCALE ?= build/bench-scale

.PHONY: bench-scale bench-compact

bench-scale: build
	$(GO) run ./tools/benchscale -out $(BENCH_SCALE) -bin $(BIN) -slices $(SLICES) \
		-concurrency $(CONCURRENCY) $(if $(SYNTH_ALL),-synth-all)

bench-compact: build
	@test -n "$(RUN)" -a -n "$(RUN_FILE)" || { echo "usage: make bench-compact RUN=RUN_DIR RUN_FILE=FILE.hcl"; exit 2; }
	$(GO) run ./tools/benchscale -compact $(RUN) -run-file $(RUN_FILE) -out $(BENCH_SCALE)/compact -bin $(BIN)
