"""Outside input the SDK parses, fed random and hostile values: it answers with a value
or a clear InvalidArgument, never another exception."""

import json
import random

import pytest

from duplexmpe_plugin import InvalidArgument, handshake
from duplexmpe_plugin.services import parse_config, pcm_to_samples
from duplexmpe_plugin.testing import Handshake


def random_text(rng, n):
    alphabet = '{}[]":,0123456789.-+eEtrufalsn \\u\t\n\x00\xff' + "abcxyz"
    return "".join(rng.choice(alphabet) for _ in range(n))


def test_config_json_random():
    rng = random.Random(1)
    ok = refused = 0
    for i in range(3000):
        text = random_text(rng, rng.randrange(0, 40))
        if i % 10 == 0:
            text = json.dumps({"k": random_text(rng, 5), "n": rng.random()})
        try:
            config = parse_config(text)
        except InvalidArgument as e:
            assert "config_json" in str(e)
            refused += 1
        else:
            assert isinstance(config, dict)
            ok += 1
    assert ok > 100 and refused > 100


@pytest.mark.parametrize("text", ["1e999999", '"' + "\\ud800" + '"', "[" * 100000, "NaN", '{"a": Infinity}'])
def test_config_json_hostile(text):
    try:
        config = parse_config(text)
    except InvalidArgument:
        return
    assert isinstance(config, dict)


def test_protocol_versions_random():
    rng = random.Random(2)
    for _ in range(3000):
        offered = random_text(rng, rng.randrange(0, 12))
        warnings = []
        v = handshake.negotiate_version({"PLUGIN_PROTOCOL_VERSIONS": offered}, warn=warnings.append)
        assert v == 1


def test_pcm_lengths():
    for n in range(0, 64):
        data = bytes(range(n))
        if n % 4:
            with pytest.raises(InvalidArgument, match="not a multiple of 4"):
                pcm_to_samples(data)
        else:
            assert pcm_to_samples(data).size == n // 4


def test_handshake_parse_random():
    rng = random.Random(3)
    for _ in range(2000):
        line = "|".join(random_text(rng, rng.randrange(0, 6)) for _ in range(rng.randrange(0, 8)))
        try:
            hs = Handshake.parse(line)
        except ValueError:
            continue
        assert isinstance(hs.core_version, int)
