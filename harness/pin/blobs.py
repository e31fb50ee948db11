"""Git blob ids: the SHA-1 git gives a file's content (``git hash-object --no-filters``).

blob id = SHA-1( b"blob " + str(len(content)).encode() + b"\\0" + content )

The bytes are hashed as they are on disk (no line-ending or clean filters), which equals
``git hash-object FILE`` wherever no such filter is configured (the usual case on Linux).
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

_BLOB_ID = re.compile(r"^[0-9a-f]{40}$")


def blob_id(content: bytes) -> str:
    """The git blob SHA-1 of ``content`` (40 lowercase hex digits)."""
    header = b"blob " + str(len(content)).encode("ascii") + b"\0"
    return hashlib.sha1(header + content).hexdigest()


def file_blob_id(path: str | Path) -> str:
    """The git blob SHA-1 of the file at ``path`` (its bytes as stored)."""
    return blob_id(Path(path).read_bytes())


def is_blob_id(text: object) -> bool:
    """True when ``text`` is a full lowercase 40-hex-digit SHA-1."""
    return isinstance(text, str) and bool(_BLOB_ID.match(text))


def blob_ids_under(root: str | Path, files: list[str] | tuple[str, ...]) -> dict[str, str | None]:
    """Blob ids of ``files`` (paths relative to ``root``); None for a file that is absent."""
    root = Path(root)
    result: dict[str, str | None] = {}
    for relative in files:
        candidate = root / relative
        result[relative] = file_blob_id(candidate) if candidate.is_file() else None
    return result
