"""The shared adapter pieces on their own; each adapter's tests also run them through
its check_config, configure and start."""

import math
import threading
import time

import pytest

import adapter_kit as kit

SCHEMA = (
    kit.Field("name", "string", "x", ""),
    kit.Field("dtype", "string", "bfloat16", "", ("bfloat16", "float32")),
    kit.Field("temp", "number", None, ""),
    kit.Field("steps", "number", 4, ""),
    kit.Field("warmup", "bool", True, ""),
    kit.Field("factory", "string", "", ""),
)


def test_check_fields_fills_defaults_and_keeps_nulls():
    assert kit.check_fields({"steps": 2.0}, SCHEMA) == {
        "name": "x", "dtype": "bfloat16", "temp": None, "steps": 2.0, "warmup": True, "factory": ""}


@pytest.mark.parametrize("config, field, expected", [
    ({"nope": 1}, "nope", "unknown config field"),
    ({"name": 3}, "name", "expected a string"),
    ({"steps": True}, "steps", "expected a number"),
    ({"steps": "4"}, "steps", "expected a number"),
    ({"warmup": 1}, "warmup", "expected true or false"),
    ({"dtype": "int4"}, "dtype", "expected one of bfloat16, float32"),
    ({"temp": "hot"}, "temp", "expected a number"),
])
def test_check_fields_names_the_bad_field(config, field, expected):
    with pytest.raises(kit.ConfigError) as e:
        kit.check_fields(config, SCHEMA)
    assert field in str(e.value) and expected in str(e.value)


def test_check_fields_wants_an_object():
    with pytest.raises(kit.ConfigError, match="config must be an object, got list"):
        kit.check_fields([], SCHEMA)


def test_whole():
    assert kit.whole(3.0) and not kit.whole(2.5) and not kit.whole(math.inf) and not kit.whole(math.nan)


def test_resolve_factory():
    assert kit.resolve_factory("standin_moshi:load").__name__ == "load"
    with pytest.raises(kit.ConfigError, match="cannot import 'no_such_module'.*PYTHONPATH"):
        kit.resolve_factory("no_such_module:load")
    with pytest.raises(kit.ConfigError, match="standin_moshi has no function 'nope'"):
        kit.resolve_factory("standin_moshi:nope")


def test_load_names_what_failed():
    def broken(config):
        raise OSError("disk on fire")
    with pytest.raises(kit.ConfigError, match=r"^checkpoint: cannot load 'org/model': OSError: disk on fire\. Check"):
        kit.load(broken, {"factory": "", "checkpoint": "org/model"}, "checkpoint")
    with pytest.raises(kit.ConfigError, match=r"^factory: cannot load factory m:f: OSError"):
        kit.load(broken, {"factory": "m:f", "checkpoint": "org/model"}, "checkpoint")

    def refuses(config):
        raise kit.ConfigError("dtype: no")
    with pytest.raises(kit.ConfigError, match=r"^dtype: no$"):
        kit.load(refuses, {"factory": ""}, "checkpoint")


class Conv:
    def __init__(self, adapter):
        self.adapter, self.closed = adapter, False

    def close(self):
        self.closed = True
        self.adapter._closed()


def test_one_conversation_at_a_time():
    a = kit.OneConversationAtATime()
    with a._free:
        assert a._wait_free()
        a.active = Conv(a)
    a.start_wait_s = 0.05
    with a._free:
        assert not a._wait_free()  # still open after the wait
    # A close from another thread wakes a waiting start.
    a.start_wait_s = 30
    closer = threading.Timer(0.05, a.active.close)
    closer.start()
    t0 = time.monotonic()
    with a._free:
        assert a._wait_free()
    assert time.monotonic() - t0 < 10
    closer.join()


def test_load_runtime_checks_the_runtime():
    config = {"factory": "", "checkpoint": "org/model"}
    assert kit.load_runtime(config, "checkpoint", {"a"}, lambda c: {"a": 1, "b": 2}) == {"a": 1, "b": 2}
    with pytest.raises(kit.ConfigError, match=r"^factory: the runtime lacks b, c$"):
        kit.load_runtime(config, "checkpoint", {"a", "b", "c"}, lambda c: {"a": 1})
    # A factory, when named, replaces the official loader.
    rt = kit.load_runtime({"factory": "standin_moshi:load", "device": "cpu", "hf_repo": ""}, "hf_repo",
                          {"mimi", "identity"}, lambda c: pytest.fail("the official loader ran"))
    assert rt["identity"]["library"].startswith("standin_moshi")


def test_open_and_check_idle():
    a = kit.OneConversationAtATime()
    a._check_idle()
    first = a._open("m", lambda: Conv(a))
    first.conversation_id = "c1"
    assert a.active is first
    with pytest.raises(RuntimeError, match="configure while conversation 'c1' is open"):
        a._check_idle()
    a.start_wait_s = 0.05
    with pytest.raises(RuntimeError, match="m serves one conversation at a time; 'c1' is still open"):
        a._open("m", lambda: pytest.fail("made a second conversation"))
    first.close()
    a._check_idle()
    assert a._open("m", lambda: Conv(a)) is a.active is not first
