"""The frozen HHEM classifier ``FaithfulnesswithHHEM`` is constructed with, in place of Vectara's model
(standard library only: neither torch nor transformers is needed, or imported).

Ragas's ``FaithfulnesswithHHEM.__post_init__`` (``ragas.metrics._faithfulness``, 0.2.0 and later) does
``from transformers import AutoModelForSequenceClassification``, then
``AutoModelForSequenceClassification.from_pretrained("vectara/hallucination_evaluation_model",
trust_remote_code=True)`` (a download from the Hugging Face hub running the model's own code) and
``.to(self.device)``; its ``_ascore`` asks the judge for the response's statements, pairs each with the
premise ``"\\n".join(retrieved_contexts)``, and per batch of ``batch_size`` pairs takes
``self.nli_classifier.predict(pairs).cpu().detach().round().tolist()``; the score is ``sum / len``.

:func:`provided` gives that code path a ``transformers`` module whose ``AutoModelForSequenceClassification``
returns a :class:`FrozenHHEMClassifier` for the case, only while the class is constructed (a synchronous
call: no other coroutine of the probe runs meanwhile). Everything after that is Ragas's own code. The
classifier records what it was asked for (model name, keyword arguments, device, the size of every
``predict`` batch) into the row (``ProbeResult["classifier"]``).

``predict(pairs)`` returns :class:`FrozenScores`, a stand-in for HHEM's float32 tensor of probabilities: the
case's frozen score for each pair (``hhem_scores``: statement -> probability), looked up by the statement
text after checking the premise is the case's joined contexts, stored as float32 (the double rounded to
the nearest float32, ties to even, as ``struct`` packs it); ``.cpu()`` and ``.detach()`` return it,
``.round()`` rounds half to even as ``torch.round`` does (0.5 -> 0.0, 1.5 -> 2.0), ``.tolist()`` gives
Python floats. A pair the case has no score for is the harness's error (:class:`HHEMScoreMissing`,
raised here, so its origin is the harness), never Ragas's.

Never shadowing a real transformers: when one is installed (importable, or already imported), the stub
is not put into ``sys.modules`` at all; only the ``from transformers import ...`` statement executed by
the class's own module gets it (``builtins.__import__`` is wrapped for the constructor call, and answers
the stub only to an importer whose module is the class's module, every other import unchanged), and the
row says so (``"transformers": "installed ..."``). Without one, the stub is ``sys.modules["transformers"]``
for the constructor call and removed afterwards (the row: ``"transformers": "not installed ..."``).
Either way nothing of it is left once the class is built; the instance keeps its classifier object.

Ragas 0.2.0 to 0.2.8 add the batch to a list by iterating it (``scores += batch_scores``: 0-d tensors,
then tensor arithmetic); the stand-in does not model 0-d tensors, so iterating it raises
:class:`HHEMScoreMissing`'s sibling :class:`TensorNotModelled` (origin: the harness).
"""

from __future__ import annotations

import builtins
import contextlib
import importlib.util
import struct
import sys
import types
import typing as t

MODULE = "transformers"


class HHEMScoreMissing(LookupError):
    """A (premise, statement) pair the case's frozen HHEM scores do not answer: the harness's error."""


class TensorNotModelled(TypeError):
    """Ragas used the frozen score tensor in a way the stand-in does not model: the harness's limit."""


def float32(value: float) -> float:
    """``value`` rounded to the nearest float32 (ties to even), as a Python float."""
    return float(struct.unpack("<f", struct.pack("<f", value))[0])


class FrozenScores:
    """A 1-d float32 tensor of frozen HHEM probabilities, as far as Ragas uses one."""

    def __init__(self, values: t.Iterable[float]) -> None:
        self._values = tuple(float32(float(v)) for v in values)

    def cpu(self) -> FrozenScores:
        return self

    def detach(self) -> FrozenScores:
        return self

    def round(self) -> FrozenScores:
        # torch.round: round half to even; Python's round() on a float does the same
        return FrozenScores(float(round(v)) for v in self._values)

    def tolist(self) -> list[float]:
        return list(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __iter__(self) -> t.Iterator[t.Any]:
        raise TensorNotModelled("the frozen HHEM scores stand for a float32 tensor only through "
                                ".cpu().detach().round().tolist(); iterating it (0-d tensors and their arithmetic, "
                                "Ragas 0.2.0-0.2.8's `scores += batch_scores`) is not modelled")

    def __repr__(self) -> str:
        return f"FrozenScores({list(self._values)!r})"


class FrozenHHEMClassifier:
    """What ``from_pretrained`` returns: ``to(device)`` and ``predict(pairs)`` on the case's frozen scores."""

    def __init__(self, scores: t.Mapping[str, t.Any], premise: str, record: dict) -> None:
        self._scores = dict(scores)
        self._premise = premise
        self._record = record

    def to(self, device: t.Any) -> FrozenHHEMClassifier:
        self._record.setdefault("devices", []).append(str(device))
        return self

    def predict(self, pairs: t.Sequence[t.Sequence[str]]) -> FrozenScores:
        values = []
        for i, pair in enumerate(pairs):
            premise, statement = pair
            if premise != self._premise:
                raise HHEMScoreMissing(f"HHEM pair {i}: premise {premise[:80]!r} is not the case's joined "
                                       f"retrieved_contexts {self._premise[:80]!r}")
            if statement not in self._scores:
                raise HHEMScoreMissing(f"HHEM pair {i}: the case has no hhem_scores entry for statement "
                                       f"{statement[:120]!r}")
            values.append(self._scores[statement])
        self._record.setdefault("batches", []).append(len(values))
        return FrozenScores(values)


class _AutoModel:
    """``transformers.AutoModelForSequenceClassification`` as far as the class uses it."""

    def __init__(self, classifier: FrozenHHEMClassifier, record: dict) -> None:
        self._classifier, self._record = classifier, record

    def from_pretrained(self, name: str, *args: t.Any, **kwargs: t.Any) -> FrozenHHEMClassifier:
        self._record["model"] = name
        self._record["args"] = [repr(a) for a in args]
        self._record["kwargs"] = {key: repr(value) for key, value in sorted(kwargs.items())}
        return self._classifier


def transformers_installed() -> bool:
    """A real transformers is importable here or already imported (find_spec imports nothing)."""
    if MODULE in sys.modules:
        return True
    try:
        return importlib.util.find_spec(MODULE) is not None
    except (ImportError, ValueError):
        return False


@contextlib.contextmanager
def provided(case: dict, importer: str, record: dict) -> t.Iterator[None]:
    """Within the block, the class's ``from transformers import AutoModelForSequenceClassification`` (run by
    module ``importer``) gets the stub built on ``case``'s frozen scores; ``record`` collects what the class asked."""
    classifier = FrozenHHEMClassifier(case.get("hhem_scores") or {},
                                      "\n".join(case.get("retrieved_contexts") or []), record)
    module = types.ModuleType(MODULE, "ragas-compat's frozen HHEM classifier (probe stub)")
    module.AutoModelForSequenceClassification = _AutoModel(classifier, record)  # type: ignore[attr-defined]
    if transformers_installed():
        record["transformers"] = ("installed: not shadowed; only the class module's own import got the stub "
                                  "(builtins.__import__ wrapped while it was constructed)")
        real_import = builtins.__import__

        def scoped_import(name: str, globals: t.Any = None, locals: t.Any = None, fromlist: t.Any = (),
                          level: int = 0) -> t.Any:
            if name == MODULE and level == 0 and isinstance(globals, dict) and globals.get("__name__") == importer:
                return module
            return real_import(name, globals, locals, fromlist, level)

        builtins.__import__ = scoped_import
        try:
            yield
        finally:
            builtins.__import__ = real_import
        return
    record["transformers"] = "not installed: the stub was sys.modules['transformers'] while the class was constructed"
    sys.modules[MODULE] = module
    try:
        yield
    finally:
        if sys.modules.get(MODULE) is module:
            del sys.modules[MODULE]
