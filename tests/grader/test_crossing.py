"""The calls between the tests' kernel and the student's kernel (bertlab_grader.crossing), without
nbgrader: what is read back without running code, what a call changes, and a student's side that
lies. (``test_hostile.py`` grades whole hostile submissions through the instructor's commands.)"""

from __future__ import annotations

import math
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch

from bertlab_grader.crossing import changes, proxies, received, sending, tests_side, values, wire

HERE = Path(__file__).resolve().parent


def third_party_imports(statement: str) -> list[str]:
    """The modules outside the standard library and the grader that ``statement`` (an import)
    loads, in a fresh interpreter without site-packages' own start-up (``-S``)."""
    code = (
        f"import sys; {statement}; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] not in sys.stdlib_module_names))"
    )
    loaded = subprocess.run(
        [sys.executable, "-S", "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": str(Path(__file__).resolve().parents[2])},
    ).stdout
    return [m for m in eval(loaded) if m.split(".")[0] != "bertlab_grader" and m != "__main__"]


def test_what_runs_in_a_students_kernel_imports_the_standard_library_only():
    """The student's kernel imports its side of the calls: that may pull in no third-party module
    (torch and numpy only where the kernel imported them itself)."""
    assert third_party_imports("import bertlab_grader.crossing.student_side") == []


def roundtrip(value):
    """``value`` encoded as the student's side does and read back as the tests' side does."""
    encoder = values.Encoder(keep=id)
    obj = encoder.encode(value)
    header, body = encoder.header_and_body({"value": obj})
    return values.Decoder(header, body, proxy=lambda entry: ("handle", entry["type"])).decode(
        header["value"]
    )


def test_plain_values_tensors_and_arrays_come_back_as_they_were():
    values = [
        None, True, 3, -(2**70), 1.5, "text", b"\x00bytes", (1, [2, {"k": (3,)}]), {1: "one", (2, 3): None},
        {4, 5}, frozenset({6}), range(1, 9, 2), slice(1, None, 2), Ellipsis, complex(1, -2),
        torch.float16, torch.device("cpu"), torch.Size([2, 3]), np.int64(7), np.float32(0.5),
    ]  # fmt: skip
    for value in values:
        assert roundtrip(value) == value and type(roundtrip(value)) is type(value), value
    assert math.isnan(roundtrip(float("nan"))) and roundtrip(float("-inf")) == float("-inf")
    for tensor in (torch.arange(6).reshape(2, 3), torch.rand(4) > 0.5, torch.randn(3, dtype=torch.bfloat16),
                   torch.randn(5, 4)[:, 1]):  # fmt: skip
        back = roundtrip(tensor)
        assert (
            type(back) is torch.Tensor and back.dtype == tensor.dtype and torch.equal(back, tensor)
        )
    assert roundtrip(torch.ones(2, requires_grad=True)).requires_grad
    array = np.arange(12, dtype=np.float32).reshape(3, 4)
    assert np.array_equal(roundtrip(array), array)


def test_anything_else_stays_in_the_students_kernel_as_a_handle():
    class Mine:
        pass

    assert roundtrip(Mine()) == ("handle", f"{__name__}.{Mine.__qualname__}")
    assert roundtrip(print)[0] == "handle"
    assert roundtrip(np.array([object()], dtype=object))[0] == "handle"  # never a pickled array
    # a subclass of a plain type comes back as the plain type, its lies left behind
    liar = type("Liar", (str,), {"__eq__": lambda self, other: True})("abc")
    assert type(roundtrip(liar)) is str and roundtrip(liar) != "xyz"


def _refused(header: dict, body: bytes = b"") -> str:
    with pytest.raises(wire.WireError) as refused:
        decoder = values.Decoder(header, body, proxy=lambda entry: entry)
        decoder.decode(header.get("value"))
    return str(refused.value)


def test_what_cannot_be_read_safely_is_refused():
    from safetensors.torch import save

    import io

    assert "no known kind" in _refused({"value": {"$": "pickle", "v": "gASV"}})
    assert "no known kind" in _refused({"value": {"not": "tagged"}})
    blob = save({"t": torch.zeros(2)}).replace(b"[2]", b"[9]")  # claims 9 floats, holds 2
    assert "cannot be read" in _refused(
        {"value": {"$": "tensor", "b": 0}, "blobs": [["st", len(blob)]]}, blob
    )
    assert "missing" in _refused({"value": {"$": "tensor", "b": 3}})
    assert "blobs of" in _refused({"value": None, "blobs": [["st", 10**9]]}, b"x")
    deep = []
    for _ in range(values.MAX_DEPTH + 5):
        deep = [deep]
    assert "nested" in _refused({"value": deep})
    assert "no dtype" in _refused({"value": {"$": "dtype", "v": "Tensor"}})
    buffer = io.BytesIO()
    np.save(
        buffer, np.array([{"a": 1}], dtype=object), allow_pickle=True
    )  # an array that unpickles
    npy = buffer.getvalue()
    assert "cannot be read" in _refused(
        {"value": {"$": "ndarray", "b": 0}, "blobs": [["npy", len(npy)]]}, npy
    )


def test_a_frame_over_its_cap_is_refused_unread_and_a_silent_peer_times_out():
    ours, theirs = socket.socketpair()
    theirs.sendall(wire.FRAME.pack(2, 10 * 2**30) + b"{}")
    with pytest.raises(wire.WireError, match="the cap is"):
        wire.receive(ours, max_body=2**20)
    ours, theirs = socket.socketpair()  # (a refused frame ends its connection)
    theirs.sendall(wire.FRAME.pack(5, 0) + b"[1,2]")
    with pytest.raises(wire.WireError, match="not a JSON object"):
        wire.receive(ours)
    started = time.monotonic()
    with pytest.raises(wire.WireError, match="no answer in time"):
        wire.receive(ours, deadline=time.monotonic() + 0.3)
    assert time.monotonic() - started < 2
    theirs.close()
    assert wire.receive(ours) is None  # a clean end


def _tiny_classifier():
    from transformers import BertConfig, BertForSequenceClassification

    torch.manual_seed(0)
    config = BertConfig(vocab_size=50, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=16, num_labels=3)  # fmt: skip
    return BertForSequenceClassification(config).eval()


def test_what_a_call_changes_is_written_into_the_tests_own_objects():
    """The student's side lists what changed in its copies; the tests' side writes it into the
    objects it passed (a model's weights, gradients, modes and configuration; an optimizer's and a
    scheduler's state; a generator; a dict), and refuses a tensor of another shape."""
    import copy
    import pickle

    from transformers import get_linear_schedule_with_warmup

    model = _tiny_classifier()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
    scheduler = get_linear_schedule_with_warmup(optimizer, 0, 10)
    generator = torch.Generator().manual_seed(3)
    batch = {"input_ids": torch.randint(5, 50, (2, 6)), "labels": torch.tensor([0, 2])}
    ours = (model, batch, optimizer, scheduler, generator)
    theirs = pickle.loads(pickle.dumps(ours))  # the student's copies
    received.track_steps(theirs[3])  # as the student's side marks a scheduler's optimizer
    followed = [(p, o, w) for p, o in changes.arguments(theirs, {}) if (w := changes.kind(o))]
    before = [changes.snapshot(o, w) for _, o, w in followed]
    m, b, o, s, g = theirs
    m.train()
    m(**b).loss.backward()
    o.step()
    s.step()
    torch.rand(3, generator=g)
    m.config.problem_type = "single_label_classification"
    b.pop("labels")
    found = [(p, changes.changed(obj, w, was)) for (p, obj, w), was in zip(followed, before)]
    for path, change in found:
        if change is not None:
            changes.write_back(changes.locate(list(ours), {}, path), copy.deepcopy(change))
    assert model.training and model.config.problem_type == "single_label_classification"
    assert all(torch.equal(a, c) for a, c in zip(model.parameters(), m.parameters()))
    assert all(torch.equal(a.grad, c.grad) for a, c in zip(model.parameters(), m.parameters()))
    assert (
        scheduler.last_epoch == 1
        and optimizer.state_dict()["state"].keys() == o.state_dict()["state"].keys()
    )
    assert torch.equal(generator.get_state(), g.get_state()) and sorted(batch) == ["input_ids"]
    grown = {"what": "tensor", "value": torch.zeros(3)}
    with pytest.raises(changes.WriteBackError, match="shape"):
        changes.write_back(torch.zeros(2), grown)


NAMES = sorted(["double", "add_one_in_place", "loss", "warns_and_draws", "raises", "step", "configure",
                "forward_shape", "calls_back", "always_equal", "forever", "prints", "CONSTANT", "absent",
                *(f"forged_{k}" for k in ("pickle", "huge", "lying_shape", "deep", "never"))])  # fmt: skip


@pytest.fixture(scope="module")
def student(tmp_path_factory):
    """A student's side serving ``crossing_student.NAMESPACE`` on a socket (one process for the
    module: it imports torch and transformers first)."""
    path = str(tmp_path_factory.mktemp("crossing") / "s")
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(HERE.parents[1]), os.environ.get("PYTHONPATH", "")]),
    }
    process = subprocess.Popen([sys.executable, str(HERE / "crossing_student.py"), path], env=env)
    for _ in range(600):  # until it serves
        if os.path.exists(path) or process.poll() is not None:
            break
        time.sleep(0.1)
    yield path
    process.kill()
    process.wait()


@pytest.fixture
def serving(student):
    """One test cell's connection to the student's side: its names bound, with a call time limit."""

    def start(call_timeout: float = 60.0):
        tests_side.start(student, call_timeout=call_timeout)
        namespace: dict = {}
        tests_side.bind(NAMES, namespace)
        return namespace

    yield start
    tests_side.end_cell()


def test_a_call_crosses_with_its_arguments_generators_warnings_and_errors(serving):
    import random
    import warnings

    ns = serving()
    assert "absent" not in ns and ns["CONSTANT"] == [1, 2, (3, 4)]
    assert isinstance(ns["double"], proxies.StudentFunction)
    assert torch.equal(ns["double"](torch.tensor([1.0, 2.0]), y=3), torch.tensor([5.0, 7.0]))
    mine = torch.zeros(3)
    assert ns["add_one_in_place"](mine) is None and torch.equal(mine, torch.ones(3))
    torch.manual_seed(0)
    random.seed(1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        drawn, number = ns["warns_and_draws"](3)
    torch.manual_seed(0)
    random.seed(1)
    assert (
        torch.equal(drawn, torch.rand(3)) and number == random.random()
    )  # the test's generators, both ways
    assert [str(w.message) for w in caught] == ["careful"] and caught[0].category is UserWarning
    with pytest.raises(ValueError, match="bad 5") as raised:
        ns["raises"](5)
    assert raised.value.bertlab_from_submission
    assert ns["calls_back"](lambda x: x * 10, 2) == 21  # a function of the test's, called back here


def test_a_loss_is_differentiable_across_and_a_training_step_comes_back(serving):
    from transformers import get_linear_schedule_with_warmup

    ns = serving()
    logits = torch.randn(2, 3, 5, requires_grad=True)
    labels = torch.randint(0, 5, (2, 3))
    value = ns["loss"](logits, labels)
    assert value.requires_grad
    (grad,) = torch.autograd.grad(value, logits)
    expected = F_cross_entropy(logits, labels)
    assert torch.allclose(grad, torch.autograd.grad(expected, logits)[0]) and torch.allclose(
        value, expected
    )
    model = _tiny_classifier()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    scheduler = get_linear_schedule_with_warmup(optimizer, 0, 4)
    before = [p.detach().clone() for p in model.parameters()]
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ns["step"](model, {"input_ids": torch.randint(5, 50, (2, 6)), "labels": torch.tensor([0, 2])}, optimizer,
                   scheduler)  # fmt: skip
    assert not [w for w in caught if "lr_scheduler" in str(w.message)], [
        str(w.message) for w in caught
    ]
    assert model.training and any(not torch.equal(a, b) for a, b in zip(before, model.parameters()))
    assert all(p.grad is None for p in model.parameters()) and scheduler.get_last_lr() == [0.375]
    ns["configure"](model, 7)
    assert model.config.decoder_start_token_id == 7


def F_cross_entropy(logits, labels):
    return torch.nn.functional.cross_entropy(
        logits.reshape(-1, logits.shape[-1]), labels.reshape(-1)
    )


def test_a_forward_hook_of_the_test_runs_here_and_a_large_model_is_sent_once(serving):
    from transformers import BertConfig, BertForMaskedLM

    ns = serving()
    model = BertForMaskedLM(BertConfig(vocab_size=30522, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                                       intermediate_size=16)).eval()  # fmt: skip
    seen = []
    handle = model.register_forward_hook(
        lambda m, a, k, out: seen.append(tuple(k["input_ids"].shape)), with_kwargs=True
    )
    ids = torch.tensor([[101, 7, 102]])
    assert ns["forward_shape"](model, ids) == (1, 3, 30522) and seen == [(1, 3)]
    assert ns["forward_shape"](model, ids) == (1, 3, 30522) and seen == [(1, 3), (1, 3)]
    assert len(sending._sent.entries) == 1  # sent once, then named by its token
    handle.remove()
    ns["forward_shape"](model, ids)
    assert seen == [(1, 3), (1, 3)]  # the hook is gone over there too


def test_an_answer_that_equals_anything_equals_nothing_here(serving):
    ns = serving()
    liar = ns["always_equal"]()
    assert isinstance(liar, proxies.StudentObject) and liar != 3 and not (liar == liar.__class__)
    with pytest.raises(TypeError):
        len(liar)


def test_a_call_that_never_returns_is_interrupted_and_the_next_call_works(serving):
    ns = serving(call_timeout=1.0)
    started = time.monotonic()
    with pytest.raises(TimeoutError, match="did not return"):
        ns["forever"]()
    assert time.monotonic() - started < 15
    assert ns["double"](1) == 3


@pytest.mark.parametrize(
    "trick, said",
    [
        ("pickle", "cannot be read"),
        ("huge", "cannot be read"),
        ("lying_shape", "cannot be read"),
        ("deep", "cannot be read"),
        ("never", "did not return"),
    ],
)
def test_a_forged_answer_fails_the_call_and_runs_nothing(serving, trick, said):
    ns = serving(call_timeout=2.0)
    with pytest.raises((proxies.SubmissionError, TimeoutError), match=said):
        ns[f"forged_{trick}"](1)
