"""The voila upstream tier: Voila's own code (a checkout named by DUPLEXMPE_UPSTREAM_VOILA)
with tiny random models on CPU, in the environment plugins/voila/requirements.txt installs
(.venv-voila; `make test-adapters` builds it). Every test skips, saying so, without the
variable."""

import os
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
PLUGIN_DIR = HERE.parent
for p in (HERE, PLUGIN_DIR, PLUGIN_DIR.parent / "_common", PLUGIN_DIR.parent / "_common" / "tests"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

ENV = "DUPLEXMPE_UPSTREAM_VOILA"


def upstream_dir() -> Path:
    value = os.environ.get(ENV, "")
    if not value:
        pytest.skip(f"{ENV} is not set: point it at a checkout of github.com/maitrix-org/Voila (commit 6ba63bf) "
                    "to run Voila's own code here (.ci/run sets it to its snapshot of the checkout)")
    path = Path(value).resolve()
    if not (path / "model.py").is_file():
        pytest.fail(f"{ENV}={value} is not a Voila checkout (no model.py)")
    return path


@pytest.fixture(scope="session")
def upstream() -> Path:
    return upstream_dir()


def _tiny(upstream: Path, root: Path, **build) -> dict:
    """The tiny model's checkpoints and the adapter config that loads them on CPU, with a
    shipped flite clip as the reference voice."""
    import shipped
    import tiny_voila

    config = tiny_voila.build(root, upstream, **build)
    voice = root / "voice.wav"
    voice.write_bytes(shipped.first_clip())
    config.update(device="cpu", dtype="float32", attn_implementation="sdpa", ref_audio=str(voice))
    return config


@pytest.fixture(scope="session")
def tiny(upstream, tmp_path_factory) -> dict:
    """The tiny model of the run_generate equivalence test: it takes audio and text steps."""
    return _tiny(upstream, tmp_path_factory.mktemp("tiny-voila"))


@pytest.fixture(scope="session")
def tiny_listening(upstream, tmp_path_factory) -> dict:
    """The tiny model of the shipped conversation: its text head biased to audio steps
    (tiny_voila.LISTENING_AUDIO_BIAS), about one model step per 40 ms frame."""
    import tiny_voila

    return _tiny(upstream, tmp_path_factory.mktemp("tiny-voila-listening"),
                 audio_bias=tiny_voila.LISTENING_AUDIO_BIAS)
