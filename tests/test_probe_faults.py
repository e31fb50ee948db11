"""Faults stay contained: each becomes a recorded run-level or per-result error."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from ragas_compat.runner import ProbeRun, run_probe

ONE_CASE = [{"id": "c", "category": "edge", "user_input": "q", "reference": "r", "response": "a",
             "retrieved_contexts": ["x"], "verdicts": {"context_precision_with_reference": [1]}}]


def test_ragas_import_failure_is_a_run_level_error(tmp_path: Path):
    broken = tmp_path / "ragas"
    broken.mkdir()
    (broken / "__init__.py").write_text('raise ImportError("this ragas is broken on purpose")\n')
    run = run_probe(ONE_CASE, sys_path_prefix=[str(tmp_path)])
    assert not run.ok
    assert run.error == "Ragas could not be imported: ImportError: this ragas is broken on purpose"
    assert run.output["results"] == [] and run.output["network_attempts"] == []


def _python_without_ragas() -> str | None:
    for candidate in ("/usr/bin/python3", "/usr/local/bin/python3", shutil.which("python3")):
        if not candidate or not Path(candidate).exists():
            continue
        found = subprocess.run([candidate, "-c", "import importlib.util as u; print(u.find_spec('ragas') is None)"],
                               capture_output=True, text=True)
        if found.stdout.strip() == "True":
            return candidate
    return None


def test_python_without_ragas_is_a_run_level_error():
    python = _python_without_ragas()
    if python is None:
        pytest.skip("no interpreter without Ragas on this machine")
    run = run_probe(ONE_CASE, python=python)
    assert not run.ok
    assert run.error == "Ragas could not be imported: ModuleNotFoundError: No module named 'ragas'"


def test_probe_crash_is_a_run_level_error(tmp_path: Path):
    # an empty stand-in Ragas keeps this fast; the crash happens after the import
    run = run_probe(ONE_CASE, targets=["selftest:abort"], sys_path_prefix=[_fake_ragas(tmp_path)])
    assert not run.ok and run.output == {}
    assert run.error.startswith("probe crashed (exit -6): ")  # SIGABRT
    assert "Fatal Python error: Aborted" in run.stderr


def test_probe_timeout_is_a_run_level_error():
    run = run_probe(ONE_CASE, timeout=0.5)  # importing Ragas alone takes seconds
    assert run == ProbeRun(False, "probe timed out after 0.5 s", {}, run.stderr, run.seconds)


@pytest.mark.slow
def test_unknown_target_is_a_rejected_request():
    run = run_probe(ONE_CASE, targets=["legacy:NoSuchMetric"])
    assert not run.ok and "unknown targets ['legacy:NoSuchMetric']" in run.error


def test_missing_interpreter_is_a_run_level_error(tmp_path: Path):
    run = run_probe(ONE_CASE, python=str(tmp_path / "no-python"))
    assert not run.ok and run.error.startswith("cannot start the probe")


def test_ragas_without_the_target_classes_gives_unavailable_results(tmp_path: Path):
    """A Ragas lacking a class yields a TargetUnavailable record per (case, target), not a crash."""
    fake = tmp_path / "ragas"
    (fake / "metrics").mkdir(parents=True)
    (fake / "__init__.py").write_text('__version__ = "0.0.0+fake"\n')
    (fake / "metrics" / "__init__.py").write_text("")
    run = run_probe(ONE_CASE, sys_path_prefix=[str(tmp_path)],
                    targets=["legacy:LLMContextPrecisionWithReference", "legacy:Faithfulness"])
    assert run.ok, run.error
    assert run.output["ragas"]["version"] == "0.0.0+fake"
    [result] = run.output["results"]  # Faithfulness does not apply: no faithfulness verdicts
    assert result["target"] == "legacy:LLMContextPrecisionWithReference" and result["ragas_class"] is None
    assert result["value"]["error"]["type"] == "TargetUnavailable"
    assert "LLMContextPrecisionWithReference" in result["value"]["error"]["message"]


def _fake_ragas(tmp_path: Path) -> str:
    (tmp_path / "ragas" / "metrics").mkdir(parents=True)
    (tmp_path / "ragas" / "__init__.py").write_text("")
    (tmp_path / "ragas" / "metrics" / "__init__.py").write_text("")
    return str(tmp_path)


def test_an_error_the_probes_own_code_raised_is_marked_as_the_harnesss():
    from ragas_compat.probe import scoring as probe_scoring
    from ragas_compat.probe.protocol import PROBE_DIR

    def raise_from(filename: str) -> BaseException:
        try:
            exec(compile("raise AttributeError('no such prompt')", filename, "exec"))
        except AttributeError as exc:
            return exc
        raise AssertionError("did not raise")

    assert probe_scoring.raised_by_probe(raise_from(f"{PROBE_DIR}/judge/scripts.py"))
    assert probe_scoring.raised_by_probe(raise_from(f"{PROBE_DIR}/scoring.py"))
    assert not probe_scoring.raised_by_probe(raise_from(f"{PROBE_DIR}-other/scoring.py"))
    assert not probe_scoring.raised_by_probe(raise_from("/site-packages/ragas/metrics/_faithfulness.py"))


def test_a_timeout_while_scoring_says_how_far_the_probe_got_and_what_to_do():
    from ragas_compat.runner import timed_out_message

    assert timed_out_message(600, (0, 0)) == "probe timed out after 600 s"
    message = timed_out_message(600, (27692, 50044))
    assert message.startswith("probe timed out after 600 s with 27,692 of 50,044 scoring units done")
    assert "larger --timeout" in message


def test_an_abstract_ragas_class_is_ragass_error_not_the_harnesss():
    """Ragas 0.2.0 left AgentGoalAccuracyWithReference abstract: constructing it raises TypeError from
    Python's object construction, in no frame of Ragas (the innermost frame is the probe's call). Every
    user's construction raises it, so the value is Ragas's error; a TypeError of a concrete class stays
    where its traceback points."""
    import abc

    from ragas_compat.probe import scoring as probe_scoring

    class Abstract(abc.ABC):
        @abc.abstractmethod
        def _ascore(self) -> float: ...

    class Concrete:
        def __init__(self) -> None: ...

    for cls, by_probe in ((Abstract, False), (Concrete, True)):
        with pytest.raises(TypeError) as raised:
            probe_scoring.instantiate(cls, llm=None)
        assert probe_scoring.raised_by_probe(raised.value) is by_probe, cls
