"""The minimal stub loop: the floor the probe's scripted judge is measured against (``ragas-compat bench``).

A bare ``BaseRagasLLM`` that pops pre-rendered replies in call order (no lookup, no recording), called
straight through ``single_turn_ascore``. Used in-process by ``bench.benchmark`` and, as an entry module, by
the fuzz throughput bench (``harness/tools/fuzz/throughput.py``):

``ragas_compat_probe.bench.stub_loop REQUEST.json`` (``protocol.probe_command``) imports Ragas, then, timed, scores every case of the request
(``{"module", "classes", "verdicts", "reason", "cases"}``: each case scored by each class with one reply
``{"reason": reason, "verdict": v}`` per verdict of ``case["verdicts"][verdicts]``: the probe's scripted judge
gives that reason too, so Ragas parses the same replies on both sides) and prints
``{"contexts", "errors", "loop_seconds"}``. Standard library and Ragas only; it never imports the harness.
With ``"ready"`` and ``"go"`` (file paths) in the request, it creates ``ready`` once Ragas is imported and
its scorers are built, and starts the timed loop when ``go`` exists: loops in several processes then run
at the same time (the machine's own scaling, the ceiling of the fuzz rows with several workers).
"""

from __future__ import annotations

import os

os.environ["RAGAS_DO_NOT_TRACK"] = "true"

import asyncio
import importlib
import json
import sys
import time
import typing as t
import warnings

GO_WAIT = 600.0  # seconds a loop waits for its go file before it gives up

def list_llm_class() -> type:
    """``ListLLM(replies)``: pops one reply per call, in order (imports Ragas)."""
    from langchain_core.outputs import Generation, LLMResult
    from ragas.llms.base import BaseRagasLLM
    from ragas.run_config import RunConfig

    class ListLLM(BaseRagasLLM):
        """Pops pre-rendered replies in call order; no lookup, no recording."""

        def __init__(self, replies: list[str]) -> None:
            super().__init__(run_config=RunConfig(max_retries=1))
            self.replies = replies

        def generate_text(self, prompt, n=1, temperature=0.01, stop=None, callbacks=None):
            return LLMResult(generations=[[Generation(text=self.replies.pop(0))]])

        async def agenerate_text(self, prompt, n=1, temperature=0.01, stop=None, callbacks=None):
            return LLMResult(generations=[[Generation(text=self.replies.pop(0))]])

        def is_finished(self, response):
            return True

    return ListLLM


def context_precision_scorer(cls: type, verdicts: str, reason: str) -> t.Callable[[dict], t.Awaitable[object]]:
    """``score(case)``: a context-precision class ``cls`` on the case's question, reference and contexts,
    its judge replying the verdicts ``case["verdicts"][verdicts]`` in order, each with ``reason``."""
    from ragas.dataset_schema import SingleTurnSample

    list_llm = list_llm_class()

    async def score(case: dict) -> object:
        replies = [json.dumps({"reason": reason, "verdict": v}) for v in case["verdicts"][verdicts]]
        sample = SingleTurnSample(user_input=case["user_input"], reference=case["reference"],
                                  retrieved_contexts=case["retrieved_contexts"])
        return await cls(llm=list_llm(replies)).single_turn_ascore(sample)

    return score


async def stub_loop(request: dict) -> dict:
    """Every case by every class of the request; counts contexts and errors (an error is counted, not raised)."""
    module = importlib.import_module(request["module"])
    scorers = [context_precision_scorer(getattr(module, name), request["verdicts"], request["reason"])
               for name in request["classes"]]
    contexts = errors = 0
    if request.get("ready") and request.get("go"):
        open(request["ready"], "w").close()
        waited_until = time.monotonic() + GO_WAIT
        while not os.path.exists(request["go"]):
            if time.monotonic() > waited_until:
                raise TimeoutError(f"no go file {request['go']} within {GO_WAIT:.0f} s")
            time.sleep(0.001)
    start = time.perf_counter()
    for case in request["cases"]:
        for score in scorers:
            try:
                await score(case)
            except Exception:  # the loop measures time; a failing case is counted
                errors += 1
            contexts += len(case["retrieved_contexts"])
    return {"contexts": contexts, "errors": errors, "loop_seconds": time.perf_counter() - start}


def main(argv: list[str]) -> int:
    with open(argv[1], encoding="utf-8") as handle:
        request = json.load(handle)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import ragas.metrics  # noqa: F401  (the import is not timed)

        print(json.dumps(asyncio.run(stub_loop(request))))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
