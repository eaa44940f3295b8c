"""hclog-style JSON log lines on stderr, which the go-plugin host turns into its own log
entries: ``{"@level": "info", "@message": "...", "@timestamp": "...", "key": value}``.

Use the standard ``logging`` module; keys passed with ``extra={...}`` become hclog
key/value pairs, and an exception's traceback goes in the "traceback" key.
"""

from __future__ import annotations

import datetime
import json
import logging
import os
import traceback
from typing import IO, Any

TRACE = 5
logging.addLevelName(TRACE, "TRACE")

ENV_LOG_LEVEL = "DUPLEXMPE_PLUGIN_LOG_LEVEL"

# The attributes every LogRecord has; anything else on a record came from extra={...}.
_RECORD_ATTRS = frozenset(
    logging.LogRecord("", 0, "", 0, "", (), None).__dict__.keys() | {"message", "asctime", "taskName"}
)

_LEVELS = {"trace": TRACE, "debug": logging.DEBUG, "info": logging.INFO, "warn": logging.WARNING,
           "warning": logging.WARNING, "error": logging.ERROR}


def hclog_level(levelno: int) -> str:
    if levelno < logging.DEBUG:
        return "trace"
    if levelno < logging.INFO:
        return "debug"
    if levelno < logging.WARNING:
        return "info"
    if levelno < logging.ERROR:
        return "warn"
    return "error"


def hclog_timestamp(created: float) -> str:
    """Go layout 2006-01-02T15:04:05.000000Z07:00 (what go-plugin parses), in UTC."""
    t = datetime.datetime.fromtimestamp(created, datetime.timezone.utc)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond:06d}Z"


def _jsonable(v: Any) -> Any:
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    return str(v)


class HclogJSONFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "@level": hclog_level(record.levelno),
            "@message": str(record.getMessage()),
            "@timestamp": hclog_timestamp(record.created),
            "@module": record.name,
        }
        for key, value in record.__dict__.items():
            if key not in _RECORD_ATTRS and not key.startswith("_"):
                entry[key if not key.startswith("@") else key[1:]] = _jsonable(value)
        if record.exc_info and record.exc_info[0] is not None:
            etype, evalue, _ = record.exc_info
            entry["error"] = f"{etype.__name__}: {evalue}"
            entry["traceback"] = "".join(traceback.format_exception(*record.exc_info))
        elif record.stack_info:
            entry["stack"] = record.stack_info
        return json.dumps(entry, ensure_ascii=False)


def level_from_env(environ: dict[str, str] | os._Environ = os.environ, default: int = logging.DEBUG) -> int:
    return _LEVELS.get(environ.get(ENV_LOG_LEVEL, "").strip().lower(), default)


def setup(stream: IO[str], level: int = logging.DEBUG) -> logging.Handler:
    """Sends every log record to ``stream`` as hclog JSON: replaces the root logger's
    handlers, sets its level, and routes warnings.warn through logging. The host filters
    by its own level too."""
    handler = logging.StreamHandler(stream)
    handler.setFormatter(HclogJSONFormatter())
    root = logging.getLogger()
    for h in list(root.handlers):
        root.removeHandler(h)
    root.addHandler(handler)
    root.setLevel(level)
    logging.captureWarnings(True)
    return handler
