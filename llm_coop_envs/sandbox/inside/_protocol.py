"""Length-prefixed JSON frames over raw file descriptors, with deadlines.

Used on both sides of the host <-> warm-interpreter channel, so it imports only the standard
library and nothing from this package (the warm interpreter loads it as a top-level module).
"""

from __future__ import annotations

import json
import os
import select
import struct
import time

_HEADER = struct.Struct("!I")
MAX_FRAME = 256 * 1024 * 1024


class ChannelClosed(Exception):
    """The other side closed the channel, sent garbage, or missed the deadline."""


def encode(message: dict) -> bytes:
    # ensure_ascii keeps lone surrogates ("\ud800") encodable: they travel as JSON escapes.
    body = json.dumps(message, ensure_ascii=True, separators=(",", ":")).encode("ascii")
    return _HEADER.pack(len(body)) + body


def write_frame(fd: int, message: dict) -> None:
    write_all(fd, encode(message))


def write_all(fd: int, frame: bytes) -> None:
    data = memoryview(frame)
    while data:
        written = os.write(fd, data)
        data = data[written:]


def _read_exact(fd: int, n: int, deadline: float | None) -> bytes:
    chunks: list[bytes] = []
    while n > 0:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise ChannelClosed("deadline passed")
        chunk = os.read(fd, min(n, 1 << 20))
        if not chunk:
            raise ChannelClosed("end of file")
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def read_frame(fd: int, deadline: float | None = None) -> dict:
    return read_body(fd, read_size(fd, deadline), deadline)


def read_size(fd: int, deadline: float | None = None) -> int:
    """The next frame's header: the size of its body (read_body reads that)."""
    (size,) = _HEADER.unpack(_read_exact(fd, _HEADER.size, deadline))
    if size > MAX_FRAME:
        raise ChannelClosed(f"frame of {size} bytes")
    return size


def read_body(fd: int, size: int, deadline: float | None = None) -> dict:
    try:
        message = json.loads(_read_exact(fd, size, deadline))
    except ValueError as exc:
        raise ChannelClosed(f"malformed frame: {exc}") from None
    if not isinstance(message, dict):
        raise ChannelClosed("frame is not an object")
    return message


# Bytes of a run's /dev/shm (a tmpfs: bwrap's for the warm interpreter, and the run's own).
SHM_BYTES = 1 << 20

# The warm interpreter's exit status when its own code failed (never a run's).
HARNESS_FAILURE = 70

# In the subprocess backend's scratch root: the uid of the run in progress (root only), so that
# the host can kill the run's daemons if the warm interpreter dies.
RUN_UID_FILE = "run-uid"
