"""An interrupt names the request it is for (bertlab_grader/crossing/interrupts.py): one that comes
before its request is read stops that request from running, and one that comes after its answer
stops nothing. Both happened on a busy machine with "interrupt whatever runs": a call timed out
before the student's side read it ran on for ever, at a full core."""

from __future__ import annotations

import signal
import socket
import threading
import time

import pytest

from bertlab_grader.crossing import interrupts


@pytest.fixture
def watched():
    """A :class:`Requests`, its watcher thread, the tests' end of the interrupt connection, and the
    SIGINTs the main thread received."""
    tests, student = socket.socketpair()
    requests = interrupts.Requests()
    received = []
    before = signal.signal(signal.SIGINT, lambda *_: received.append(time.monotonic()))
    watcher = threading.Thread(target=interrupts.watch, args=(student, requests))
    watcher.start()
    yield requests, tests, received
    tests.close()
    watcher.join(5)
    student.close()
    signal.signal(signal.SIGINT, before)
    assert not watcher.is_alive(), "the watcher did not end with its connection"


def settle(requests, number):
    for _ in range(200):
        with requests.lock:
            if number in requests.interrupted or number <= requests.arrived:
                return
        time.sleep(0.01)


def test_a_request_interrupted_before_it_arrives_does_not_run(watched):
    requests, tests, received = watched
    tests.sendall(interrupts.NUMBER.pack(1))
    settle(requests, 1)
    time.sleep(0.05)
    assert requests.interrupted == {1} and not received
    assert requests.arrive() is None  # answered "interrupted", never run
    assert requests.arrive() == 2  # the next one runs


def test_the_running_request_is_interrupted(watched):
    requests, tests, received = watched
    number = requests.arrive()
    tests.sendall(interrupts.NUMBER.pack(number))
    for _ in range(200):
        if received:
            break
        time.sleep(0.01)
    assert received, "the running request was not interrupted"
    requests.done(number)


def test_an_answered_request_interrupts_nothing(watched):
    requests, tests, received = watched
    first = requests.arrive()
    requests.done(first)  # answered; the tests' side timed out as the answer crossed
    second = requests.arrive()  # the next request runs
    tests.sendall(interrupts.NUMBER.pack(first))
    time.sleep(0.2)
    assert not received and not requests.interrupted
    requests.done(second)
