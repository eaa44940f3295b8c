# The Python plugin SDK (sdk/python) and its example (examples/plugin-python).
# deps-py creates .venv at the repository root with the SDK installed editable from PyPI;
# it is quick when nothing changed (scripts/setup-python.sh keeps a stamp).

DEPS         += deps-py
PYTEST_PATHS += sdk/python/tests examples/plugin-python/tests

PY_PROTO_OUT := sdk/python/src/duplexmpe_plugin/_proto

.PHONY: deps-py proto-python

deps-py:
	@PYTHON=$(PYTHON) scripts/setup-python.sh

# Regenerates the committed Python stubs with the grpcio-tools pinned in the SDK's
# "proto" extra. grpcio-tools writes absolute imports (from duplexmpe.v1 import ...);
# they are rewritten to live under duplexmpe_plugin._proto.
proto-python: deps-py
	$(VENV)/bin/python -m pip install -q --disable-pip-version-check -e 'sdk/python[test,proto]'
	rm -rf $(PY_PROTO_OUT)/duplexmpe
	$(VENV)/bin/python -m grpc_tools.protoc -I sdk/proto \
		--python_out=$(PY_PROTO_OUT) --pyi_out=$(PY_PROTO_OUT) --grpc_python_out=$(PY_PROTO_OUT) \
		sdk/proto/duplexmpe/v1/*.proto
	$(VENV)/bin/python -m grpc_tools.protoc -I $(PY_PROTO_OUT) \
		--python_out=$(PY_PROTO_OUT) --pyi_out=$(PY_PROTO_OUT) --grpc_python_out=$(PY_PROTO_OUT) \
		$(PY_PROTO_OUT)/goplugin/goplugin.proto $(PY_PROTO_OUT)/goplugin/health.proto
	sed -i -E 's/^from (duplexmpe\.v1|goplugin) import/from duplexmpe_plugin._proto.\1 import/' \
		$$(find $(PY_PROTO_OUT) -name '*_pb2*.py' -o -name '*_pb2.pyi')
	touch $(PY_PROTO_OUT)/duplexmpe/__init__.py $(PY_PROTO_OUT)/duplexmpe/v1/__init__.py \
		$(PY_PROTO_OUT)/goplugin/__init__.py $(PY_PROTO_OUT)/__init__.py
