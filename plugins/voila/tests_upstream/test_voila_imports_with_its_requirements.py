"""Voila's own modules import with exactly what plugins/voila/requirements.txt installs.

pip resolves the requirements as the header's install line says (a dry run against PyPI:
names, versions and every dependency); then a fresh interpreter imports spkr, model,
tokenize_func and voila_tokenizer from the checkout, refusing any module that belongs to
an installed distribution outside that set. Dropping matplotlib from requirements.txt
fails here: pyannote.audio 3.3.2 imports it, and none of the versions pip resolves for
it require it any more. Run by `make test-adapters` (it needs PyPI).
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest

import pip_resolve

PLUGIN_DIR = Path(__file__).resolve().parents[1]

VOILA_MODULES = ("spkr", "model", "tokenize_func", "voila_tokenizer", "audio_transformer")

# Runs in a fresh interpreter: a meta-path finder that refuses to import the top-level
# modules of installed distributions not in ALLOWED (the standard library and the
# checkout's own files belong to none and pass).
GUARD = r'''
import importlib.abc, importlib.machinery, importlib.metadata, json, re, sys
ALLOWED = set(json.loads(sys.argv[1]))
OWNERS = importlib.metadata.packages_distributions()
norm = lambda n: re.sub(r"[-_.]+", "-", n).lower()

class Refused(importlib.abc.Loader):
    def __init__(self, message):
        self.message = message

    def create_module(self, spec):
        raise ModuleNotFoundError(self.message, name=spec.name)

    def exec_module(self, module):
        raise ModuleNotFoundError(self.message, name=module.__name__)

class Outside(importlib.abc.MetaPathFinder):
    """Importing a module of a distribution outside ALLOWED fails as if it were not
    installed (probing with find_spec still sees it, as importing is what counts)."""
    def find_spec(self, name, path=None, target=None):
        top = name.split(".")[0]
        owners = {norm(d) for d in OWNERS.get(top, ())}
        if owners and not owners & ALLOWED:
            message = f"{top} (from {', '.join(sorted(owners))}) is not in what requirements.txt installs"
            return importlib.machinery.ModuleSpec(name, Refused(message))
        return None

sys.meta_path.insert(0, Outside())
for module in json.loads(sys.argv[2]):
    __import__(module)
print("imported", ", ".join(json.loads(sys.argv[2])))
'''


@pytest.fixture(scope="module")
def resolved(upstream):
    return pip_resolve.resolve(pip_resolve.install_line(PLUGIN_DIR / "requirements.txt"))


def guarded_import(upstream, allowed, modules):
    return subprocess.run([sys.executable, "-c", GUARD, json.dumps(sorted(allowed)), json.dumps(list(modules))],
                          cwd=str(upstream), capture_output=True, text=True, timeout=600,
                          env={"PYTHONPATH": str(upstream), "PATH": "/usr/bin:/bin"})


def test_voila_imports_with_exactly_its_requirements(upstream, resolved):
    assert "matplotlib" in resolved  # pinned because pyannote.audio imports it and nothing pulls it in
    run = guarded_import(upstream, resolved, VOILA_MODULES)
    assert run.returncode == 0, f"Voila's modules do not import with what requirements.txt resolves:\n{run.stderr[-3000:]}"


def test_the_guard_refuses_what_is_not_resolved(upstream, resolved):
    """The same check with matplotlib's distribution left out fails on `import spkr`: the
    test above can fail."""
    run = guarded_import(upstream, set(resolved) - {"matplotlib"}, ["spkr"])
    assert run.returncode != 0 and "matplotlib (from matplotlib) is not in what requirements.txt installs" in run.stderr
