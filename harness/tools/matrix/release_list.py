"""The matrix's default version list, derived from Ragas's release history.

The default list is: the oldest release of the range (its changes are unknown: the release before it
is outside the range), the last patch of every minor (``0.1.22``, ``0.2.15``, ...), and every release
whose audited files changed relative to the previous release (by version order, not upload date).
Pre-releases never count. The history (one entry per release: date, commit, the audited files changed
since the previous release) is recorded in ``pinned/release-history.toml`` (its audited files derived from
Ragas's git history by ``release_history.py``); the list it yields is
committed as ``default_versions`` in ``pinned/versions.toml``, and a test keeps the two equal.

Pure functions over data, plus the loader of the history file.
"""

from __future__ import annotations

import datetime
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from packaging.version import InvalidVersion, Version

from ragas_compat.errors import HarnessInputError
from ragas_compat.input_limits import read_toml, source_name
from ragas_compat.resources import pinned

DEFAULT_HISTORY_FILE = pinned("release-history.toml")


@dataclass(frozen=True)
class Release:
    """One final release: its version, upload date, and the audited files changed since the previous
    release (``None``: unknown, as for the oldest release of the range)."""

    version: Version
    date: datetime.date
    changed: tuple[str, ...] | None = None


def final_releases(versions: Iterable[str | Version], first: str | Version, last: str | Version) -> list[Version]:
    """The final (non-pre-release, non-dev) releases from ``first`` to ``last`` inclusive, sorted, unique.
    Texts that are not PEP 440 versions are skipped."""
    low, high = Version(str(first)), Version(str(last))
    found = set()
    for text in versions:
        try:
            version = Version(str(text))
        except (InvalidVersion, ValueError):  # ValueError: a number of more than 4,300 digits
            continue
        if not (version.is_prerelease or version.is_devrelease) and low <= version <= high:
            found.add(version)
    return sorted(found)


def last_patches(versions: Iterable[Version]) -> list[Version]:
    """The newest final release of every ``major.minor`` among ``versions``, sorted."""
    newest: dict[tuple[int, int], Version] = {}
    for version in versions:
        if version.is_prerelease or version.is_devrelease:
            continue
        key = (version.major, version.minor)
        if key not in newest or version > newest[key]:
            newest[key] = version
    return sorted(newest.values())


def changed_files(previous: Mapping[str, str], current: Mapping[str, str]) -> tuple[str, ...]:
    """Paths whose git blob id differs between two releases' ``{path: blob}`` maps (added, removed or
    modified), sorted."""
    return tuple(sorted(path for path in set(previous) | set(current) if previous.get(path) != current.get(path)))


def audited_changes(release: Release, audited: Collection[str] | None = None) -> tuple[str, ...] | None:
    """The release's changed files that are audited (all of them when ``audited`` is None);
    None when its changes are unknown."""
    if release.changed is None:
        return None
    return tuple(path for path in release.changed if audited is None or path in audited)


def default_versions(releases: Sequence[Release], audited: Collection[str] | None = None) -> list[Version]:
    """Oldest release + last patch of every minor + releases with an audited change (or unknown
    changes), sorted and unique. ``audited`` narrows which changed paths count (None: every path
    recorded in ``changed``)."""
    if not releases:
        return []
    ordered = sorted(releases, key=lambda r: r.version)
    chosen = {ordered[0].version, *last_patches(r.version for r in ordered)}
    for release in ordered:
        changes = audited_changes(release, audited)
        if changes is None or changes:
            chosen.add(release.version)
    return sorted(chosen)


# ---------------------------------------------------------------- pinned/release-history.toml

@dataclass(frozen=True)
class ReleaseHistory:
    """The parsed history file: the range, the audited paths that select the default list, the releases."""

    first: Version
    last: Version
    audited: tuple[str, ...]
    releases: tuple[Release, ...]

    def default_versions(self) -> list[Version]:
        return default_versions(self.releases, self.audited)


def _version(value: object, where: str) -> Version:
    try:
        if isinstance(value, str):
            return Version(value)
    except (InvalidVersion, ValueError):  # ValueError: a number of more than 4,300 digits
        pass
    raise HarnessInputError(f"{where}: {value!r} is not a PEP 440 version", field=where, value=value)


def _paths(value: object, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(p, str) and p for p in value):
        raise HarnessInputError(f"{where}: expected a list of paths", field=where, value=value)
    return tuple(value)


def load_release_history(path: Path = DEFAULT_HISTORY_FILE) -> ReleaseHistory:
    """Read ``pinned/release-history.toml``; bad entries raise HarnessInputError naming the field."""
    data = read_toml(path, "release history", field="release-history")
    name = source_name(path)
    span = data.get("range")
    if not isinstance(span, dict):
        raise HarnessInputError(f"{name}: range: expected a table with first and last", field="range", value=span)
    first, last = _version(span.get("first"), f"{name}: range.first"), _version(span.get("last"), f"{name}: range.last")
    audited_table = data.get("audited")
    if not isinstance(audited_table, dict):
        raise HarnessInputError(f"{name}: audited: expected a table", field="audited", value=audited_table)
    audited = _paths(audited_table.get("default_list"), f"{name}: audited.default_list")
    table = data.get("release")
    if not isinstance(table, list) or not table:
        raise HarnessInputError(f"{name}: release: expected [[release]] tables", field="release", value=table)
    releases: list[Release] = []
    for index, entry in enumerate(table):
        where = f"{name}: release[{index}]"
        if not isinstance(entry, dict):
            raise HarnessInputError(f"{where}: expected a table", field=where, value=entry)
        version = _version(entry.get("version"), f"{where}.version")
        date = entry.get("date")
        if not isinstance(date, datetime.date) or isinstance(date, datetime.datetime):
            raise HarnessInputError(f"{where}.date: expected a TOML date (2024-10-03)", field=f"{where}.date",
                                    value=date)
        changed = _paths(entry["changed"], f"{where}.changed") if "changed" in entry else None
        releases.append(Release(version, date, changed))
    versions = [r.version for r in releases]
    if versions != sorted(set(versions)):
        raise HarnessInputError(f"{name}: release: versions must be unique and in ascending order",
                                field="release", value=[str(v) for v in versions])
    if final_releases(versions, first, last) != versions:
        raise HarnessInputError(f"{name}: release: every release must be a final release from {first} to {last}",
                                field="release", value=[str(v) for v in versions])
    return ReleaseHistory(first, last, audited, tuple(releases))


def load_default_versions(path: Path) -> list[str]:
    """The ``default_versions`` list of a versions file (``pinned/versions.toml``); empty when absent."""
    data = read_toml(path, "versions file", field="versions")
    value = data.get("default_versions", [])
    where = f"{source_name(path)}: default_versions"
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise HarnessInputError(f"{where}: expected a list of release strings", field="default_versions", value=value)
    for text in value:
        _version(text, where)
    return list(value)
