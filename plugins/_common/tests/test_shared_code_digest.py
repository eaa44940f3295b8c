"""The shared adapter code is part of every adapter's identity."""

import shutil
import sys
from pathlib import Path

COMMON = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(COMMON))

import adapter_plugin  # noqa: E402


def test_digest_covers_the_shared_code_and_changes_with_it(tmp_path):
    copy = tmp_path / "_common"
    shutil.copytree(COMMON, copy, ignore=shutil.ignore_patterns("__pycache__"))
    before = adapter_plugin.shared_code_digest(copy)
    assert before == adapter_plugin.SHARED_CODE_DIGEST
    assert before.startswith("sha256:") and len(before) == len("sha256:") + 64

    # Tests do not count; the code does.
    (copy / "tests" / "test_extra.py").write_text("x = 1\n")
    assert adapter_plugin.shared_code_digest(copy) == before
    kit = copy / "adapter_kit.py"
    kit.write_text(kit.read_text() + "\n# changed\n")
    assert adapter_plugin.shared_code_digest(copy) != before


class _Adapter:
    def identity(self):
        return {"checkpoint": "x"}


class _Module:
    NAME, VERSION, SCHEMA = "m", "0", ()


def test_identity_carries_the_digest():
    plugin = adapter_plugin.AdapterPlugin(_Module, _Adapter(), "d", ())
    ident = plugin.identity()
    assert ident["checkpoint"] == "x"
    assert ident["shared_code"] == adapter_plugin.SHARED_CODE_DIGEST
