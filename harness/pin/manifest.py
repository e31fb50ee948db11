"""The pin manifest (``pinned/pin.toml``): which Ragas commit is pinned, which files are audited,
and the git blob ids of those files at reference points where they were actually measured.

Loading validates everything and reports every problem at once (HarnessInputError with
``problems``). ``dump_manifest`` writes the same layout back (used by ``pin record``); the
output is re-parsed before it is returned, so a written manifest always loads.
"""

from __future__ import annotations

import datetime as _dt
import os
import re
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.version import InvalidVersion, Version

from ragas_compat.errors import HarnessInputError
from ragas_compat.input_limits import loads_toml, read_text
from ragas_compat.pin.blobs import is_blob_id
from ragas_compat.resources import pinned
from ragas_compat.toml_text import toml_block_list, toml_string

DEFAULT_MANIFEST_PATH = pinned("pin.toml")

REFERENCE_KINDS = ("tag", "commit", "wheel")
RELATIONS = ("after", "at", "before")
_COMMIT = re.compile(r"^[0-9a-f]{40}$")
_AUDITED_PREFIX = "src/ragas/"


@dataclass(frozen=True)
class Pin:
    """The pinned Ragas commit and where it sits relative to the nearest release."""

    commit: str
    repository: str
    former_repositories: tuple[str, ...]
    date: _dt.date
    nearest_release: str
    relation: str  # the pinned commit is "after" / "at" / "before" nearest_release

    @property
    def short(self) -> str:
        return self.commit[:7]

    @property
    def nearest_version(self) -> Version:
        return Version(self.nearest_release)

    def to_provenance(self) -> dict:
        return {"commit": self.commit, "repository": self.repository,
                "former_repositories": list(self.former_repositories), "date": self.date.isoformat(),
                "nearest_release": self.nearest_release, "relation": self.relation}


@dataclass(frozen=True)
class ReferencePoint:
    """Blob ids of audited files measured at one named point (a tag, a commit or a wheel).

    ``blobs`` maps an audited file to its blob id there; ``absent`` lists audited files
    measured to be missing there. A file in neither is unknown at this point.
    """

    name: str
    kind: str
    commit: str | None
    date: _dt.date | None
    source: str
    blobs: Mapping[str, str] = field(default_factory=dict)
    absent: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        """Name plus short commit, for messages."""
        return f"{self.name} ({self.commit[:7]})" if self.commit else self.name


@dataclass(frozen=True)
class Constraint:
    """One line of ``constraints.txt``: a requirement and the comment saying why."""

    requirement: Requirement
    reason: str
    line: int


@dataclass(frozen=True)
class PinManifest:
    """``target_modules`` maps a Ragas class as the probe scores it (``"legacy:Faithfulness"``,
    ``"collections:BleuScore"``; options do not change the code) to the audited files behind it:
    the module defining it, the modules of its Ragas base classes and, for a collections metric
    package, the modules beside it (its prompts). Every file named there is an audited file."""

    pin: Pin
    audited_files: tuple[str, ...]
    reference_points: tuple[ReferencePoint, ...]
    constraints_file: str = "constraints.txt"  # relative to the manifest's folder
    path: Path | None = None
    target_modules: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def reference_point(self, name: str) -> ReferencePoint | None:
        return next((rp for rp in self.reference_points if rp.name == name), None)

    def pin_reference_point(self) -> ReferencePoint | None:
        """The reference point measured at the pinned commit itself, if recorded."""
        return next((rp for rp in self.reference_points if rp.commit == self.pin.commit), None)

    @property
    def constraints_path(self) -> Path | None:
        return None if self.path is None else self.path.parent / self.constraints_file

    def to_provenance(self) -> dict:
        """The pin for a report: commit, repository, date, nearest release, audited files and
        which reference points are recorded (JSON-ready, no paths)."""
        pin_point = self.pin_reference_point()
        return {**self.pin.to_provenance(),
                "audited_files": list(self.audited_files),
                "audited_classes": len(self.target_modules),
                "reference_points": [point.name for point in self.reference_points],
                "pin_hashes_recorded": pin_point is not None}

    def with_reference_point(self, point: ReferencePoint) -> PinManifest:
        """A copy with ``point`` replacing the entry of the same name, or appended."""
        points = list(self.reference_points)
        for index, existing in enumerate(points):
            if existing.name == point.name:
                points[index] = point
                break
        else:
            points.append(point)
        return replace(self, reference_points=tuple(points))


# ---------------------------------------------------------------- loading and validation

def load_manifest(path: str | Path | None = None) -> PinManifest:
    """Read and validate the manifest at ``path`` (default: ``pinned/pin.toml``)."""
    manifest_path = Path(path) if path is not None else DEFAULT_MANIFEST_PATH
    try:  # a regular file within the input limits; not stdin: `pin record` writes the manifest back
        text = read_text(manifest_path, "pin manifest", source=str(manifest_path), allow_stdin=False)
    except HarnessInputError as exc:
        reason = str(exc).removeprefix(f"{manifest_path}: ")
        raise HarnessInputError(f"{manifest_path}: cannot read pin manifest ({reason})", field="path",
                                value=str(manifest_path)) from None
    return parse_manifest(text, origin=str(manifest_path), path=manifest_path)


load_pin = load_manifest  # the name the run uses


def parse_manifest(text: str, *, origin: str = "<pin manifest>", path: Path | None = None) -> PinManifest:
    """Parse and validate manifest TOML text; every problem is reported together."""
    data = loads_toml(text, origin, field="<toml>")
    problems: list[str] = []
    pin = _parse_pin(data.get("pin"), problems)
    audited, target_modules = _parse_audited(data.get("audited"), problems)
    points = _parse_reference_points(data.get("reference_points", []), audited, problems)
    constraints_file = _parse_environment(data.get("environment", {}), problems)
    for key in data:
        if key not in ("pin", "audited", "reference_points", "environment"):
            problems.append(f"{key}: unknown table")
    if problems:
        raise HarnessInputError(
            f"{origin}: invalid pin manifest ({len(problems)} problem{'s' * (len(problems) != 1)}): "
            + "; ".join(problems),
            field=problems[0].split(":", 1)[0], problems=[f"{origin}: {p}" for p in problems])
    assert pin is not None and audited is not None
    return PinManifest(pin=pin, audited_files=audited, reference_points=points,
                       constraints_file=constraints_file, path=path, target_modules=target_modules)


def _require(table: Mapping, key: str, where: str, kind: type | tuple, problems: list[str],
             *, optional: bool = False):
    if key not in table:
        if not optional:
            problems.append(f"{where}.{key}: missing")
        return None
    value = table[key]
    if not isinstance(value, kind) or (kind is _dt.date and isinstance(value, _dt.datetime)):
        expected = kind.__name__ if isinstance(kind, type) else "/".join(k.__name__ for k in kind)
        problems.append(f"{where}.{key}: expected {expected}, got {type(value).__name__} {value!r}")
        return None
    return value


def _check_commit(value: str | None, where: str, problems: list[str]) -> str | None:
    if value is not None and not _COMMIT.match(value):
        problems.append(f"{where}: expected a full 40-hex-digit lowercase commit id, got {value!r}")
        return None
    return value


def _parse_pin(table: object, problems: list[str]) -> Pin | None:
    if not isinstance(table, dict):
        problems.append("pin: missing table [pin]")
        return None
    before = len(problems)
    commit = _check_commit(_require(table, "commit", "pin", str, problems), "pin.commit", problems)
    repository = _require(table, "repository", "pin", str, problems)
    if repository is not None and not re.match(r"^(https?|git|ssh|file)://", repository):
        problems.append(f"pin.repository: expected a URL, got {repository!r}")
    former = _require(table, "former_repositories", "pin", list, problems, optional=True) or []
    if any(not isinstance(item, str) for item in former):
        problems.append("pin.former_repositories: expected a list of URL strings")
    date = _require(table, "date", "pin", _dt.date, problems)
    release = _require(table, "nearest_release", "pin", str, problems)
    if release is not None:
        try:
            Version(release)
        except InvalidVersion:
            problems.append(f"pin.nearest_release: not a PEP 440 version: {release!r}")
    relation = _require(table, "relation", "pin", str, problems)
    if relation is not None and relation not in RELATIONS:
        problems.append(f"pin.relation: expected one of {', '.join(RELATIONS)}, got {relation!r}")
    for key in table:
        if key not in ("commit", "repository", "former_repositories", "date", "nearest_release", "relation"):
            problems.append(f"pin.{key}: unknown key")
    if len(problems) > before:
        return None
    return Pin(commit=commit, repository=repository, former_repositories=tuple(former), date=date,
               nearest_release=release, relation=relation)


def _check_audited_path(value: object, where: str, problems: list[str]) -> bool:
    if not isinstance(value, str):
        problems.append(f"{where}: expected a path string, got {value!r}")
        return False
    parts = value.split("/")
    if (not value.startswith(_AUDITED_PREFIX) or not value.endswith(".py") or "\\" in value
            or any(part in ("", ".", "..") for part in parts)):
        problems.append(f"{where}: expected a repository-relative path like "
                        f"'src/ragas/metrics/base.py', got {value!r}")
        return False
    return True


_CLASS_KEY = re.compile(r"^(legacy|collections):[A-Za-z_][A-Za-z0-9_]*$")


def _parse_audited(table: object, problems: list[str]) -> tuple[tuple[str, ...] | None, dict[str, tuple[str, ...]]]:
    if not isinstance(table, dict):
        problems.append("audited: missing table [audited]")
        return None, {}
    files = _require(table, "files", "audited", list, problems)
    if files is None:
        return None, {}
    if not files:
        problems.append("audited.files: must list at least one file")
    valid = [f for i, f in enumerate(files) if _check_audited_path(f, f"audited.files[{i}]", problems)]
    duplicates = sorted({f for f in valid if valid.count(f) > 1})
    if duplicates:
        problems.append(f"audited.files: listed more than once: {', '.join(duplicates)}")
    targets: dict[str, tuple[str, ...]] = {}
    for key, modules in (_require(table, "targets", "audited", dict, problems, optional=True) or {}).items():
        where = f"audited.targets.{key!r}"
        if not _CLASS_KEY.match(key):
            problems.append(f"{where}: expected 'legacy:<Class>' or 'collections:<Class>'")
            continue
        if not isinstance(modules, list) or not modules:
            problems.append(f"{where}: expected a non-empty list of audited files")
            continue
        checked = [m for m in modules if _check_audited_path(m, f"{where} item", problems)]
        missing = [m for m in checked if m not in valid]
        if missing:
            problems.append(f"{where}: not in audited.files: {', '.join(missing)}")
        targets[key] = tuple(checked)
    for key in table:
        if key not in ("files", "targets"):
            problems.append(f"audited.{key}: unknown key")
    return tuple(valid), targets


def _parse_reference_points(items: object, audited: tuple[str, ...] | None,
                            problems: list[str]) -> tuple[ReferencePoint, ...]:
    if not isinstance(items, list):
        problems.append("reference_points: expected an array of tables [[reference_points]]")
        return ()
    points: list[ReferencePoint] = []
    seen: set[str] = set()
    for index, item in enumerate(items):
        where = f"reference_points[{index}]"
        if not isinstance(item, dict):
            problems.append(f"{where}: expected a table")
            continue
        before = len(problems)
        name = _require(item, "name", where, str, problems)
        if name is not None:
            if not name.strip():
                problems.append(f"{where}.name: must not be empty")
            elif name in seen:
                problems.append(f"{where}.name: duplicate reference point name {name!r}")
            seen.add(name)
        kind = _require(item, "kind", where, str, problems)
        if kind is not None and kind not in REFERENCE_KINDS:
            problems.append(f"{where}.kind: expected one of {', '.join(REFERENCE_KINDS)}, got {kind!r}")
        commit_required = kind in ("tag", "commit")
        commit = _check_commit(_require(item, "commit", where, str, problems, optional=not commit_required),
                               f"{where}.commit", problems)
        date = _require(item, "date", where, _dt.date, problems, optional=not commit_required)
        source = _require(item, "source", where, str, problems)
        blobs = _require(item, "blobs", where, dict, problems, optional=True) or {}
        for file, blob in blobs.items():
            if _check_audited_path(file, f"{where}.blobs key", problems):
                if audited is not None and file not in audited:
                    problems.append(f"{where}.blobs: {file!r} is not an audited file")
            if not is_blob_id(blob):
                problems.append(f"{where}.blobs.{file!r}: expected a 40-hex-digit git blob id, got {blob!r}")
        absent = _require(item, "absent", where, list, problems, optional=True) or []
        for file in absent:
            if _check_audited_path(file, f"{where}.absent item", problems) and file in blobs:
                problems.append(f"{where}.absent: {file!r} also has a blob id")
        for key in item:
            if key not in ("name", "kind", "commit", "date", "source", "blobs", "absent"):
                problems.append(f"{where}.{key}: unknown key")
        if len(problems) == before:
            points.append(ReferencePoint(name=name, kind=kind, commit=commit, date=date, source=source,
                                         blobs=dict(blobs), absent=tuple(absent)))
    return tuple(points)


def _parse_environment(table: object, problems: list[str]) -> str:
    if not isinstance(table, dict):
        problems.append("environment: expected a table")
        return "constraints.txt"
    value = _require(table, "constraints", "environment", str, problems, optional=True)
    for key in table:
        if key != "constraints":
            problems.append(f"environment.{key}: unknown key")
    return value or "constraints.txt"


# ---------------------------------------------------------------- constraints.txt

def load_constraints(path: str | Path) -> list[Constraint]:
    """Parse a pip constraints file: one requirement per line, ``# why`` after it."""
    constraints_path = Path(path)
    try:
        lines = read_text(constraints_path, "constraints file", source=str(constraints_path),
                          allow_stdin=False).splitlines()
    except HarnessInputError as exc:
        reason = str(exc).removeprefix(f"{constraints_path}: ")
        raise HarnessInputError(f"{constraints_path}: cannot read constraints ({reason})", field="path",
                                value=str(constraints_path)) from None
    result: list[Constraint] = []
    problems: list[str] = []
    for number, raw in enumerate(lines, start=1):
        text, _, comment = raw.partition("#")
        text = text.strip()
        if not text:
            continue
        try:
            requirement = Requirement(text)
        except InvalidRequirement as exc:
            problems.append(f"{constraints_path}:{number}: not a requirement: {text!r} ({exc})")
            continue
        result.append(Constraint(requirement=requirement, reason=comment.strip(), line=number))
    if problems:
        raise HarnessInputError(problems[0], field=f"line {problems[0].split(':')[1]}", problems=problems)
    return result


# ---------------------------------------------------------------- writing

_HEADER = """\
# The Ragas pin of ragas-compat (read by harness/pin/manifest.py; `ragas-compat pin record` rewrites it).
# [pin]: the pinned commit and its place relative to the nearest release.
# [audited]: the Ragas source files whose semantics the harness audits (paths relative to the repository root);
#   [audited.targets]: the files behind each Ragas class a registered target scores (measured on the installed
#   Ragas by `python -m ragas_compat.pin.modules --write`; tests/test_provenance_coverage.py checks coverage).
# [[reference_points]]: git blob SHA-1s (`git hash-object`) of audited files, measured at a tag, a commit or
#   a wheel; `source` says how. Only measured hashes appear here; a file not listed is unknown there.
"""


def dump_manifest(manifest: PinManifest) -> str:
    """The manifest as TOML text in the canonical layout (round-trips through parse_manifest)."""
    pin = manifest.pin
    lines = [_HEADER, "[pin]",
             f"commit = {toml_string(pin.commit)}",
             f"repository = {toml_string(pin.repository)}",
             f"former_repositories = [{', '.join(toml_string(r) for r in pin.former_repositories)}]",
             f"date = {pin.date.isoformat()}",
             f"nearest_release = {toml_string(pin.nearest_release)}",
             f"relation = {toml_string(pin.relation)}",
             "",
             "[environment]",
             f"constraints = {toml_string(manifest.constraints_file)}",
             "",
             "[audited]",
             f"files = {toml_block_list(manifest.audited_files)}"]
    if manifest.target_modules:
        lines += ["", "[audited.targets]"]
        lines += [f"{toml_string(key)} = [{', '.join(toml_string(m) for m in modules)}]"
                  for key, modules in sorted(manifest.target_modules.items())]
    for point in manifest.reference_points:
        lines += ["", "[[reference_points]]", f"name = {toml_string(point.name)}",
                  f"kind = {toml_string(point.kind)}"]
        if point.commit is not None:
            lines.append(f"commit = {toml_string(point.commit)}")
        if point.date is not None:
            lines.append(f"date = {point.date.isoformat()}")
        lines.append(f"source = {toml_string(point.source)}")
        if point.absent:
            lines.append(f"absent = {toml_block_list(point.absent)}")
        if point.blobs:
            lines.append("[reference_points.blobs]")
            ordered = [f for f in manifest.audited_files if f in point.blobs]
            lines += [f"{toml_string(f)} = {toml_string(point.blobs[f])}" for f in ordered]
    text = "\n".join(lines) + "\n"
    reparsed = parse_manifest(text, origin="<dumped manifest>", path=manifest.path)
    if replace(reparsed, path=None) != replace(manifest, path=None):
        raise AssertionError("pin manifest did not round-trip through TOML")  # a bug in this module
    return text


def write_manifest(manifest: PinManifest, path: str | Path | None = None) -> Path:
    """Write ``manifest`` atomically to ``path`` (default: where it was loaded from)."""
    target = Path(path) if path is not None else manifest.path
    if target is None:
        raise HarnessInputError("no path to write the pin manifest to", field="path")
    text = dump_manifest(manifest)
    handle, temporary = tempfile.mkstemp(prefix=".pin-", suffix=".toml", dir=target.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return target
