"""Ending a plugin with its host.

The host passes every plugin the read end of a pipe whose only write end it holds, and
names it in DUPLEXMPE_HOST_PIPE as "FD:INODE" (sdk.HostPipeEnv in Go). When the host is
gone, however it died (SIGKILL included), the read end sees end-of-file, and this watch
kills the plugin's process group: the plugin, the wrapper script that started it and
whatever they started. The kernel's parent-death signal reaches only the host's direct
child; this also reaches a plugin behind a wrapper that does not ``exec``, and one still
importing its libraries or loading weights, before ``serve()`` runs.

``import duplexmpe_plugin`` starts the watch; it does nothing when the variable is unset
(a plugin started by hand, or in debug mode).
"""

from __future__ import annotations

import os
import signal
import stat
import sys
import threading
from typing import Mapping, Optional

ENV_HOST_PIPE = "DUPLEXMPE_HOST_PIPE"

_started = False


def parse(value: str) -> Optional[tuple[int, int]]:
    """(fd, inode) from the variable's value, or None."""
    fd, sep, ino = value.partition(":")
    if not sep or not fd.isdigit() or not ino.isdigit() or int(fd) < 3:
        return None
    return int(fd), int(ino)


def start(environ: Mapping[str, str] = os.environ) -> bool:
    """Starts the watch thread once; returns whether a host pipe is being watched."""
    global _started
    if _started:
        return True
    parsed = parse(environ.get(ENV_HOST_PIPE, ""))
    if parsed is None:
        return False
    fd, ino = parsed
    try:
        st = os.fstat(fd)
    except OSError:
        return False
    if not stat.S_ISFIFO(st.st_mode) or st.st_ino != ino:
        return False  # something else sits at that descriptor now
    os.set_inheritable(fd, False)  # the plugin's own children need not hold it
    threading.Thread(target=_watch, args=(fd,), name="duplexmpe-host-watch", daemon=True).start()
    _started = True
    return True


def _watch(fd: int) -> None:
    while True:
        try:
            if not os.read(fd, 16):
                break  # end of file: the host is gone
        except InterruptedError:
            continue
        except OSError:
            break
    try:
        os.write(2, b"duplexmpe plugin: the host is gone; stopping this plugin and its process group\n")
    except OSError:
        pass
    try:
        os.killpg(os.getpgrp(), signal.SIGKILL)
    finally:
        os._exit(1)


if sys.platform == "win32":  # pragma: no cover - the host runs plugins on POSIX only
    def start(environ: Mapping[str, str] = os.environ) -> bool:  # noqa: F811
        return False
