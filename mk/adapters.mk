# The five model adapters (plugins/moshi, minicpm-o, flm-audio, freeze-omni, voila), in
# Python. `make test` runs their tests against numpy stand-ins of the model libraries
# (plugins/_standins) in the shared .venv. `make test-adapters` also runs the moshi
# adapter on the real moshi library (PyPI moshi + torch) with a tiny random model, in a
# separate environment, .venv-adapters, plus the minicpm-o and flm-audio loaders on real
# transformers and the torch sides of the voila and freeze-omni adapters against torch
# stand-ins of their models (132 tests, 45-100 s on the shared 2-core machine, by its load). torch from PyPI
# pulls the CUDA wheels, about 4.3 GB downloaded and 7.1 GB installed, so it stays out of
# the default path.

ADAPTER_DIRS := plugins/moshi plugins/minicpm-o plugins/flm-audio plugins/freeze-omni plugins/voila
# plugins/_common: the code the five share (SDK binding, smoke driver, config and factory
# helpers, test helpers), with its own tests.
PYTEST_PATHS += $(wildcard $(addsuffix /tests,$(ADAPTER_DIRS))) plugins/_common/tests

ADAPTERS_VENV := .venv-adapters

.PHONY: test-adapters deps-adapters

deps-adapters: $(ADAPTERS_VENV)/.installed

# transformers and accelerate (the versions plugins/minicpm-o pins) for the minicpm-o loader test.
$(ADAPTERS_VENV)/.installed: plugins/moshi/requirements.txt sdk/python/pyproject.toml mk/adapters.mk
	$(PYTHON) -m venv $(ADAPTERS_VENV)
	@echo '*' > $(ADAPTERS_VENV)/.gitignore
	cd plugins/moshi && ../../$(ADAPTERS_VENV)/bin/pip install -q --disable-pip-version-check -r requirements.txt \
		pytest transformers==4.51.0 accelerate==1.10.1
	@touch $@

test-adapters: deps-adapters
	$(ADAPTERS_VENV)/bin/python -m pytest -q -p no:cacheprovider $(wildcard $(addsuffix /tests,$(ADAPTER_DIRS))) plugins/_common/tests \
		$(wildcard $(addsuffix /tests_real,$(ADAPTER_DIRS)))
