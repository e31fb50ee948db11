"""The installed package against its distribution's own record of it (``RECORD``, PEP 376/627).

The pin compares the audited files (the modules behind the registered targets) with its reference points;
code elsewhere in the package runs too (``ragas/__init__.py`` can replace a metric's function). For an
installed Ragas, the wheel's installer wrote the SHA-256 of every file it put in the package into
``ragas-<version>.dist-info/RECORD`` beside it: ``check_record`` hashes every such file again and lists
the package's ``.py`` files the record does not name. That finds a file edited or added after the
install; it says nothing of a wheel built from other code (the record came with it). A package with no
distribution record beside it (a copy or a checkout put first on ``sys.path``) cannot be checked this way,
and ``record_clause`` says so.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import io
from dataclasses import dataclass
from pathlib import Path

from ragas_compat.input_limits import Limits, read_text

SHOWN = 5  # files named in the clause; the rest counted


@dataclass(frozen=True)
class RecordCheck:
    """What ``check_record`` found: the record's name, how many files it hashes, and the package's files
    that differ from it, that it names but are gone, and ``.py`` files it does not name."""

    record: str
    files: int
    differ: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()
    unrecorded: tuple[str, ...] = ()

    @property
    def clean(self) -> bool:
        return not (self.differ or self.missing or self.unrecorded)


def _digest(path: Path) -> str:
    """The RECORD form of a file's SHA-256: urlsafe base64 without padding."""
    hashed = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            hashed.update(chunk)
    return base64.urlsafe_b64encode(hashed.digest()).rstrip(b"=").decode("ascii")


def check_record(package: Path) -> RecordCheck | None:
    """``package`` (the imported ``ragas`` folder) against the ``RECORD`` of the ``ragas-*.dist-info`` beside
    it; None when there is none. Only regular files are hashed (a link to a device is a difference)."""
    records = sorted(p for p in package.parent.glob(f"{package.name}-*.dist-info/RECORD") if p.is_file())
    if not records:
        return None
    record = records[-1]
    text = read_text(record, "distribution record", source=str(record), allow_stdin=False, limits=Limits())
    prefix = package.name + "/"
    hashed = {row[0]: row[1].removeprefix("sha256=") for row in csv.reader(io.StringIO(text))
              if len(row) >= 2 and row[0].startswith(prefix) and row[1].startswith("sha256=")}
    differ, missing = [], []
    for name, digest in sorted(hashed.items()):
        path = package.parent / name
        if not path.exists():
            missing.append(name)
        elif not path.is_file() or _digest(path) != digest:
            differ.append(name)
    unrecorded = sorted(name for name in (f"{prefix}{p.relative_to(package).as_posix()}" for p in package.rglob("*.py"))
                        if name not in hashed)
    return RecordCheck(f"{record.parent.name}/RECORD", len(hashed), tuple(differ), tuple(missing), tuple(unrecorded))


def _listed(names: tuple[str, ...]) -> str:
    shown = ", ".join(names[:SHOWN])
    return shown + (f" and {len(names) - SHOWN} more" if len(names) > SHOWN else "")


def record_clause(check: RecordCheck | None) -> str:
    """The pin status's clause on the package's other files (``check_record``'s finding)."""
    if check is None:
        return ("the package's other files are not verified: no installed distribution's record lies beside it "
                "(a copy or a checkout first on sys.path?)")
    if check.clean:
        return f"all {check.files} files the installed distribution records match its {check.record}"
    parts = []
    if check.differ:
        parts.append(f"{len(check.differ)} of its {check.files} recorded files differ from its {check.record} "
                     f"(changed after the install): {_listed(check.differ)}")
    if check.missing:
        parts.append(f"{len(check.missing)} recorded files are gone: {_listed(check.missing)}")
    if check.unrecorded:
        parts.append(f"{len(check.unrecorded)} .py files are not in its record: {_listed(check.unrecorded)}")
    return "; ".join(parts)
