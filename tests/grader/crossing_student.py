"""A student's side for ``test_crossing.py``: functions a test calls across, served forever.

``python tests/grader/crossing_student.py SOCKET`` serves ``student_side.serve`` on ``SOCKET``
with the functions below in its namespace, as the grader has a student's kernel do before each
test cell (a plain process here, no kernel). The ``forged_*`` functions are answered by a
replaced part of the student's side, as a hostile submission's kernel could answer: what the
tests' side must refuse.
"""

from __future__ import annotations

import random
import signal
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


def forged_pickle(x):
    """Answered with a pickle (the forged answers below: the student's side replaced, as a hostile
    kernel may; see :func:`_answer`)."""


def forged_huge(x):
    """Answered with a frame that claims a body of 10 GB."""


def forged_lying_shape(x):
    """Answered with a tensor whose safetensors header claims 9 floats and holds 2."""


def forged_deep(x):
    """Answered with a list nested deeper than the cap."""


def forged_never(x):
    """Never answered."""


NAMESPACE = {
    name: value for name, value in globals().items() if callable(value) and not name.startswith("_")
}
NAMESPACE["CONSTANT"] = [1, 2, (3, 4)]
_honest_call = student_side.Channel.call


def _answer(self, head, request):
    """The student's side's answer to a call: honest, but forged for the forged_* functions."""
    kind = getattr(student_side._handles.get(head.get("id")), "__name__", "")
    if kind == "forged_never":
        time.sleep(3600)
    elif kind == "forged_pickle":
        wire.send(
            self.sock, {"kind": "reply", "value": {"$": "pickle", "v": "gASVBQAAAAAAAAB9lC4="}}
        )
    elif kind == "forged_huge":
        self.sock.sendall(wire.FRAME.pack(2, 10 * 2**30) + b"{}")
    elif kind == "forged_lying_shape":
        from safetensors.torch import save

        blob = save({"t": torch.zeros(2)}).replace(b"[2]", b"[9]")
        header = {
            "kind": "reply",
            "value": {"$": "tensor", "b": 0, "i": 0},
            "blobs": [["st", len(blob)]],
        }
        wire.send(self.sock, header, bytes(blob))
    elif kind == "forged_deep":
        value = []
        for _ in range(values.MAX_DEPTH + 10):
            value = [value]
        wire.send(self.sock, {"kind": "reply", "value": value})
    else:
        _honest_call(self, head, request)


student_side.Channel.call = _answer


if __name__ == "__main__":
    sys.setrecursionlimit(10_000)
    # as a kernel does while it runs a cell: an interrupt raises KeyboardInterrupt, even where
    # this process was started with SIGINT ignored
    signal.signal(signal.SIGINT, signal.default_int_handler)
    while True:
        student_side.serve(sys.argv[1], NAMESPACE)
