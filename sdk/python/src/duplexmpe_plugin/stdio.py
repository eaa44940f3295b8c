"""What the plugin writes to stdout and stderr after the handshake, served to the host
over plugin.GRPCStdio/StreamStdio (go-plugin's SyncStdout/SyncStderr)."""

from __future__ import annotations

import collections
import io
import os
import threading
from typing import Optional

STDOUT = 1
STDERR = 2


class Pump:
    """A bounded buffer of (channel, bytes) chunks. Writers never block: past
    ``limit`` bytes the oldest chunks are dropped and counted, so a plugin whose host
    does not read its stdio cannot stall."""

    def __init__(self, limit: int = 4 << 20):
        self._limit = limit
        self._chunks: collections.deque[tuple[int, bytes]] = collections.deque()
        self._size = 0
        self._cond = threading.Condition()
        self.dropped_bytes = 0

    def write(self, channel: int, data: bytes) -> None:
        if not data:
            return
        with self._cond:
            self._chunks.append((channel, bytes(data)))
            self._size += len(data)
            while self._size > self._limit and len(self._chunks) > 1:
                _, old = self._chunks.popleft()
                self._size -= len(old)
                self.dropped_bytes += len(old)
            self._cond.notify_all()

    def wake(self) -> None:
        """Makes waiting get() calls return now (used when the server stops)."""
        with self._cond:
            self._cond.notify_all()

    def get(self, timeout: float) -> Optional[tuple[int, bytes]]:
        with self._cond:
            if not self._chunks:
                self._cond.wait(timeout)
            if not self._chunks:
                return None
            channel, data = self._chunks.popleft()
            self._size -= len(data)
            return channel, data


class _ChannelWriter(io.RawIOBase):
    def __init__(self, pump: Pump, channel: int):
        self._pump = pump
        self._channel = channel

    def writable(self) -> bool:
        return True

    def write(self, b) -> int:  # type: ignore[override]
        data = bytes(b)
        self._pump.write(self._channel, data)
        return len(data)


def text_writer(pump: Pump, channel: int) -> io.TextIOWrapper:
    """A line-buffered text stream whose output goes to ``pump`` on ``channel``."""
    return io.TextIOWrapper(io.BufferedWriter(_ChannelWriter(pump, channel)), encoding="utf-8",
                            errors="backslashreplace", line_buffering=True)


def capture_fd(fd: int, pump: Pump, channel: int) -> threading.Thread:
    """Points file descriptor ``fd`` at a pipe whose reader feeds ``pump``, so output of
    C extensions and subprocesses is captured too. Returns the reader thread."""
    r, w = os.pipe()
    os.dup2(w, fd)
    os.close(w)

    def read() -> None:
        while True:
            try:
                data = os.read(r, 65536)
            except OSError:
                return
            if not data:
                return
            pump.write(channel, data)

    t = threading.Thread(target=read, name=f"duplexmpe-stdio-{fd}", daemon=True)
    t.start()
    return t
