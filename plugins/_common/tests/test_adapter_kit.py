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
    with pytest.raises(kit.LoadError, match=r"^checkpoint: cannot load 'org/model': OSError: disk on fire\. "
                                            r"File failed: a file or download failed") as e:
        kit.load(broken, {"factory": "", "checkpoint": "org/model"}, "checkpoint")
    assert e.value.kind == "file" and isinstance(e.value, kit.ConfigError)
    with pytest.raises(kit.LoadError, match=r"^factory: cannot load factory m:f: OSError"):
        kit.load(broken, {"factory": "m:f", "checkpoint": "org/model"}, "checkpoint")

    def refuses(config):
        raise kit.ConfigError("dtype: no")
    with pytest.raises(kit.ConfigError, match=r"^dtype: no$"):
        kit.load(refuses, {"factory": ""}, "checkpoint")


@pytest.mark.parametrize("error, kind, hint", [
    (ModuleNotFoundError("No module named 'matplotlib'", name="matplotlib"), "import", "requirements.txt"),
    (FileNotFoundError(2, "No such file or directory", "/ckpt/config.json"), "file", "repository name"),
    (RuntimeError("Error(s) in loading state_dict for LlamaModel:\n\tsize mismatch for embed_tokens.weight"),
     "shape", "another version or size"),
    (AssertionError("Torch not compiled with CUDA enabled"), "cuda", "torch.cuda.is_available()"),
    (RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB"), "cuda", "free memory"),
    (KeyError("num_codebooks"), "loader", "see the traceback"),
])
def test_load_says_what_failed(error, kind, hint):
    def loader(config):
        raise error
    with pytest.raises(kit.LoadError) as e:
        kit.load(loader, {"factory": "", "checkpoint": "org/model"}, "checkpoint")
    assert e.value.kind == kind
    assert f": {type(error).__name__}: " in str(e.value) and f" {kit._TITLES[kind]} failed: " in str(e.value)
    assert hint in str(e.value)
    assert "checkpoint, the network or the GPU" not in str(e.value)


def test_load_carries_upstream_traceback(tmp_path, monkeypatch):
    """The frames of the failing upstream code are in the message, innermost last."""
    (tmp_path / "upstream_model.py").write_text(
        "def build(config):\n"
        "    return _weights(config['checkpoint'])\n"
        "\n"
        "def _weights(path):\n"
        "    raise RuntimeError('size mismatch for lm_head.weight: copying a param with shape [8, 4]')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import upstream_model

    with pytest.raises(kit.LoadError) as e:
        kit.load(upstream_model.build, {"factory": "", "checkpoint": "tiny"}, "checkpoint")
    text = str(e.value)
    assert e.value.kind == "shape"
    assert "upstream_model.py\", line 2, in build" in text
    assert text.index("in build") < text.index("upstream_model.py\", line 5, in _weights")
    assert text.rstrip().endswith("RuntimeError: size mismatch for lm_head.weight: copying a param with shape [8, 4]")


def test_load_traceback_is_bounded():
    def deep(n):
        if n == 0:
            raise ValueError("x" * 20000)
        deep(n - 1)
    with pytest.raises(kit.LoadError) as e:
        kit.load(lambda c: deep(30), {"factory": "", "checkpoint": "c"}, "checkpoint")
    assert len(str(e.value)) <= kit.MESSAGE_LIMIT + 10
    assert str(e.value).count("in deep") <= kit.TRACEBACK_FRAMES


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


def test_source_digest_follows_the_code(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "a.py").write_text("x = 1\n")
    (tmp_path / "model.py").write_text("y = 2\n")
    first = kit.source_digest(tmp_path, ["pkg", "model.py"])
    assert first == kit.source_digest(tmp_path, ["model.py", "pkg"]) and first.startswith("sha256:")
    (tmp_path / "pkg" / "notes.txt").write_text("not code")
    assert kit.source_digest(tmp_path, ["pkg", "model.py"]) == first
    (tmp_path / "pkg" / "a.py").write_text("x = 3\n")
    assert kit.source_digest(tmp_path, ["pkg", "model.py"]) != first
    assert kit.source_digest(tmp_path, ["gone.py"]) != kit.source_digest(tmp_path, ["model.py"])
