"""Hostile writers of `matrix` and hostile text in matrix.md, and `run --format md`'s --out path.

- ``--cache-dir`` (a regular file, a FIFO, a read-only or full file system) and ``--lock-dir`` with
  ``--record-locks``: exit 2, one line naming the option, before any environment is built or probe run;
- a traceback file is never written into a folder that cannot take it (a full tmpfs): it goes to the next
  folder and leaves nothing behind;
- matrix.md rendered by markdown-it with raw HTML on: a hostile case id, suite name, column label, error
  message and warning add no element and break no table row;
- ``run --format md``: the --out path printed in the summary is escaped text.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from pathlib import Path

import pytest

from ragas_compat.cases import Suite, load_default_suite
from ragas_compat.cli import common
from ragas_compat.tools.matrix.drift import build_matrix
from ragas_compat.tools.matrix.environments import Environment
from ragas_compat.tools.matrix.report import render_markdown
from ragas_compat.tools.matrix.run import run_matrix

sys.path.insert(0, str(Path(__file__).parent))
from test_hostile_reports import _broken_rows, _rendered
from test_hostile_writers import full, one_line, read_only, run  # noqa: F401 (fixtures)
from test_matrix_drift import CASE, NEW, OLD, fake_probe, probe_output

CLI = [sys.executable, "-m", "ragas_compat"]
HOSTILE = ("<img src=x onerror=alert(1)>|<script>alert(2)</script>\r| x |\n<a href='javascript:alert(3)'>a</a>"
           "`code` *em* [l](javascript:alert(4)) {: onclick=alert(5)} ~~s~~\u2028<iframe src=//evil>")


# --------------------------------------------------------------------------- --cache-dir, --lock-dir
def matrix_argv(tmp_path: Path, *extra: str) -> list[str]:
    return [*CLI, "matrix", "--versions", "0.4.3", "--out", str(tmp_path / "matrix-out"), "--installer", "pip",
            "--timeout", "60", *extra]


def _hostile_folders(tmp_path: Path) -> dict[str, Path]:
    a_file = tmp_path / "cache-file"
    a_file.write_text("not a folder", encoding="utf-8")
    fifo = tmp_path / "cache-fifo"
    os.mkfifo(fifo)
    return {"file": a_file, "fifo": fifo, "under-a-file": a_file / "envs"}


@pytest.mark.parametrize("kind", ["file", "fifo", "under-a-file"])
def test_matrix_refuses_a_cache_dir_that_is_not_a_folder_before_any_work(tmp_path, kind):
    cache = _hostile_folders(tmp_path)[kind]
    proc = run(matrix_argv(tmp_path, "--cache-dir", str(cache)))
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "--cache-dir" in one_line(proc)
    assert not (tmp_path / "matrix-out").exists()


def test_matrix_refuses_read_only_and_full_cache_and_lock_dirs(tmp_path, read_only, full):  # noqa: F811
    for folder, reason in ((read_only, "read-only"), (full, "full")):
        proc = run(matrix_argv(tmp_path, "--cache-dir", str(folder / "envs")))
        assert proc.returncode == 2, proc.stderr[-2000:]
        line = one_line(proc)
        assert "--cache-dir" in line and reason in line
        proc = run(matrix_argv(tmp_path, "--cache-dir", str(tmp_path / "envs"), "--record-locks",
                               "--lock-dir", str(folder / "locks")))
        assert proc.returncode == 2, proc.stderr[-2000:]
        line = one_line(proc)
        assert "--lock-dir" in line and reason in line
        assert not (tmp_path / "envs").exists()  # refused before any environment
    assert sorted(os.listdir(full)) == ["filler"]


# --------------------------------------------------------------------------- traceback files
def test_a_traceback_is_not_cut_into_a_full_folder(full, monkeypatch):  # noqa: F811
    monkeypatch.setattr(common, "traceback_folder", lambda: full / "tracebacks")
    try:
        raise RuntimeError("a bug " + "x" * 300_000)  # more than the full tmpfs could take
    except RuntimeError as exc:
        saved = common.save_traceback(exc)
    assert not (full / "tracebacks").exists()
    assert sorted(os.listdir(full)) == ["filler"]  # nothing cut left behind
    assert Path(saved).is_file() and "a bug" in Path(saved).read_text(encoding="utf-8")
    Path(saved).unlink()


def test_a_traceback_folder_that_is_a_file_falls_back(tmp_path, monkeypatch):
    blocker = tmp_path / "tracebacks"
    blocker.write_text("a file", encoding="utf-8")
    monkeypatch.setattr(common, "traceback_folder", lambda: blocker)
    try:
        raise RuntimeError("a bug")
    except RuntimeError as exc:
        saved = common.save_traceback(exc)
    assert Path(saved).parent != blocker and Path(saved).is_file()
    assert blocker.read_text(encoding="utf-8") == "a file"
    Path(saved).unlink()


# --------------------------------------------------------------------------- matrix.md
def _matrix(case_id: str, text: str):
    full_suite = load_default_suite()
    case = full_suite.case(CASE)
    case = dataclasses.replace(case, id=case_id, raw={**case.raw, "id": case_id})
    suite = Suite(f"suite {text}", full_suite.source, (case,))

    def retarget(results):
        return [{**r, "case_id": case_id,
                 "warnings": [{"category": "UserWarning", "message": f"warned {text}"}] if r.get("warnings") else [],
                 "value": ({"error": {"type": "ValueError", "message": f"raised {text}"}}
                           if isinstance(r["value"], dict) and r["value"]["error"]["type"] == "ValueError"
                           else r["value"])} for r in results]

    envs = [Environment(f"checkout:{text}", "checkout", "0.2.15", "old", status="reused"),
            Environment("0.3.9", "release", "0.3.9", "new", status="built"),
            Environment("9.9.9", "release", "9.9.9", None, status="unavailable", error=f"no release {text}")]
    columns, _ = run_matrix(envs, suite, probe=fake_probe({"old": probe_output("0.2.15", retarget(OLD)),
                                                           "new": probe_output("0.3.9", retarget(NEW))}))
    return render_markdown(build_matrix(columns, {"name": suite.name, "source": suite.source, "cases": 1}))


def test_matrix_md_shows_no_attacker_element_and_keeps_every_row():
    text, reference = _matrix(HOSTILE, HOSTILE), _matrix("plain-case", "plain text")
    got, expected = _rendered(text), _rendered(reference)
    attacker = got.tags - expected.tags
    assert sum(attacker.values()) == 0, sorted(attacker.items())
    assert not any(tag in ("script", "img", "a", "iframe", "del") or any(a.startswith("on") for a in attrs)
                   for tag, attrs in got.tags), sorted(got.tags)
    assert got.tags[("tr", ())] == expected.tags[("tr", ())] and got.tags[("td", ())] == expected.tags[("td", ())]
    assert _broken_rows(text) == 0
    assert text.count("\n") == reference.count("\n")
    shown = "".join(got.text)
    assert "<script>alert(2)</script>" in shown  # the reader sees the text as written


# --------------------------------------------------------------------------- run --format md
def test_run_format_md_escapes_the_out_path(monkeypatch):
    from ragas_compat.cli import run as run_cli

    class NoRows:  # the audit's part summary_markdown reads besides the findings
        def counts(self, key):
            return {}

    monkeypatch.setattr(run_cli, "findings_markdown", lambda audit: [])
    out = Path("/tmp/<img src=x onerror=alert(1)>`|x")
    last = run_cli.summary_markdown(NoRows(), out)[-1]  # type: ignore[arg-type]
    assert last.startswith("Reports: ")
    rendered = _rendered(last)
    assert set(rendered.tags) == {("p", ())}, rendered.tags
    assert "<img src=x onerror=alert(1)>`|x/report.md" in "".join(rendered.text)
