"""The frames on the socket between the two kernels.

A frame is two lengths (8 bytes each, network order), a JSON header and a body. What the tests'
kernel sends (a call's arguments, a callback's result) is a pickle in the body: only the
student's side reads it, and it runs nothing the tests did not write. What the student's kernel
sends is never unpickled or evaluated (:mod:`bertlab_grader.crossing.values`), and
:func:`receive` caps a frame's header and body before it reads them, and its wait. The standard
library only.
"""

from __future__ import annotations

import json
import os
import socket
import stat
import struct
import time

FRAME = struct.Struct("!QQ")  # the header's length, the body's length


class WireError(Exception):
    """What the other side sent cannot be read: too big, too late, cut short or malformed."""


# --- frames --------------------------------------------------------------------------------------


def send(sock: socket.socket, header: dict, body: bytes | bytearray | memoryview = b"") -> None:
    """One frame: ``header`` as JSON, then ``body``."""
    head = json.dumps(header, separators=(",", ":")).encode()
    if len(body) < 2**20:  # one write for a small frame
        sock.sendall(b"".join([FRAME.pack(len(head), len(body)), head, body]))
        return
    sock.sendall(FRAME.pack(len(head), len(body)) + head)
    sock.sendall(body)


def read_exactly(sock: socket.socket, size: int, deadline: float | None) -> bytes | None:
    """Exactly ``size`` bytes, or None at a clean end of file before the first byte."""
    chunks, got = [], 0
    view = bytearray(size)
    while got < size:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise WireError("no answer in time")
            sock.settimeout(left)
        else:
            sock.settimeout(None)
        try:
            n = sock.recv_into(memoryview(view)[got:], size - got)
        except socket.timeout:
            raise WireError("no answer in time") from None
        if n == 0:
            if got == 0 and not chunks:
                return None
            raise WireError("the other side closed the connection in the middle of a message")
        got += n
    return bytes(view)


def receive(
    sock: socket.socket,
    *,
    max_header: int = 64 * 2**20,
    max_body: int = 512 * 2**20,
    deadline: float | None = None,
) -> tuple[dict, bytes] | None:
    """The next frame's header and body; None where the other side closed the connection. A frame
    whose header or body is over its cap, or whose header is not a JSON object, is a WireError
    (the body of an oversized frame is never read)."""
    lengths = read_exactly(sock, FRAME.size, deadline)
    if lengths is None:
        return None
    head_size, body_size = FRAME.unpack(lengths)
    if head_size > max_header:
        raise WireError(f"a message header of {head_size:,} bytes (the cap is {max_header:,})")
    if body_size > max_body:
        raise WireError(f"a message of {body_size:,} bytes (the cap is {max_body:,})")
    head = read_exactly(sock, head_size, deadline) or b""
    body = read_exactly(sock, body_size, deadline) or b"" if body_size else b""
    try:
        header = json.loads(head)
    except (ValueError, RecursionError) as exc:
        raise WireError(f"a message header that is not JSON ({type(exc).__name__})") from None
    if not isinstance(header, dict):
        raise WireError("a message header that is not a JSON object")
    return header, body


# --- the student's side: values to JSON and blobs ------------------------------------------------


def connect(path: str, wait: float = 10.0) -> socket.socket:
    """A connection to the Unix socket ``path`` (a socket, not a link to one), once something
    listens there: within ``wait`` seconds, else ConnectionError."""
    deadline = time.monotonic() + wait
    while True:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            if not stat.S_ISSOCK(os.lstat(path).st_mode):
                raise ConnectionRefusedError("no socket")
            sock.connect(path)
            return sock
        except (FileNotFoundError, ConnectionRefusedError):
            sock.close()
            if time.monotonic() > deadline:
                raise ConnectionError("nothing serves there") from None
            time.sleep(0.02)
