"""Record ``pinned/release-history.toml`` from a Ragas git directory: the audited files of every release,
their count and the ones changed since the previous release, derived instead of kept by hand.

    python -m ragas_compat.tools.matrix.release_history --git-dir RAGAS_GIT_DIR [--check] \
        [--wheel 0.1.22=ragas-0.1.22-py3-none-any.whl]

The releases themselves (versions, upload dates, which one has no tag) are read from the history file
being rewritten: dates come from PyPI, not git. For each release with a tag ``v<version>`` the recorder
lists the tag's tree (``git ls-tree -r``), normalises ``ragas/src/ragas/`` (0.3.0, 0.3.1) to
``src/ragas/``, and takes the audited files as the file's header defines them:

* the legacy module of every registered target (``spec.ragas.legacy_module``: ``ragas.metrics._string``
  is ``src/ragas/metrics/_string.py``), when the release has it;
* ``src/ragas/metrics/base.py``, ``src/ragas/dataset_schema.py``, ``src/ragas/evaluation.py``,
  ``src/ragas/metrics/collections/base.py``, when present;
* every file under ``src/ragas/metrics/collections/`` that defines (``class Name`` at the top level) a
  registered collections class, and, when it lives in a subpackage of ``collections/``, every ``.py``
  file of that subpackage.

``changed`` is the audited files whose blob id differs from the previous release's (added, removed or
modified). A release without a tag (0.1.22, a wheel) is read from the wheel when ``--wheel
VERSION=PATH`` gives it (blob ids as ``git hash-object`` computes them); without it its files are taken
as the previous release's, which the header records they equal. The file is rewritten in its canonical
layout: the header comment, ``[range]`` and ``[audited].default_list`` are kept as they are.

``--check`` writes nothing: it exits 1 and prints a unified diff when the file differs from the
derivation. Reads git with ``git --git-dir`` (a bare repository without config is enough).
"""

from __future__ import annotations

import argparse
import datetime
import difflib
import hashlib
import re
import subprocess
import sys
import tomllib
import zipfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ragas_compat.errors import HarnessInputError
from ragas_compat.tools.matrix.release_list import DEFAULT_HISTORY_FILE, changed_files

CORE_FILES = ("src/ragas/metrics/base.py", "src/ragas/dataset_schema.py", "src/ragas/evaluation.py",
              "src/ragas/metrics/collections/base.py")
COLLECTIONS_DIR = "src/ragas/metrics/collections/"
# 0.3.0 and 0.3.1 kept the package under ragas/src/ragas/ (a monorepo with experimental/)
NESTED_PREFIX = "ragas/src/ragas/"
COMMAND = "python -m ragas_compat.tools.matrix.release_history --git-dir RAGAS_GIT_DIR"


@dataclass(frozen=True)
class Driven:
    """What the probe drives, as the audited file set needs it: dotted legacy modules and collections
    class names."""

    legacy_modules: frozenset[str]
    collections_classes: frozenset[str]


def driven_from_registry() -> Driven:
    """The legacy modules and collections classes of every registered target."""
    from ragas_compat.metrics.registry import all_metrics

    targets = [spec.ragas for spec in all_metrics() if spec.ragas is not None]
    return Driven(frozenset(t.legacy_module for t in targets if t.legacy_module),
                  frozenset(name for t in targets for name in t.collections))


def module_path(module: str) -> str:
    """``ragas.metrics._string`` -> ``src/ragas/metrics/_string.py``."""
    return "src/" + module.replace(".", "/") + ".py"


def normalise(path: str) -> str:
    return "src/ragas/" + path[len(NESTED_PREFIX):] if path.startswith(NESTED_PREFIX) else path


def blob_id(data: bytes) -> str:
    """The git blob id of ``data`` (what ``git hash-object`` prints)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()  # git's object id, not a security use


def defined_classes(source: str) -> set[str]:
    """Names of the top-level classes a Python source defines."""
    return set(re.findall(r"^class\s+([A-Za-z_]\w*)", source, flags=re.MULTILINE))


def audited_blobs(tree: Mapping[str, str], read: Callable[[str], str], driven: Driven) -> dict[str, str]:
    """The audited ``{path: blob}`` of one release's tree (``{normalised path: blob}``); ``read`` gives a
    blob's text (only collections files are read)."""
    wanted = {*CORE_FILES, *(module_path(m) for m in driven.legacy_modules)}
    for path, blob in tree.items():
        if not (path.startswith(COLLECTIONS_DIR) and path.endswith(".py")):
            continue
        if not defined_classes(read(blob)) & driven.collections_classes:
            continue
        wanted.add(path)
        package = PurePosixPath(path).parent
        if str(package) + "/" != COLLECTIONS_DIR:
            wanted.update(p for p in tree if p.endswith(".py") and PurePosixPath(p).is_relative_to(package))
    return {path: tree[path] for path in sorted(wanted) if path in tree}


class GitDir:
    """A Ragas git directory read with ``git --git-dir`` (no work tree, no config needed)."""

    def __init__(self, git_dir: Path) -> None:
        self.git_dir = Path(git_dir)
        self._texts: dict[str, str] = {}
        if not self.git_dir.is_dir():
            raise HarnessInputError(f"--git-dir {self.git_dir}: no such directory", field="--git-dir",
                                    value=str(self.git_dir))

    def _git(self, *args: str, data: bytes | None = None) -> bytes:
        done = subprocess.run(["git", f"--git-dir={self.git_dir}", *args], input=data, capture_output=True,
                              check=False)
        if done.returncode:
            raise HarnessInputError(f"git {' '.join(args)} in {self.git_dir}: "
                                    f"{done.stderr.decode(errors='replace').strip()}", field="--git-dir",
                                    value=str(self.git_dir))
        return done.stdout

    def has_tag(self, tag: str) -> bool:
        done = subprocess.run(["git", f"--git-dir={self.git_dir}", "rev-parse", "--verify", "--quiet",
                               f"refs/tags/{tag}"], capture_output=True, check=False)
        return done.returncode == 0

    def commit(self, tag: str) -> str:
        return self._git("rev-parse", f"refs/tags/{tag}^{{commit}}").decode().strip()

    def tree(self, rev: str) -> dict[str, str]:
        """``{normalised path: blob}`` of every file of ``rev``."""
        found: dict[str, str] = {}
        for line in self._git("ls-tree", "-r", "-z", rev).split(b"\0"):
            if not line:
                continue
            meta, path = line.decode().split("\t", 1)
            _mode, kind, blob = meta.split()
            if kind == "blob":
                found[normalise(path)] = blob
        return found

    def text(self, blob: str) -> str:
        if blob not in self._texts:
            self._texts[blob] = self._git("cat-file", "blob", blob).decode("utf-8", errors="replace")
        return self._texts[blob]


def wheel_tree(path: Path) -> tuple[dict[str, str], dict[str, str]]:
    """A Ragas wheel's files as ``({src/ragas/... : blob}, {blob: text})``."""
    tree: dict[str, str] = {}
    texts: dict[str, str] = {}
    with zipfile.ZipFile(path) as wheel:
        for name in wheel.namelist():
            if name.startswith("ragas/") and not name.endswith("/"):
                data = wheel.read(name)
                blob = blob_id(data)
                tree["src/" + name] = blob
                texts[blob] = data.decode("utf-8", errors="replace")
    return tree, texts


# ---------------------------------------------------------------- the file

@dataclass(frozen=True)
class Entry:
    """One ``[[release]]`` table."""

    version: str
    date: datetime.date
    source: str
    audited_files: int
    changed: tuple[str, ...] | None
    commit: str | None = None
    note: str | None = None


@dataclass(frozen=True)
class HistoryFile:
    header: str                   # the comment lines before [range], kept verbatim
    first: str
    last: str
    default_list: tuple[str, ...]
    entries: tuple[Entry, ...]


def read_history(path: Path) -> HistoryFile:
    text = path.read_text(encoding="utf-8")
    marker = text.find("\n[range]")
    header = text[:marker + 1] if marker >= 0 else ""
    data = tomllib.loads(text)
    entries = tuple(Entry(version=e["version"], date=e["date"], source=e["source"],
                          audited_files=e["audited_files"],
                          changed=tuple(e["changed"]) if "changed" in e else None,
                          commit=e.get("commit"), note=e.get("note"))
                    for e in data["release"])
    return HistoryFile(header, data["range"]["first"], data["range"]["last"],
                       tuple(data["audited"]["default_list"]), entries)


def _quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _path_list(paths: Sequence[str]) -> list[str]:
    if not paths:
        return ["[]"]
    return ["[", *(f"    {_quoted(p)}," for p in paths), "]"]


def render(history: HistoryFile) -> str:
    """The file in its canonical layout."""
    lines = [history.header.rstrip("\n"), "", "[range]", f"first = {_quoted(history.first)}",
             f"last = {_quoted(history.last)}", "", "[audited]"]
    default = _path_list(history.default_list)
    lines.append("default_list = " + default[0])
    lines.extend(default[1:])
    for entry in history.entries:
        lines += ["", "[[release]]", f"version = {_quoted(entry.version)}", f"date = {entry.date.isoformat()}"]
        if entry.commit is not None:
            lines.append(f"commit = {_quoted(entry.commit)}")
        lines.append(f"source = {_quoted(entry.source)}")
        if entry.note is not None:
            lines.append(f"note = {_quoted(entry.note)}")
        lines.append(f"audited_files = {entry.audited_files}")
        if entry.changed is not None:
            changed = _path_list(entry.changed)
            lines.append("changed = " + changed[0])
            lines.extend(changed[1:])
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- the derivation

def derive(history: HistoryFile, git: GitDir, driven: Driven, wheels: Mapping[str, Path] | None = None,
           log: Callable[[str], None] = lambda _line: None) -> HistoryFile:
    """The history with every entry's commit, audited_files and changed derived from ``git`` (and
    ``wheels``: version -> wheel path, for releases without a tag)."""
    wheels = dict(wheels or {})
    entries: list[Entry] = []
    previous: dict[str, str] | None = None
    previous_tag: str | None = None
    for entry in history.entries:
        tag = f"v{entry.version}"
        if entry.commit is not None or git.has_tag(tag):
            commit = git.commit(tag)
            tree = git.tree(commit)
            current = audited_blobs(tree, git.text, driven)
            entries.append(Entry(entry.version, entry.date, f"tag {tag}", len(current),
                                 None if previous is None else changed_files(previous, current), commit))
            previous, previous_tag = current, tag
            continue
        if previous is None:
            raise HarnessInputError(f"release {entry.version}: no tag {tag} and no earlier release to take its "
                                    "files from", field="release", value=entry.version)
        note = (f"no git tag: its audited files are {previous_tag}'s, which the wheel's equal (checked with "
                f"--wheel {entry.version}=PATH)")
        if entry.version in wheels:
            wheel = wheels.pop(entry.version)
            tree, texts = wheel_tree(wheel)
            current = audited_blobs(tree, texts.__getitem__, driven)
            differing = changed_files(previous, current)
            log(f"{entry.version}: read from {wheel.name}; audited files differing from {previous_tag}: "
                f"{', '.join(differing) or 'none'}")
            if differing:
                note = f"no git tag: its audited files were read from the wheel {wheel.name}"
        else:
            current = dict(previous)
            log(f"{entry.version}: no tag; its audited files taken as {previous_tag}'s (pass --wheel "
                f"{entry.version}=PATH to read them from the wheel)")
        derived = Entry(entry.version, entry.date, entry.source, len(current), changed_files(previous, current),
                        None, note)
        if (derived.audited_files, derived.changed) != (entry.audited_files, entry.changed):
            log(f"{entry.version}: recorded audited_files={entry.audited_files} changed={list(entry.changed or ())}"
                f", derived {derived.audited_files} {list(derived.changed or ())}")
        entries.append(derived)
        previous = current
    if wheels:
        raise HarnessInputError(f"--wheel {', '.join(wheels)}: no release without a tag has that version",
                                field="--wheel", value=sorted(wheels))
    return HistoryFile(history.header, history.first, history.last, history.default_list, tuple(entries))


def _wheels(values: Iterable[str]) -> dict[str, Path]:
    found: dict[str, Path] = {}
    for value in values:
        version, sep, path = value.partition("=")
        if not sep or not Path(path).is_file():
            raise HarnessInputError(f"--wheel {value!r}: expected VERSION=PATH of a wheel file", field="--wheel",
                                    value=value)
        found[version] = Path(path)
    return found


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ragas_compat.tools.matrix.release_history",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--git-dir", type=Path, required=True, help="a Ragas git directory (bare is fine)")
    parser.add_argument("--history", type=Path, default=DEFAULT_HISTORY_FILE, help="the file to rewrite")
    parser.add_argument("--wheel", action="append", default=[], metavar="VERSION=PATH",
                        help="read a release without a tag from its wheel")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 with a diff if it differs")
    args = parser.parse_args(argv)
    try:
        history = read_history(args.history)
        derived = render(derive(history, GitDir(args.git_dir), driven_from_registry(), _wheels(args.wheel),
                                log=lambda line: print(line, file=sys.stderr)))
    except HarnessInputError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    current = args.history.read_text(encoding="utf-8")
    if derived == current:
        print(f"{args.history}: up to date")
        return 0
    if args.check:
        sys.stdout.writelines(difflib.unified_diff(current.splitlines(keepends=True), derived.splitlines(keepends=True),
                                                   str(args.history), "derived"))
        return 1
    args.history.write_text(derived, encoding="utf-8")
    print(f"{args.history}: rewritten")
    return 0


if __name__ == "__main__":
    sys.exit(main())
