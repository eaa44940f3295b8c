"""Exceptions plugin code raises to answer a call with a specific gRPC status.

Any other exception raised by plugin code becomes status INTERNAL, with its traceback
written to the plugin log.
"""

from __future__ import annotations

import grpc


class PluginError(Exception):
    """Answer the current call with ``code`` and this message."""

    code = grpc.StatusCode.INTERNAL

    def __init__(self, message: str, code: grpc.StatusCode | None = None):
        super().__init__(message)
        if code is not None:
            self.code = code


class InvalidArgument(PluginError, ValueError):
    """The request (or config) is wrong: an unknown voice, a bad config value."""

    code = grpc.StatusCode.INVALID_ARGUMENT


class FailedPrecondition(PluginError):
    """The call is not valid in the plugin's current state."""

    code = grpc.StatusCode.FAILED_PRECONDITION
