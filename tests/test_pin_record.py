"""The installed Ragas against its distribution's RECORD (``ragas_compat.pin.record``): the pin hashes the
audited files only, and Ragas code elsewhere in the package runs too (a copy of Ragas first on PYTHONPATH whose
``__init__.py`` replaced the AP function went green as "the audited files identical to v0.4.3")."""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path

from ragas_compat.pin.record import check_record, record_clause


def _installed(site: Path, files: dict[str, str]) -> Path:
    """A package ``ragas`` under ``site`` with ``files`` and the RECORD an installer writes for them."""
    package = site / "ragas"
    rows = []
    for name, text in files.items():
        path = package / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        rows.append(f"ragas/{name},sha256={digest},{len(text)}")
    info = site / "ragas-0.4.3.dist-info"
    info.mkdir()
    rows += ["ragas/__pycache__/__init__.cpython-311.pyc,,", "ragas-0.4.3.dist-info/RECORD,,"]
    (info / "RECORD").write_text("\n".join(rows) + "\n", encoding="utf-8")
    return package


FILES = {"__init__.py": "VERSION = 1\n", "metrics/_context_precision.py": "EPS = 1e-10\n", "py.typed": ""}


def test_an_untouched_install_matches_its_record(tmp_path):
    check = check_record(_installed(tmp_path, FILES))
    assert check is not None and check.clean and check.files == 3
    assert record_clause(check) == "all 3 files the installed distribution records match its ragas-0.4.3.dist-info/RECORD"


def test_an_edited_added_or_removed_file_is_named(tmp_path):
    package = _installed(tmp_path, FILES)
    (package / "__init__.py").write_text("VERSION = 1\nimport ragas.metrics._context_precision as m; m.EPS = 0\n",
                                         encoding="utf-8")
    (package / "injected.py").write_text("x = 1\n", encoding="utf-8")
    (package / "py.typed").unlink()
    check = check_record(package)
    assert check is not None and not check.clean
    assert check.differ == ("ragas/__init__.py",) and check.missing == ("ragas/py.typed",)
    assert check.unrecorded == ("ragas/injected.py",)
    clause = record_clause(check)
    assert "1 of its 3 recorded files differ from its ragas-0.4.3.dist-info/RECORD (changed after the install): " \
           "ragas/__init__.py" in clause
    assert "1 recorded files are gone: ragas/py.typed" in clause and "1 .py files are not in its record" in clause


def test_a_file_replaced_by_a_link_to_a_device_is_a_difference_not_a_read(tmp_path):
    package = _installed(tmp_path, FILES)
    (package / "__init__.py").unlink()
    (package / "__init__.py").symlink_to("/dev/zero")
    check = check_record(package)
    assert check is not None and check.differ == ("ragas/__init__.py",)


def test_a_package_without_a_record_beside_it_is_said_unverified(tmp_path):
    package = tmp_path / "ragas"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    assert check_record(package) is None
    assert record_clause(None).startswith("the package's other files are not verified")


def test_the_pin_status_of_the_installed_ragas_says_what_its_record_shows():
    import importlib.util

    import pytest

    if importlib.util.find_spec("ragas") is None:
        pytest.skip("Ragas is not installed in this interpreter")
    from ragas_compat.pin.sources import resolve_installed

    status = resolve_installed().pin_status
    assert "files the installed distribution records match its ragas-" in status or "differ from its" in status
