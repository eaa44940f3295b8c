"""Resolving an adapter's requirements.txt with pip, exactly as its header says to
install it (test helper for plugins/*/tests_upstream and plugins/_common/tests_real).

Each requirements.txt starts with the directory to install from and the install line a
user copies:

    # ... Install from this directory
    # (plugins/X: the -e path below is relative to it):
    #   python3 -m venv /opt/venvs/X && /opt/venvs/X/bin/pip install -r requirements.txt

`install_line` reads both; `resolve` runs that pip install in that directory as a dry run
(`--dry-run --ignore-installed --report`), so PyPI's resolver decides what the line would
install without installing it: names and versions, dependencies included.

The dry run uses pip RESOLVER_PIP, in a venv of this interpreter kept in the ignored
.cache/ (made on first use): pip 23, which `python3 -m venv` gives on Python 3.11,
downloads every wheel it resolved even in a dry run (torch's CUDA wheels: about 4 GB per
adapter, 20 min here), while pip >= 25.3 reads PyPI's metadata files (PEP 658) and
downloads none (2 min for voila's). Same resolver, same interpreter, same markers: for
plugins/voila/requirements.txt it resolved exactly the set pip 23.2.1 installed.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
RESOLVER_PIP = "25.3"
RESOLVER_VENV = REPO / ".cache" / f"pip-resolver-py{sys.version_info.major}.{sys.version_info.minor}"
DIRECTORY = re.compile(r"Install from this directory\s*#?\s*\((?P<dir>[^:)\s]+)")
INSTALL = re.compile(r"^#\s+python3 -m venv (?P<venv>\S+) && (?:cd (?P<cd>\S+) && )?(?P<pip>\S+) install (?P<args>.+)$")


@dataclass(frozen=True)
class InstallLine:
    venv: str
    directory: Path  # absolute
    args: tuple[str, ...]  # what follows `pip install`


def install_line(requirements: Path) -> InstallLine:
    """The header's install directory and line of `requirements`; AssertionError when it
    has none, names no directory, or installs with a pip other than the venv's."""
    header = []
    for line in requirements.read_text().splitlines():
        if not line.startswith("#"):
            break
        header.append(line)
    text = "\n".join(header)
    for line in header:
        m = INSTALL.match(line)
        if not m:
            continue
        assert m["pip"] == m["venv"] + "/bin/pip", f"{requirements}: the install line's pip is not the venv's: {line}"
        where = m["cd"] or (DIRECTORY.search(text) or {"dir": None})["dir"]
        assert where, f"{requirements}: the header says neither `cd DIR &&` nor 'Install from this directory (DIR'"
        return InstallLine(m["venv"], (REPO / where).resolve(), tuple(shlex.split(m["args"])))
    raise AssertionError(f"{requirements}: no install line (#   python3 -m venv V && V/bin/pip install ...) "
                         "in the header")


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def resolver_python() -> str:
    """The python of a venv (of this interpreter) with pip RESOLVER_PIP, made on first use."""
    python = RESOLVER_VENV / "bin" / "python"
    stamp = RESOLVER_VENV / "pip-version"
    RESOLVER_VENV.parent.mkdir(parents=True, exist_ok=True)
    with open(RESOLVER_VENV.parent / (RESOLVER_VENV.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two test sessions at once make it once
        if stamp.exists() and stamp.read_text().strip() == RESOLVER_PIP and python.exists():
            return str(python)
        if RESOLVER_VENV.exists():
            shutil.rmtree(RESOLVER_VENV)  # unfinished or another pip: make it again
        subprocess.run([sys.executable, "-m", "venv", str(RESOLVER_VENV)], check=True, timeout=300)
        run = subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                              f"pip=={RESOLVER_PIP}"], capture_output=True, text=True, timeout=600)
        assert run.returncode == 0, f"could not install pip=={RESOLVER_PIP} for the dry runs:\n{run.stderr[-2000:]}"
        stamp.write_text(RESOLVER_PIP)  # last: the venv is complete
    return str(python)


def resolve(line: InstallLine, cwd: Path | None = None, timeout: float = 1800) -> dict[str, str]:
    """What `pip install <args>` run in `cwd` (the line's directory unless given) would
    install: {normalized name: version}. AssertionError with pip's output when the
    resolver fails."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        cmd = [resolver_python(), "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet",
               "--disable-pip-version-check", "--report", str(report), *line.args]
        # pip unpacks every wheel it downloads into TMPDIR and removes it only when it exits
        # normally; a resolve killed at its timeout would leave gigabytes in /tmp.
        env = {**os.environ, "TMPDIR": tmp}
        run = subprocess.run(cmd, cwd=cwd or line.directory, capture_output=True, text=True, timeout=timeout, env=env)
        assert run.returncode == 0, f"pip could not resolve {line.args} in {cwd or line.directory}:\n{run.stderr[-4000:]}"
        data = json.loads(report.read_text())
    return {normalize(i["metadata"]["name"]): i["metadata"]["version"] for i in data["install"]}


def pins(requirements: Path) -> dict[str, str]:
    """The name==version lines of a requirements file: {normalized name: version}."""
    out = {}
    for line in requirements.read_text().splitlines():
        m = re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?==([^\s;#]+)", line.strip())
        if m:
            out[normalize(m[1])] = m[3]
    return out
