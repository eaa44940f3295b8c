# Datasets (core/dataset, core/construct, plugins/flite). `make dataset` builds the
# shipped scenarios of bench.hcl with flite into build/datasets/shipped and validates the
# result; `make test` runs the same check (a rebuild reuses every clip, so it is quick
# after the first time).

TEST_EXTRA += dataset-check

.PHONY: dataset dataset-check

dataset: deps build dataset-check

dataset-check:
	$(BIN)/duplexmpe build --dataset shipped bench.hcl
	$(BIN)/duplexmpe dataset validate build/datasets/shipped
