"""The snapshot's format constants and identity, and how it compresses: DEFLATE, edge blobs with a dictionary.

One node's edges are a few dozen to a few hundred bytes of ``marshal`` data: too little for a compressor to
learn from, so each direction's blobs share a preset dictionary (32 KB taken from blobs sampled across the
graph, stored in the snapshot). That brings them to about a quarter of their size; a blob that would not
shrink stays as it is. The first byte of a blob says which it is.
"""

from __future__ import annotations

import hashlib
import sys
import zlib
from collections.abc import Sequence
from typing import Any

MAGIC = b"KGSNAP\r\n"
# 3: the graph's topology as arrays (vectorised Cypher); 4: the store's only copy, compressed; 5: a JSON header
# with its own CRC that names the payload's encoding and the Python that wrote it, ending in END_V5.
VERSION = 5
READABLE = (3, 4, 5)
END_V5 = b"KGSNAP5\n"
MARSHAL_VERSION = 4
# What the sections are encoded with. marshal's format may change between Python versions (its documentation
# promises nothing across them), so a snapshot records the Python that wrote it and is read only by the same one.
PAYLOAD = {"encoding": "marshal", "marshal_version": MARSHAL_VERSION,
           "python": "{}.{}".format(*sys.version_info[:2])}
NODE_CHUNK = 20_000

RAW, DEFLATE = b"\x00", b"\x01"
DICT_SIZE = 32_768  # DEFLATE's window: a longer dictionary is not used
_WBITS = -15  # raw DEFLATE: no zlib header or checksum per blob (the snapshot checks each blob's CRC itself)
_MIN = 48  # smaller blobs gain little and would cost a decompressor each time they are read
_LEVEL = 6


def train(samples: Sequence[bytes]) -> bytes:
    """A preset dictionary from sample blobs (the most useful bytes go last: DEFLATE reaches them soonest)."""
    return b"".join(samples)[-DICT_SIZE:]


class BlobCodec:
    """Encode and decode one direction's edge blobs with its dictionary."""

    def __init__(self, zdict: bytes) -> None:
        self.zdict = zdict
        self._primed = zlib.compressobj(_LEVEL, zlib.DEFLATED, _WBITS, zdict=zdict) if zdict else None

    def encode(self, data: bytes) -> bytes:
        if self._primed is not None and len(data) >= _MIN:
            c = self._primed.copy()  # a copy of a primed compressor: cheaper than loading the dictionary again
            packed = c.compress(data) + c.flush()
            if len(packed) < len(data):
                return DEFLATE + packed
        return RAW + data

    def decode(self, blob: bytes) -> bytes | memoryview:
        body = memoryview(blob)[1:]
        if blob[:1] == DEFLATE:
            return zlib.decompressobj(_WBITS, zdict=self.zdict).decompress(body)
        if blob[:1] != RAW:
            raise ValueError("unknown blob encoding")
        return body


def pack(data: bytes) -> bytes:
    """A whole section, compressed (read once, at open or on first use)."""
    return zlib.compress(data, _LEVEL)


def unpack(data: bytes) -> bytes:
    return zlib.decompress(data)


def identity(header: bytes, size: int) -> dict[str, Any]:
    """What names one snapshot's graph: its size and a digest of its header, which holds every section's CRC."""
    return {"size": size, "header": hashlib.blake2b(header, digest_size=16).hexdigest()}
