# The reference cascade (plugins/cascade). `make measure-cascade` measures its CPU per
# conversation on the whole shipped dataset (24 conversations through the real plugin
# process and scheduler; CPU time, not wall time) and what its cost model's figures rest
# on: the figures of plugins/cascade/README.md. `make bench` plays 6 of them.

.PHONY: measure-cascade

measure-cascade: deps
	DUPLEXMPE_MEASURE_CASCADE=1 $(GO) test ./plugins/cascade -run '^$$' -bench 'ShippedConversationCPU|ComputeCost' -benchtime 1x -v
