import datetime
import io
import json
import logging

from duplexmpe_plugin import logs


def record_line(level, msg, *args, exc=None, **extra):
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logs.HclogJSONFormatter())
    logger = logging.getLogger(f"test.logs.{level}.{len(extra)}")
    logger.propagate = False
    logger.handlers = [handler]
    logger.setLevel(1)
    if exc is not None:
        try:
            raise exc
        except Exception:
            logger.log(level, msg, *args, exc_info=True, extra=extra)
    else:
        logger.log(level, msg, *args, extra=extra)
    return json.loads(stream.getvalue())


def test_levels_map_to_hclog_names():
    for level, name in [(logs.TRACE, "trace"), (logging.DEBUG, "debug"), (logging.INFO, "info"),
                        (logging.WARNING, "warn"), (logging.ERROR, "error"), (logging.CRITICAL, "error")]:
        assert record_line(level, "m")["@level"] == name


def test_message_timestamp_and_extra_keys():
    entry = record_line(logging.INFO, "loaded %d layers", 12, checkpoint="tiny", took_s=1.5, tags=["a", 1])
    assert entry["@message"] == "loaded 12 layers"
    t = datetime.datetime.strptime(entry["@timestamp"], "%Y-%m-%dT%H:%M:%S.%fZ")
    now = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
    assert abs((now - t).total_seconds()) < 60
    assert (entry["checkpoint"], entry["took_s"], entry["tags"]) == ("tiny", 1.5, ["a", 1])
    assert entry["@module"].startswith("test.logs")


def test_non_string_message_and_values_stay_json():
    entry = record_line(logging.INFO, {"not": "a string"}, obj=object())
    assert isinstance(entry["@message"], str)  # go-plugin type-asserts it to string
    assert entry["obj"].startswith("<object object")


def test_exception_carries_its_traceback():
    entry = record_line(logging.ERROR, "step failed", exc=RuntimeError("boom"))
    assert entry["error"] == "RuntimeError: boom"
    assert "Traceback" in entry["traceback"] and "RuntimeError: boom" in entry["traceback"]


def test_level_from_env():
    assert logs.level_from_env({"DUPLEXMPE_PLUGIN_LOG_LEVEL": "WARN"}) == logging.WARNING
    assert logs.level_from_env({"DUPLEXMPE_PLUGIN_LOG_LEVEL": "trace"}) == logs.TRACE
    assert logs.level_from_env({}) == logging.DEBUG
