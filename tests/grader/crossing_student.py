"""A student's side for ``test_crossing.py``: functions a test calls across, served forever.

``python tests/grader/crossing_student.py SOCKET [TRICK]`` serves ``student_side.serve`` on
``SOCKET`` with the functions below in its namespace, as the grader has a student's kernel do
before each test cell (a plain process here, no kernel). ``TRICK`` replaces part of the student's
side first, as a hostile submission's kernel could: what the tests' side must then refuse.
"""

from __future__ import annotations

import random
import sys
import time
import warnings

import torch
import torch.nn.functional as F
import transformers  # noqa: F401 - imported, as a course notebook's set-up imports it

from bertlab_grader.crossing import student_side, values, wire


def double(x, y=1):
    return x * 2 + y


def add_one_in_place(t):
    t.add_(1)


def loss(logits, labels):
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1))


def warns_and_draws(n):
    warnings.warn("careful", UserWarning)
    return torch.rand(n), random.random()


def raises(x):
    raise ValueError(f"bad {x}")


def step(model, batch, optimizer, scheduler):
    model.train()
    value = model(**batch).loss
    value.backward()
    optimizer.step()
    scheduler.step()
    optimizer.zero_grad()
    return value.item()


def configure(model, start_id):
    model.config.decoder_start_token_id = start_id


def forward_shape(model, ids):
    return tuple(model(input_ids=ids).logits.shape)


def calls_back(f, x):
    return f(x) + 1


class AlwaysEqual:
    def __eq__(self, other):
        return True


def always_equal():
    return AlwaysEqual()


def forever():
    while True:
        pass


def prints(x):
    print("the test passed me", x)
    return 0


NAMESPACE = {
    name: value for name, value in globals().items() if callable(value) and not name.startswith("_")
}
NAMESPACE["CONSTANT"] = [1, 2, (3, 4)]


def _forge(kind: str) -> None:
    """Replace the student's side's answer to a call with a forged one."""

    def forged(self, head, request):
        if kind == "never":
            time.sleep(3600)
        if kind == "pickle":
            wire.send(
                self.sock, {"kind": "reply", "value": {"$": "pickle", "v": "gASVBQAAAAAAAAB9lC4="}}
            )
        elif kind == "huge":
            self.sock.sendall(wire.FRAME.pack(2, 10 * 2**30) + b"{}")
        elif kind == "lying-shape":
            from safetensors.torch import save

            blob = save({"t": torch.zeros(2)}).replace(
                b"[2]", b"[9]"
            )  # the header claims 9 floats, holds 2
            header = {
                "kind": "reply",
                "value": {"$": "tensor", "b": 0, "i": 0},
                "blobs": [["st", len(blob)]],
            }
            wire.send(self.sock, header, bytes(blob))
        elif kind == "deep":
            value = []
            for _ in range(values.MAX_DEPTH + 10):
                value = [value]
            wire.send(self.sock, {"kind": "reply", "value": value})

    student_side.Channel.call = forged


if __name__ == "__main__":
    sys.setrecursionlimit(10_000)
    if len(sys.argv) > 2:
        _forge(sys.argv[2])
    while True:
        student_side.serve(sys.argv[1], NAMESPACE)
