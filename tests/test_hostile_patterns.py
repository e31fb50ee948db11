"""Hostile patterns and versions: nothing a user types makes `run` spin or exit 4.

- an expectations rule's ``error_message`` outside the safe subset (``(.|.)*X`` kept `run` busy past
  100 s, ``.*.*X`` takes 22 s on 4,000 characters, ``a{4294967296}`` raised OverflowError: exit 4) is
  refused when the file is read: exit 2, one line naming the file and the rule;
- the patterns of the committed pin still load, and a safe pattern on a hostile message returns fast;
- a 5,000-digit ``--versions`` entry and ``HEAD@{99999}`` as a bisect ref: exit 2, one line.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import git
import pytest

from ragas_compat.compare.expectations import parse_expectations_text
from ragas_compat.compare.safe_pattern import MATCH_CHARS, UnsafePattern, compile_safe, search
from ragas_compat.errors import HarnessInputError
from ragas_compat.resources import pinned

CLI = [sys.executable, "-m", "ragas_compat"]
RULE = '[[rule]]\nid = "{id}"\nclassification = "error"\nreason = "r"\nwhen = {{ error_message = {pattern} }}\n'

HOSTILE = {
    "alternation-under-star": '"(.|.)*X"',
    "huge-count": '"a{4294967296}"',
    "count-over-bound": '"a{1001}"',
    "two-stars": '".*.*X"',
    "nested": '"(a+)+b"',
    "backreference": r"'(\w+)\1'",
    "deep": '"' + "(" * 5000 + ")" * 5000 + '"',
}


def one_line(proc: subprocess.CompletedProcess) -> str:
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in proc.stderr and "internal error" not in proc.stderr, proc.stderr
    return lines[0]


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_an_unsafe_error_message_pattern_is_refused_naming_file_and_rule(name):
    with pytest.raises(HarnessInputError) as err:
        parse_expectations_text(RULE.format(id=name, pattern=HOSTILE[name]), "mine.toml")
    assert f"mine.toml: rule[0] ({name}).when.error_message" in str(err.value)


def test_run_refuses_the_pattern_that_kept_it_busy_with_exit_2(tmp_path):
    expectations = tmp_path / "mine.toml"
    expectations.write_text(RULE.format(id="slow", pattern=HOSTILE["alternation-under-star"]), encoding="utf-8")
    started = time.monotonic()
    proc = subprocess.run([*CLI, "run", "--expectations", str(expectations), "--out", str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2, proc.stderr[-2000:]
    line = one_line(proc)
    assert "mine.toml" in line and "rule[0] (slow).when.error_message" in line
    assert time.monotonic() - started < 120


def test_the_pins_patterns_load_and_safe_patterns_stay_fast():
    text = pinned("expectations.toml").read_text(encoding="utf-8")
    patterns = re.findall(r'error_message = "([^"]+)"', text)
    assert patterns
    for pattern in patterns:
        compile_safe(pattern)
    message = "a" * 1_000_000  # a judge's text quoted in an error
    for pattern in ("foo.*X", r"\d{1,4}x?y", "(retrieved|reference)_context_ids"):
        started = time.perf_counter()
        assert not search(compile_safe(pattern), message)
        assert time.perf_counter() - started < 1.0, pattern
    assert search(compile_safe("needle"), "x" * (MATCH_CHARS - 6) + "needle")
    with pytest.raises(UnsafePattern):
        compile_safe("x" * 1001)


def test_a_5000_digit_version_is_exit_2(tmp_path):
    digits = "1" * 5000
    for versions in (digits, f"0.{digits}", f">=0.{digits}"):
        proc = subprocess.run([*CLI, "matrix", "--versions", versions, "--out", str(tmp_path / "m"),
                               "--cache-dir", str(tmp_path / "envs")], capture_output=True, text=True, timeout=120)
        assert proc.returncode == 2, proc.stderr[-2000:]
        assert "--versions" in one_line(proc)
    assert not (tmp_path / "envs").exists()


def test_a_reflog_index_out_of_range_is_exit_2(tmp_path):
    repo_dir = tmp_path / "ragas"
    repo = git.Repo.init(repo_dir)
    (repo_dir / "src" / "ragas").mkdir(parents=True)
    (repo_dir / "src" / "ragas" / "__init__.py").write_text('__version__ = "0.0.1"\n', encoding="utf-8")
    repo.index.add(["src/ragas/__init__.py"])
    author = git.Actor("t", "t@example.com")
    repo.index.commit("one", author=author, committer=author)
    repo.close()
    proc = subprocess.run([*CLI, "bisect", "--ragas-checkout", str(repo_dir), "--good", "HEAD@{99999}", "--bad", "HEAD",
                           "--case", "cp-worked-example", "--target", "legacy:LLMContextPrecisionWithReference"],
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, "GIT_TERMINAL_PROMPT": "0"})
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "--good 'HEAD@{99999}'" in one_line(proc)


def test_versions_in_pinned_files_stay_readable():
    from ragas_compat.tools.matrix.environments import parse_entries

    assert [e.text for e in parse_entries("0.2.15, >=0.3,<0.4")] == ["0.2.15", ">=0.3,<0.4"]
    assert Path(pinned("versions.toml")).is_file()
