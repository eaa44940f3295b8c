# Datasets (core/dataset, core/construct, plugins/flite). `make dataset` checks the
# benchmark release and builds what bench.hcl plays; `make test` runs the same checks:
# - the 12 demonstration pairs (examples/scenarios, the harness's own test material)
#   built by examples/runs/shipped.hcl into build/datasets/shipped and validated;
# - Duplex-MPE open v1 (datasets/open-v1): the splits and MANIFEST.json are what the
#   authoring files compile to, every construction goal of `dataset lint` is met, the
#   blind validation scores (`dataset review`), and the dev split, built with flite
#   (examples/runs/shipped.hcl: seconds, where bench.hcl's neural voices take minutes),
#   verifies against the manifest.
# - Duplex-MPE open v2 (datasets/open-v2): the same checks, and the shortcut audit (`dataset
#   audit`, with the shipped lexical judge) passes every threshold on its test split.

TEST_EXTRA += dataset-check

OPEN_V1 := datasets/open-v1
OPEN_V2 := datasets/open-v2

.PHONY: dataset dataset-check dataset-compile

dataset: deps build dataset-check

dataset-check:
	$(BIN)/duplexmpe build --dataset shipped examples/runs/shipped.hcl
	$(BIN)/duplexmpe dataset validate build/datasets/shipped
	$(BIN)/duplexmpe dataset compile --check $(OPEN_V1)/authoring/release.json
	$(BIN)/duplexmpe dataset lint --grid $(OPEN_V1)/authoring/grid.json $(OPEN_V1)
	$(BIN)/duplexmpe dataset review $(OPEN_V1) $(OPEN_V1)/validation > /dev/null
	$(BIN)/duplexmpe dataset review $(OPEN_V1) $(OPEN_V1)/validation/recheck > /dev/null
	$(BIN)/duplexmpe build --dataset open_v1_dev_flite examples/runs/shipped.hcl
	$(BIN)/duplexmpe dataset verify build/datasets/open-v1-dev-flite --manifest $(OPEN_V1)/MANIFEST.json
	$(BIN)/duplexmpe dataset compile --check $(OPEN_V2)/authoring/release.json
	$(BIN)/duplexmpe dataset lint --grid $(OPEN_V2)/authoring/grid.json $(OPEN_V2)
	$(BIN)/duplexmpe dataset audit $(OPEN_V2)
	$(BIN)/duplexmpe dataset review $(OPEN_V2) $(OPEN_V2)/validation > /dev/null
	$(BIN)/duplexmpe dataset review $(OPEN_V2) $(OPEN_V2)/validation/recheck > /dev/null
	$(BIN)/duplexmpe build --dataset open_v2_dev_flite examples/runs/shipped.hcl
	$(BIN)/duplexmpe dataset verify build/datasets/open-v2-dev-flite --manifest $(OPEN_V2)/MANIFEST.json

# After editing datasets/open-v*/authoring: write the splits and the manifests again.
dataset-compile: build
	$(BIN)/duplexmpe dataset compile $(OPEN_V1)/authoring/release.json
	$(BIN)/duplexmpe dataset compile $(OPEN_V2)/authoring/release.json
