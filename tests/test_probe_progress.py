"""The probe's progress counts (harness/probe/__main__.py ``Progress``) as the host reads them
(``StartedProbe.progress``): written as a symbolic link renamed into place, read from a link or a file."""

from __future__ import annotations

import os
from pathlib import Path

from ragas_compat.probe.__main__ import Progress, progress_prefix
from ragas_compat.runner import StartedProbe


def test_the_host_sums_the_counts_written_as_links_and_as_plain_files(tmp_path):
    probe = StartedProbe(python=str(tmp_path / "no-such-python"))  # never starts: its folder is enough here
    try:
        assert probe.process is None and probe.folder is not None
        prefix = progress_prefix(str(probe.request_path))
        first = Progress(prefix, "0", 5)
        first.write()
        assert os.path.islink(first.path) and probe.progress() == (0, 5)
        for _ in range(3):
            first.step()
        first.write()  # written again over the link: the count now, never the one before
        assert probe.progress() == (3, 5)
        Path(f"{prefix}1.txt").write_text("2 0", encoding="utf-8")  # where links cannot be made: a file
        Path(f"{prefix}2.txt").write_text("half", encoding="utf-8")  # not a count: skipped
        assert probe.progress() == (5, 5)
        first.done = 5
        first.finish()  # at its total: nothing new to write
        assert os.readlink(first.path) == "3 5"
        first.done = 4
        first.finish()
        assert os.readlink(first.path) == "4 5" and not os.path.lexists(first.path + ".partial")
        assert probe.progress() == (6, 5)
    finally:
        probe.close()
