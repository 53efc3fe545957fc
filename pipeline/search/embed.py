"""Text → unit vectors with a local static embedding model; edge (reads the model's files).

Contract:

* A model is a folder in Model2Vec's layout: ``tokenizer.json`` (Hugging Face ``tokenizers``),
  ``model.safetensors`` with ``embeddings`` (``[rows, dim]``, F32, F16 or I8) and optionally
  ``mapping`` (token id → row, Model2Vec's vocabulary quantisation) and ``weights`` (a weight
  per token id), and optionally ``config.json``.  A text's vector is the weighted mean of its
  tokens' rows (at most ``MAX_TOKENS``), scaled to unit length; a text without a known token is
  the zero vector.  Deterministic: the same model and text give the same bytes.
* ``load_embedder()`` loads ``$VAULTSYNC_EMBED_MODEL`` (a folder) when set, else the model the
  ``semantic`` extra installs (``tokenlearn-static-model``: 276k tokens → 10,000 rows × 64, int8,
  7 MB; README, "Search, and a local HTTP API").  Nothing is ever downloaded.
* Without numpy and ``tokenizers`` (the extra) or without a model, ``SemanticUnavailable``
  (exit 3) says how to enable it.

The model's name (``Embedder.name``: folder name and a hash of its files' sizes) keys the stored
vectors, so another model never mixes with vectors of the first.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
import struct
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from vaultsync.core.environment import read_environment
from vaultsync.core.errors import SemanticUnavailable
from vaultsync.search.model import Mode

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = [
    "ENABLE_HINT",
    "ENV_MODEL",
    "MAX_TOKENS",
    "Embedder",
    "TextEmbedder",
    "choose_mode",
    "default_model_dir",
    "load_embedder",
    "model_folder",
    "model_name",
    "read_safetensors",
    "semantic_installed",
]

ENV_MODEL = "VAULTSYNC_EMBED_MODEL"
ENABLE_HINT = "pip install 'vaultsync[semantic]' (or set VAULTSYNC_EMBED_MODEL to a model folder)"
MAX_TOKENS = 512

_UNK_TOKEN = re.compile(r'"unk_token"\s*:\s*"((?:[^"\\]|\\.)*)"')
_UNK_ID = re.compile(r'"unk_id"\s*:\s*(\d+)')
_DTYPES = {"F32": "<f4", "F16": "<f2", "I8": "i1", "I64": "<i8", "I32": "<i4", "U8": "u1"}


def read_safetensors(path: Path) -> dict[str, npt.NDArray[Any]]:
    """The tensors of a ``.safetensors`` file as numpy arrays (the format is a JSON header)."""
    import numpy as np  # noqa: PLC0415 - the extra's dependency, loaded on use

    raw = path.read_bytes()
    (size,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + size])
    body = memoryview(raw)[8 + size :]
    tensors: dict[str, npt.NDArray[Any]] = {}
    for name, spec in header.items():
        if name == "__metadata__":
            continue
        start, end = spec["data_offsets"]
        dtype = np.dtype(_DTYPES[spec["dtype"]])
        tensors[name] = np.frombuffer(body[start:end], dtype=dtype).reshape(spec["shape"])
    return tensors


class TextEmbedder(Protocol):
    """What the semantic index needs of a model: a name that keys its vectors, and ``embed``."""

    name: str
    dim: int

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """One unit float32 vector per text, ``[len(texts), dim]``."""
        ...


class Embedder:
    """A loaded static model: ``embed(texts)`` is a float32 ``[len(texts), dim]`` of unit rows.

    The tokenizer (most of the model's load time and memory) is loaded on the first ``embed``;
    ``embed_ids`` (ids told by ``pieces``) never loads it.
    """

    def __init__(self, folder: Path) -> None:
        import numpy as np  # noqa: PLC0415

        self.folder = folder
        tensors = read_safetensors(folder / "model.safetensors")
        table = tensors["embeddings"].astype(np.float32)
        if tensors["embeddings"].dtype == np.int8:
            table /= 127.0
        mapping = tensors.get("mapping")
        self.rows = (
            np.arange(table.shape[0], dtype=np.int64)
            if mapping is None
            else mapping.astype(np.int64)
        )
        weights = tensors.get("weights")
        self.weights = (
            np.ones(len(self.rows), dtype=np.float32)
            if weights is None
            else weights.astype(np.float32)
        )
        self.table = table
        self.dim = int(table.shape[1])
        self.name = model_name(folder)

    @functools.cached_property
    def spec(self) -> str:
        """The tokenizer's JSON text."""
        return (self.folder / "tokenizer.json").read_text(encoding="utf-8")

    @functools.cached_property
    def tokenizer(self) -> Any:
        """The ``tokenizers`` tokenizer, loaded on first use."""
        from tokenizers import Tokenizer  # noqa: PLC0415

        tokenizer = Tokenizer.from_str(self.spec)
        tokenizer.no_padding()
        tokenizer.enable_truncation(MAX_TOKENS)
        return tokenizer

    @functools.cached_property
    def unknown_id(self) -> int | None:
        """The unknown token's id (Model2Vec leaves it out of the mean), from the model part."""
        spec = self.spec
        model = spec[spec.find('"model"') :]
        token = _UNK_TOKEN.search(model)
        if token is not None:
            found = self.tokenizer.token_to_id(json.loads(f'"{token[1]}"'))
            return None if found is None else int(found)
        unk_id = _UNK_ID.search(model)
        return int(unk_id[1]) if unk_id is not None else None

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """One unit vector per text (zero for a text without a known token)."""
        encodings = self.tokenizer.encode_batch(list(texts), add_special_tokens=False)
        unknown = self.unknown_id
        return self.embed_ids([e.ids for e in encodings], skip=-1 if unknown is None else unknown)

    def embed_ids(self, texts: Sequence[Sequence[int]], *, skip: int) -> npt.NDArray[np.float32]:
        """One unit vector per list of token ids, leaving ``skip`` (the unknown token) out."""
        import numpy as np  # noqa: PLC0415

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for index, token_ids in enumerate(texts):
            ids = np.array(
                [i for i in token_ids if i != skip and i < len(self.rows)], dtype=np.int64
            )
            if not ids.size:
                continue
            weights = self.weights[ids]
            vector = (self.table[self.rows[ids]] * weights[:, None]).sum(axis=0)
            norm = float(np.linalg.norm(vector))
            if norm > 0:
                out[index] = vector / norm
        return out


def model_name(folder: Path) -> str:
    """The name that keys a model's vectors: its folder's name and its files' sizes, hashed.

    Cheap (two ``stat`` calls), so a caller can tell whether vectors are missing without
    loading the model.
    """
    digest = hashlib.sha256()
    for name in ("tokenizer.json", "model.safetensors"):
        digest.update(f"{name}:{(folder / name).stat().st_size};".encode())
    return f"{folder.name}-{digest.hexdigest()[:12]}"


def model_folder() -> Path | None:
    """``$VAULTSYNC_EMBED_MODEL``, else the extra's model folder, else None."""
    named = read_environment().embed_model
    return Path(named) if named else default_model_dir()


def default_model_dir() -> Path | None:
    """The folder of the model the ``semantic`` extra installs, or None."""
    from importlib.util import find_spec  # noqa: PLC0415

    spec = find_spec("static_model")  # tokenlearn-static-model; its own code is not loaded
    if spec is None or spec.origin is None:
        return None
    return Path(spec.origin).parent / "model"


def semantic_installed() -> bool:
    """Whether the extra's libraries and a model are there (the model is not loaded)."""
    try:
        import numpy  # noqa: F401, PLC0415
        import tokenizers  # noqa: F401, PLC0415
    except ImportError:
        return False
    return bool(read_environment().embed_model) or default_model_dir() is not None


def choose_mode(mode: str | None) -> tuple[Mode, TextEmbedder | None]:
    """The search mode (``None``: hybrid with the extra, else text) and the model it needs.

    Raises:
        SemanticUnavailable: ``semantic`` or ``hybrid`` asked for without the extra.
    """
    chosen: Mode = "text"
    if mode in ("semantic", "hybrid"):
        chosen = "semantic" if mode == "semantic" else "hybrid"
    elif mode is None and semantic_installed():
        chosen = "hybrid"
    return chosen, None if chosen == "text" else load_embedder()


def load_embedder() -> Embedder:
    """The model to embed with (see the module docstring); loaded once per process.

    Raises:
        SemanticUnavailable: the extra or the model is missing, or the model cannot be read.
    """
    try:
        import numpy  # noqa: F401, PLC0415
        import tokenizers  # noqa: F401, PLC0415
    except ImportError:
        raise SemanticUnavailable("semantic search is not installed", hint=ENABLE_HINT) from None
    folder = model_folder()
    if folder is None:
        raise SemanticUnavailable("no embedding model is installed", hint=ENABLE_HINT)
    return _load(folder.absolute())


@functools.lru_cache(maxsize=2)
def _load(folder: Path) -> Embedder:
    try:
        return Embedder(folder)
    except Exception as err:  # tokenizers raises bare Exception on a bad file
        raise SemanticUnavailable(
            f"{folder}: not a usable embedding model ({err})", hint=ENABLE_HINT
        ) from err
