"""The console entry starts the audit's probe before the command line loads (harness/launch.py),
only for ``run`` on the installed Ragas, with the options it names; ``run`` takes it when they agree."""

from __future__ import annotations

import sys

import pytest

from harness.launch import early_probe_options
from harness.runner import start_early_probe, take_early_probe


@pytest.mark.parametrize("argv, expected", [
    (["run"], {"python": sys.executable, "timeout": 600.0}),
    (["run", "--python", "/x/python", "--timeout=30"], {"python": "/x/python", "timeout": 30.0}),
    (["run", "--python=/y/python", "--cases", "c.json"], {"python": "/y/python", "timeout": 600.0}),
    (["run", "--ragas-checkout", "/src/ragas"], None),
    (["run", "--ragas-git=https://example.invalid/r.git"], None),
    (["run", "--help"], None),
    (["run", "--timeout", "soon"], None),
    (["run", "--timeout", "-1"], None),
    (["explain", "id-recall"], None),
    ([], None),
])
def test_early_probe_options_follow_the_command_line(argv, expected):
    assert early_probe_options(argv) == expected


def test_run_takes_the_early_probe_only_when_its_options_agree():
    start_early_probe(python=sys.executable, timeout=120.0)
    assert take_early_probe(python=sys.executable, timeout=60.0) is None  # another timeout: closed
    assert take_early_probe(python=sys.executable, timeout=120.0) is None  # and gone
    start_early_probe(python=sys.executable, timeout=120.0)
    probe = take_early_probe(python=sys.executable, timeout=120.0)
    assert probe is not None
    with probe:
        assert probe.located()["found"] is True
