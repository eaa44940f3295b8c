"""The freeze-omni upstream tier: Freeze-Omni's own code (a checkout named by
DUPLEXMPE_UPSTREAM_FREEZE_OMNI) with a tiny random checkpoint on CPU, in the environment
plugins/freeze-omni/requirements.txt installs (.venv-freeze-omni; `make test-adapters`
builds it, with Flask and socket.io for importing bin/server.py). Every test skips,
saying so, without the variable."""

import os
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
PLUGIN_DIR = HERE.parent
for p in (HERE, PLUGIN_DIR, PLUGIN_DIR.parent / "_common", PLUGIN_DIR.parent / "_common" / "tests"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

ENV = "DUPLEXMPE_UPSTREAM_FREEZE_OMNI"


@pytest.fixture(scope="session")
def upstream() -> Path:
    value = os.environ.get(ENV, "")
    if not value:
        pytest.skip(f"{ENV} is not set: point it at a checkout of github.com/VITA-MLLM/Freeze-Omni (commit 3e17af4) "
                    "to run Freeze-Omni's own code here (.ci/run sets it to its snapshot of the checkout)")
    path = Path(value).resolve()
    if not (path / "models" / "pipeline.py").is_file():
        pytest.fail(f"{ENV}={value} is not a Freeze-Omni checkout (no models/pipeline.py)")
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))
    return path


@pytest.fixture(scope="session")
def tiny(upstream, tmp_path_factory) -> dict:
    """The tiny checkpoint and the adapter config that loads it through the CPU switch."""
    import tiny_freezeomni

    model_path, llm_path = tiny_freezeomni.build(tmp_path_factory.mktemp("tiny-freeze-omni"), upstream)
    return {"factory": "tiny_freezeomni:load", "model_path": str(model_path), "llm_path": str(llm_path),
            "freeze_omni_dir": str(upstream)}
