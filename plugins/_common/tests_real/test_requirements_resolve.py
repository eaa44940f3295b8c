"""Every adapter's requirements.txt installs as its header says: the install line, run
from the repository root, resolved by pip against PyPI (a dry run, nothing installed).
Run by `make test-adapters` (it needs PyPI; each resolve takes about a minute)."""

import pytest

import pip_resolve

ADAPTERS = ("moshi", "flm-audio", "minicpm-o", "voila", "freeze-omni")


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_requirements_resolve_as_the_header_says(adapter):
    requirements = pip_resolve.REPO / "plugins" / adapter / "requirements.txt"
    line = pip_resolve.install_line(requirements)
    assert line.directory == requirements.parent, f"the header installs from {line.directory}, not the plugin directory"
    assert line.args == ("-r", "requirements.txt")
    resolved = pip_resolve.resolve(line)
    assert "duplexmpe-plugin" in resolved, "the SDK (-e ../../sdk/python) is not in what pip would install"
    for name, version in pip_resolve.pins(requirements).items():
        assert resolved.get(name) == version, f"{name}=={version} is pinned, pip would install {resolved.get(name)}"


def test_the_install_line_needs_its_directory():
    """What the old headers said (pip install -r plugins/X/requirements.txt from the
    repository root) fails: the -e path is read relative to the working directory."""
    line = pip_resolve.install_line(pip_resolve.REPO / "plugins" / "voila" / "requirements.txt")
    wrong = pip_resolve.InstallLine(line.venv, pip_resolve.REPO, ("-r", "plugins/voila/requirements.txt"))
    with pytest.raises(AssertionError, match="could not resolve"):
        pip_resolve.resolve(wrong, timeout=300)
