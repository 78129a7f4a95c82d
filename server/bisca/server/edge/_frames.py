"""The HTTP/2 frames of a client's bytes, counted as they pass (sans-I/O).

A door's guard (``_guard.py``) relays a sandboxed bot's connection to the door's gRPC server
and weighs what the bot sends before gRPC reads it: gRPC's C core serves connections, PINGs,
SETTINGS, WINDOW_UPDATEs and streams it refuses without ever handing them to Python, so the
only place to count them is the bytes.  Only the framing is read — the client's preface, then
frames of a 9-byte header (a 3-byte length, a type, flags, a stream) and their payloads — no
HPACK, no state of streams: what a frame means is gRPC's to judge.
"""

from __future__ import annotations

#: What every HTTP/2 client sends first (RFC 9113, 3.4).
CLIENT_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
FRAME_HEADER_BYTES = 9
#: The 5-byte prefix of every gRPC message: a DATA frame with less than this is no part of a
#: message's bytes worth the name (gRPC's clients send their messages' bytes in frames of
#: kilobytes, and an empty DATA frame only to end a stream).
GRPC_MESSAGE_PREFIX_BYTES = 5
#: The type of a DATA frame (the fourth byte of its header).
DATA_FRAME = 0x0


class NotHttp2(Exception):
    """The connection did not start with the HTTP/2 client preface."""


class FrameCounter:
    """One connection's bytes from its client, read as frames: :meth:`feed` says how many
    *control* frames the bytes begin and how many DATA frames with a message's bytes in them.

    A control frame is every frame but DATA, and a DATA frame too small to carry a message's
    bytes (:data:`GRPC_MESSAGE_PREFIX_BYTES`): what costs a server work of its own without
    being a message."""

    def __init__(self) -> None:
        self._preface_seen = 0
        self._header = bytearray()
        self._payload_left = 0
        self.control_frames = 0
        self.data_frames = 0

    @property
    def preface_done(self) -> bool:
        return self._preface_seen == len(CLIENT_PREFACE)

    def feed(self, data: bytes) -> tuple[int, int]:
        """The control frames and the DATA frames whose headers end in ``data``.
        :class:`NotHttp2` if the connection does not begin with the client preface."""
        at, end = 0, len(data)
        if self._preface_seen < len(CLIENT_PREFACE):
            seen = self._preface_seen
            at = min(len(CLIENT_PREFACE) - seen, end)
            if data[:at] != CLIENT_PREFACE[seen : seen + at]:
                raise NotHttp2("the connection did not start with the HTTP/2 client preface")
            self._preface_seen = seen + at
        control = messages = 0
        while at < end:
            if self._payload_left:
                step = min(self._payload_left, end - at)
                self._payload_left -= step
                at += step
                continue
            if not self._header and end - at >= FRAME_HEADER_BYTES:
                header = data[at : at + FRAME_HEADER_BYTES]
                at += FRAME_HEADER_BYTES
            else:
                take = FRAME_HEADER_BYTES - len(self._header)
                self._header += data[at : at + take]
                at += take
                if len(self._header) < FRAME_HEADER_BYTES:
                    break
                header, self._header = bytes(self._header), bytearray()
            length = int.from_bytes(header[:3], "big")
            self._payload_left = length
            if header[3] == DATA_FRAME and length >= GRPC_MESSAGE_PREFIX_BYTES:
                messages += 1
            else:
                control += 1
        self.control_frames += control
        self.data_frames += messages
        return control, messages
