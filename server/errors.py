"""Errors the referee's operator-facing functions raise; the transport maps them to gRPC."""

from __future__ import annotations


class OperatorError(Exception):
    """A refused operator or spectator call: a gRPC status name and a sentence."""

    def __init__(self, status: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
