"""A tiny, real static embedding model built in the test: a word-level tokenizer and a table.

Words of one meaning share one axis (``certificate``, ``cert`` and ``tls`` all point along
axis 0), so a query finds a note by a synonym it does not contain.  The files are the layout
``vaultsync.search.embed`` reads from any Model2Vec model: ``tokenizer.json`` (Hugging Face
``tokenizers``) and ``model.safetensors`` (written here by hand: a JSON header, then bytes).
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np
from tokenizers import Tokenizer, models, normalizers, pre_tokenizers

MEANINGS: dict[str, tuple[str, ...]] = {
    "certificates": ("certificate", "certificates", "cert", "certs", "tls", "x509"),
    "money": ("invoice", "invoices", "billing", "payment", "payments", "money"),
    "holiday": ("vacation", "holiday", "leave", "away"),
    "database": ("postgres", "database", "sql", "db"),
    "speed": ("fast", "slow", "latency", "performance", "speed"),
    "filler": ("the", "a", "of", "and", "we", "how", "do", "is", "to", "notes"),
}
UNKNOWN = "[UNK]"


def build_model(folder: Path) -> Path:
    """Write the tiny model into ``folder`` (created) and return it."""
    folder.mkdir(parents=True, exist_ok=True)
    words = [UNKNOWN, *(w for group in MEANINGS.values() for w in group)]
    vocab = {word: index for index, word in enumerate(words)}
    tokenizer = Tokenizer(models.WordLevel(vocab=vocab, unk_token=UNKNOWN))
    tokenizer.normalizer = normalizers.Lowercase()
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.save(str(folder / "tokenizer.json"))
    table = np.zeros((len(words), len(MEANINGS)), dtype=np.float32)
    weights = np.ones(len(words), dtype=np.float32)
    for axis, group in enumerate(MEANINGS.values()):
        for word in group:
            table[vocab[word], axis] = 1.0
            if group is MEANINGS["filler"]:
                weights[vocab[word]] = 0.05  # like Model2Vec's low weights of common words
    write_safetensors(folder / "model.safetensors", {"embeddings": table, "weights": weights})
    return folder


def write_safetensors(path: Path, tensors: dict[str, np.ndarray]) -> None:
    """A ``.safetensors`` file of float32 tensors."""
    header: dict[str, object] = {}
    blobs: list[bytes] = []
    offset = 0
    for name, array in tensors.items():
        data = np.ascontiguousarray(array, dtype="<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(array.shape),
                        "data_offsets": [offset, offset + len(data)]}  # fmt: skip
        blobs.append(data)
        offset += len(data)
    raw = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + b"".join(blobs))
