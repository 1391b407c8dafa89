"""What the student's side sends, written and read back without running code.

:class:`Encoder` (in the student's kernel) writes plain values as JSON, tensors as safetensors,
numpy arrays as ``.npy`` without pickles and every other object as a *handle* (a number: the object
stays in the student's kernel); :class:`Decoder` (in the tests' kernel) reads them back with a cap
on their nesting and their items, and refuses anything else with a
:class:`bertlab_grader.crossing.wire.WireError`. A subclass of a plain type (a ``str`` whose ``==``
lies, a tensor type that answers ``torch.equal`` itself) is written as the plain value: its lies
stay behind.

The standard library at import; torch, numpy and safetensors when a tensor or an array crosses.
"""

from __future__ import annotations

import io
import math
import sys

from bertlab_grader.crossing.wire import WireError

#: Nesting a value may have (a list in a list ...): deeper is refused, on both sides.
MAX_DEPTH = 64


#: Values one message may hold (the items of every list, tuple and dict counted).
MAX_ITEMS = 5_000_000


#: numpy scalar types that may cross (as their dtype names).
NUMPY_SCALARS = frozenset(
    "bool int8 int16 int32 int64 uint8 uint16 uint32 uint64 float16 float32 float64 complex64 "
    "complex128 str".split()
)


def qualified_name(obj) -> str:
    """``module.qualname`` of an object's type (of the object, for a type or a function)."""
    kind = (
        obj
        if isinstance(obj, type) or callable(obj) and hasattr(obj, "__qualname__")
        else type(obj)
    )
    return f"{getattr(kind, '__module__', '?')}.{getattr(kind, '__qualname__', '?')}"


class Encoder:
    """Encodes values for the tests' kernel (runs in the student's kernel). ``keep(obj)`` gives an
    object that is not plain data a handle; every tensor encoded is listed in :attr:`tensors`
    (the index its JSON names), for the backward passes that cross back."""

    def __init__(self, keep):
        self.keep = keep
        self.blobs: list[tuple[str, bytes]] = []
        self.tensors: list = []

    def blob(self, kind: str, data: bytes) -> int:
        self.blobs.append((kind, data))
        return len(self.blobs) - 1

    def header_and_body(self, header: dict) -> tuple[dict, bytes]:
        header = {**header, "blobs": [[kind, len(data)] for kind, data in self.blobs]}
        return header, b"".join(data for _, data in self.blobs)

    def handle(self, value) -> dict:
        return {
            "$": "handle",
            "id": self.keep(value),
            "type": qualified_name(value),
            "callable": callable(value),
        }

    def encode(self, value, depth: int = 0):
        if depth > MAX_DEPTH:
            raise ValueError(
                f"a value nested more than {MAX_DEPTH} deep (a list that holds itself?)"
            )
        if value is None or value is True or value is False:
            return value
        if isinstance(value, bool):  # a subclass of bool cannot exist; kept for clarity
            return bool(value)
        if isinstance(value, int):
            return int.__index__(value)
        if isinstance(value, float):
            number = float.__float__(value)
            if math.isfinite(number):
                return number
            return {"$": "float", "v": repr(number)}  # nan, inf, -inf
        if isinstance(value, str):
            return str.__str__(value)
        if isinstance(value, (bytes, bytearray)):
            return {"$": "bytes", "b": self.blob("bytes", bytes(value))}
        if isinstance(value, complex):
            return {"$": "complex", "v": [value.real, value.imag]}
        if isinstance(value, list):
            return [self.encode(v, depth + 1) for v in list.__iter__(value)]
        if isinstance(value, tuple):
            torch = sys.modules.get("torch")
            if torch is not None and isinstance(value, torch.Size):
                return {"$": "size", "v": [int(d) for d in tuple.__iter__(value)]}
            return {"$": "tuple", "v": [self.encode(v, depth + 1) for v in tuple.__iter__(value)]}
        if isinstance(value, (set, frozenset)):
            kind = "frozenset" if isinstance(value, frozenset) else "set"
            return {"$": kind, "v": [self.encode(v, depth + 1) for v in list(value)]}
        if type(value).__name__ in {"dict", "OrderedDict", "defaultdict"} and isinstance(
            value, dict
        ):
            items = [
                [self.encode(k, depth + 1), self.encode(v, depth + 1)] for k, v in dict.items(value)
            ]
            return {"$": "dict", "v": items}
        if isinstance(value, range):
            return {"$": "range", "v": [value.start, value.stop, value.step]}
        if isinstance(value, slice):
            return {
                "$": "slice",
                "v": [self.encode(p, depth + 1) for p in (value.start, value.stop, value.step)],
            }
        if value is Ellipsis:
            return {"$": "ellipsis"}
        return self._library(value, depth)

    def _library(self, value, depth: int):
        """torch's and numpy's values; a handle for anything else."""
        torch = sys.modules.get("torch")
        if torch is not None:
            if isinstance(value, torch.Tensor):
                return self._tensor(torch, value)
            if isinstance(value, torch.dtype):
                return {"$": "dtype", "v": str(value).removeprefix("torch.")}
            if isinstance(value, torch.device):
                return {"$": "device", "v": str(value)}
        numpy = sys.modules.get("numpy")
        if numpy is not None:
            if isinstance(value, numpy.ndarray) and value.dtype.kind in "biufcSU":
                buffer = io.BytesIO()
                numpy.save(
                    buffer, numpy.ascontiguousarray(numpy.asarray(value)), allow_pickle=False
                )
                return {"$": "ndarray", "b": self.blob("npy", buffer.getvalue())}
            if isinstance(value, numpy.generic) and value.dtype.name in NUMPY_SCALARS:
                return {
                    "$": "npscalar",
                    "dtype": value.dtype.name,
                    "v": self.encode(value.item(), depth + 1),
                }
        return self.handle(value)

    def _tensor(self, torch, value) -> dict:
        tensor = value.as_subclass(torch.Tensor) if type(value) is not torch.Tensor else value
        if (
            tensor.layout is not torch.strided
            or tensor.is_quantized
            or tensor.device.type == "meta"
        ):
            return self.handle(value)
        from safetensors.torch import save

        data = tensor.detach().cpu().contiguous()
        if data.is_conj():
            data = data.resolve_conj()
        self.tensors.append(value)
        return {
            "$": "tensor",
            "b": self.blob("st", save({"t": data})),
            "i": len(self.tensors) - 1,
            "grad": bool(value.requires_grad),
        }


# --- the tests' side: JSON and blobs back to values ------------------------------------------------


class Decoder:
    """Reads what :class:`Encoder` wrote (runs in the tests' kernel): plain values, tensors from
    safetensors, arrays from ``.npy`` (no pickles), handles through ``proxy(entry)``. Nothing the
    student's side sent is evaluated or unpickled; anything unexpected is a :class:`WireError`."""

    def __init__(self, header: dict, body: bytes, proxy):
        self.proxy = proxy
        self.items = 0
        self.tensors: dict[int, object] = {}  # the Encoder's tensor index -> the tensor read
        self.blobs: list[tuple[str, memoryview]] = []
        view, at = memoryview(body), 0
        for entry in header.get("blobs") or []:
            if not (
                isinstance(entry, list)
                and len(entry) == 2
                and isinstance(entry[1], int)
                and entry[1] >= 0
            ):
                raise WireError("a malformed list of blobs")
            self.blobs.append((str(entry[0]), view[at : at + entry[1]]))
            at += entry[1]
        if at != len(body):
            raise WireError(f"blobs of {at:,} bytes in a body of {len(body):,}")

    def _blob(self, index, kind: str) -> memoryview:
        if (
            not isinstance(index, int)
            or not 0 <= index < len(self.blobs)
            or self.blobs[index][0] != kind
        ):
            raise WireError(f"a reference to a missing {kind} blob")
        return self.blobs[index][1]

    def decode(self, value, depth: int = 0):
        self.items += 1
        if depth > MAX_DEPTH:
            raise WireError(f"a value nested more than {MAX_DEPTH} deep")
        if self.items > MAX_ITEMS:
            raise WireError(f"more than {MAX_ITEMS:,} values in one message")
        if value is None or isinstance(value, (bool, int, float, str)):
            return value
        if isinstance(value, list):
            return [self.decode(v, depth + 1) for v in value]
        if not isinstance(value, dict) or not isinstance(value.get("$"), str):
            raise WireError("a value of no known kind")
        kind, inner = value["$"], value.get("v")
        if kind in {"tuple", "set", "frozenset"}:
            items = [self.decode(v, depth + 1) for v in self._list(inner)]
            try:
                return {"tuple": tuple, "set": set, "frozenset": frozenset}[kind](items)
            except TypeError:
                raise WireError(f"a {kind} of unhashable values") from None
        if kind == "dict":
            found = {}
            for pair in self._list(inner):
                if not isinstance(pair, list) or len(pair) != 2:
                    raise WireError("a malformed dict")
                key = self.decode(pair[0], depth + 1)
                try:
                    found[key] = self.decode(pair[1], depth + 1)
                except TypeError:
                    raise WireError("a dict with an unhashable key") from None
            return found
        if kind == "float" and inner in {"nan", "inf", "-inf"}:
            return float(inner)
        if kind == "complex":
            real, imag = self._list(inner, 2)
            return complex(float(real), float(imag))
        if kind == "bytes":
            return bytes(self._blob(value.get("b"), "bytes"))
        if kind == "range":
            return range(*(self._int(v) for v in self._list(inner, 3)))
        if kind == "slice":
            return slice(*(self.decode(v, depth + 1) for v in self._list(inner, 3)))
        if kind == "ellipsis":
            return Ellipsis
        if kind == "handle":
            if not isinstance(value.get("id"), int) or not isinstance(value.get("type"), str):
                raise WireError("a malformed handle")
            return self.proxy(value)
        return self._library(kind, value, inner, depth)

    def _list(self, value, length: int | None = None) -> list:
        if not isinstance(value, list) or (length is not None and len(value) != length):
            raise WireError("a malformed value")
        return value

    def _int(self, value) -> int:
        if not isinstance(value, int) or isinstance(value, bool):
            raise WireError("a malformed number")
        return value

    def _library(self, kind: str, value: dict, inner, depth: int):
        import torch

        if kind == "tensor":
            from safetensors import SafetensorError
            from safetensors.torch import load

            try:
                loaded = load(bytes(self._blob(value.get("b"), "st")))
            except (SafetensorError, ValueError, RuntimeError, OverflowError) as exc:
                raise WireError(f"a tensor that cannot be read ({exc})") from None
            if set(loaded) != {"t"}:
                raise WireError("a malformed tensor")
            tensor = loaded["t"]
            if value.get("grad") is True and (tensor.is_floating_point() or tensor.is_complex()):
                tensor.requires_grad_(True)
            index = value.get("i")
            if isinstance(index, int):
                self.tensors[index] = tensor
            return tensor
        if kind == "dtype":
            dtype = getattr(torch, str(inner), None)
            if not isinstance(dtype, torch.dtype):
                raise WireError(f"no dtype torch.{inner}")
            return dtype
        if kind == "device":
            try:
                return torch.device(str(inner))
            except (RuntimeError, ValueError):
                raise WireError("a malformed device") from None
        if kind == "size":
            return torch.Size([self._int(v) for v in self._list(inner)])
        import numpy

        if kind == "ndarray":
            try:
                return numpy.load(io.BytesIO(self._blob(value.get("b"), "npy")), allow_pickle=False)
            except (ValueError, OSError, EOFError) as exc:
                raise WireError(f"an array that cannot be read ({exc})") from None
        if kind == "npscalar" and value.get("dtype") in NUMPY_SCALARS:
            scalar = self.decode(value.get("v"), depth + 1)
            try:
                return numpy.dtype(value["dtype"]).type(scalar)
            except (TypeError, ValueError, OverflowError):
                raise WireError("a malformed numpy scalar") from None
        raise WireError(f"a value of no known kind ({kind[:40]!r})")
