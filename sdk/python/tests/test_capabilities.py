"""The capability constants mirror the Go SDK's (sdk/sdk.go), so a Python plugin declares
model.text, model.instruction and model.concurrency=N without spelling the strings."""

import pathlib
import re

import pytest

import duplexmpe_plugin as dp

SDK_GO = pathlib.Path(__file__).resolve().parents[2] / "sdk.go"


def go_constants():
    src = SDK_GO.read_text()
    return dict(re.findall(r'^\s*(Cap\w+)\s*=\s*"([^"]*)"', src, re.M))


def test_constants_equal_the_go_sdk():
    go = go_constants()
    assert go, f"no Cap constants found in {SDK_GO}"
    python = {"CapText": dp.CAP_TEXT, "CapInstruction": dp.CAP_INSTRUCTION, "CapConcurrency": dp.CAP_CONCURRENCY}
    assert python == go


def test_cap_concurrency():
    assert dp.cap_concurrency(4) == "model.concurrency=4"
    for bad in (0, -1, 2.5, True, "3"):
        with pytest.raises(ValueError):
            dp.cap_concurrency(bad)
