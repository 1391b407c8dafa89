"""Which call an interrupt is for: the tests' requests, numbered on both sides.

The tests' side (:mod:`bertlab_grader.crossing.tests_side`) numbers its requests from 1 as it sends
them; when it stops waiting for one (its time limit, the cell's, a test's alarm), it sends that
number on the interrupt connection. The student's side numbers them alike as they arrive
(:class:`Requests`) and, in a thread of its own (:func:`watch`), interrupts the request if it is
running (``SIGINT`` to the main thread), remembers it if it has not arrived (on a busy machine the
tests' side can time out a request the student's side has not read yet: it is then answered
"interrupted" without running), and does nothing if it was answered. A bare "interrupt whatever
runs" would be lost in the second case, and would stop the next request in the third.
"""

from __future__ import annotations

import signal
import socket
import struct
import threading

from bertlab_grader.crossing import wire

#: How a request number crosses: 8 bytes, big-endian.
NUMBER = struct.Struct(">Q")


class Requests:
    """The tests' requests on the student's side: how many arrived, those running (a callback
    nests one), and those interrupted before they arrived."""

    def __init__(self):
        self.lock = threading.Lock()
        self.arrived, self.running, self.interrupted = 0, [], set()

    def arrive(self) -> int | None:
        """Number the request that just arrived and mark it running; None if it was interrupted
        before it came (answer so, and do not run it)."""
        with self.lock:
            self.arrived += 1
            if self.arrived in self.interrupted:
                self.interrupted.discard(self.arrived)
                return None
            self.running.append(self.arrived)
            return self.arrived

    def done(self, number: int) -> None:
        with self.lock:
            self.running.remove(number)


def watch(sock: socket.socket, requests: Requests) -> None:
    """Read request numbers from the interrupt connection until it closes, and act on each."""
    main = threading.main_thread().ident
    while True:
        try:
            data = wire.read_exactly(sock, NUMBER.size, None)
        except (OSError, wire.WireError):
            return
        if data is None:
            return
        (number,) = NUMBER.unpack(data)
        with requests.lock:
            if number > requests.arrived:
                requests.interrupted.add(number)
            elif number in requests.running:
                signal.pthread_kill(main, signal.SIGINT)
