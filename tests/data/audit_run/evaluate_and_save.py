"""Run a real Ragas ``evaluate()`` over samples of a case file and save what a user would save.

Run with the Ragas environment's interpreter (never imported into the harness process):

    python evaluate_and_save.py CASES.json OUT_DIR --base-url http://127.0.0.1:PORT/v1 [--first N] [--only-complete]
        [--wide] [--garble ROW ...]

The judge is an OpenAI-compatible chat endpoint (the tests start one on 127.0.0.1). The samples are the
cases' texts (``user_input``, ``response``, ``reference``, ``retrieved_contexts``); the metrics are the
legacy context precision (with and without reference), context recall and faithfulness, and with
``--wide`` also FactualCorrectness, ContextEntityRecall, NoiseSensitivity, AnswerRelevancy (its
embeddings LangChain's ``DeterministicFakeEmbedding``: no network), an AspectCritic and a
SimpleCriteriaScore of our own (named ``names_a_command`` and ``clarity``) and RubricsScore. A LangChain
``RunCollectorCallbackHandler`` is passed to ``evaluate(callbacks=[...])`` (Ragas's chains are LangChain
callbacks), as a LangSmith tracer would be. Writes, into OUT_DIR, the files the docs
(docs/record-import-audit-run.md, "Audit someone else's run") tell a user to save:

- ``traces.json``: ``{k: v.model_dump(mode="json") for k, v in result.ragas_traces.items()}``;
- ``traces_list.json``: ``result.traces`` (``json.dump(result.traces, f, default=...)``: a bare
  ``json.dump`` raises TypeError on the prompts' pydantic models; ``stdout`` says so);
- ``langsmith.json``: the collected runs as LangSmith's ``Run`` schema, nested (``child_runs``), and
  ``langsmith_flat.json`` the same runs as a flat list linked by ``parent_run_id`` (what
  ``Client.list_runs`` gives);
- ``scores.csv`` and ``scores.parquet``: ``result.to_pandas()``;
- ``dataset.jsonl``: the samples, one per line, with an ``id`` column (``sample-<case id>``: not the bundled
  case, whose expectations entries would not fit the judge's verdicts).
"""

import argparse
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")
TEXTS = ("user_input", "response", "reference")


def samples(cases_path, first, only_complete):
    cases = json.loads(Path(cases_path).read_text(encoding="utf-8"))["cases"]
    out = []
    for case in cases:
        contexts = case.get("retrieved_contexts")
        if not isinstance(contexts, list) or not all(isinstance(c, str) for c in contexts):
            continue
        if not all(isinstance(case.get(name), str) for name in TEXTS):
            continue
        if only_complete and not (contexts and all(case[name].strip() for name in TEXTS)):
            continue
        out.append((case["id"], {**{name: case[name] for name in TEXTS}, "retrieved_contexts": contexts}))
    return out[:first] if first else out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("cases")
    parser.add_argument("out")
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--model", default="judge-1")
    parser.add_argument("--first", type=int, default=0)
    parser.add_argument("--only-complete", action="store_true")
    parser.add_argument("--wide", action="store_true")
    parser.add_argument("--garble", type=int, action="append", default=[],
                        help="append GARBLED to this row's reference (the test judge then sends labels Ragas refuses)")
    args = parser.parse_args()

    import warnings

    warnings.simplefilter("ignore", DeprecationWarning)
    from langchain_core.embeddings import DeterministicFakeEmbedding
    from langchain_core.tracers.run_collector import RunCollectorCallbackHandler
    from langchain_openai import ChatOpenAI
    from ragas import EvaluationDataset, evaluate
    from ragas.metrics import (
        AnswerRelevancy,
        AspectCritic,
        ContextEntityRecall,
        ContextPrecision,
        ContextRecall,
        FactualCorrectness,
        Faithfulness,
        LLMContextPrecisionWithoutReference,
        NoiseSensitivity,
        RubricsScore,
        SimpleCriteriaScore,
    )

    chosen = samples(args.cases, args.first, args.only_complete)
    for row in args.garble:
        chosen[row][1]["reference"] += " GARBLED"
    dataset = EvaluationDataset.from_list([sample for _, sample in chosen])
    # the client's default retries: the test judge is a ThreadingHTTPServer (listen backlog 5) that Ragas's 16
    # concurrent jobs can overflow on a loaded machine (APIConnectionError: a NaN no test means)
    llm = ChatOpenAI(model=args.model, base_url=args.base_url, api_key="not-a-key", max_retries=2)
    metrics = [ContextPrecision(), LLMContextPrecisionWithoutReference(), ContextRecall(), Faithfulness()]
    if args.wide:
        metrics += [FactualCorrectness(), ContextEntityRecall(), NoiseSensitivity(), AnswerRelevancy(),
                    AspectCritic(name="names_a_command", definition="Does the response name a command or a key?"),
                    SimpleCriteriaScore(name="clarity", definition="Score 1 to 5 how clear the response is."),
                    RubricsScore()]
    collector = RunCollectorCallbackHandler()
    result = evaluate(dataset, metrics=metrics, llm=llm, embeddings=DeterministicFakeEmbedding(size=16),
                      callbacks=[collector], show_progress=False)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    os.chdir(out)
    # the two lines the README ("Audit someone else's run") tells a user to add, verbatim
    json.dump({k: v.model_dump(mode="json") for k, v in result.ragas_traces.items()}, open("traces.json", "w"))
    result.to_pandas().to_csv("scores.csv", index=False)   # or .to_parquet("scores.parquet")
    result.to_pandas().to_parquet("scores.parquet")
    # result.traces: a bare json.dump fails on the prompts' pydantic models; what a user can save instead
    try:
        json.dumps(result.traces)
        bare_dump = "ok"
    except TypeError as exc:
        bare_dump = f"TypeError: {exc}"
    json.dump(result.traces, open("traces_list.json", "w"), default=lambda o: o.model_dump(mode="json"))
    # a LangSmith export of the same run: the collected runs as the LangSmith client's own Run model
    # (langsmith.schemas.Run, what Client.read_run(..., load_child_runs=True) returns), nested, and flat
    # as Client.list_runs yields them (linked by parent_run_id)
    from langsmith.schemas import Run as LangSmithRun

    fields = set(LangSmithRun.model_fields) - {"child_runs", "child_run_ids"}

    def as_langsmith(run, nested):
        kept = {k: v for k, v in run.model_dump(exclude={"parent_run", "child_runs"}).items() if k in fields}
        children = [as_langsmith(child, nested) for child in run.child_runs]
        return LangSmithRun(**kept, child_run_ids=[c.id for c in children],
                            child_runs=children if nested else None)

    nested, flat = [], []

    def walk(run):
        flat.append(as_langsmith(run, False).model_dump(mode="json"))
        for child in run.child_runs:
            walk(child)

    for run in collector.traced_runs:
        nested.append(as_langsmith(run, True).model_dump(mode="json"))
        walk(run)
    with open("langsmith.json", "w", encoding="utf-8") as f:
        json.dump(nested, f)
    with open("langsmith_flat.json", "w", encoding="utf-8") as f:
        json.dump(flat, f)
    with open(out / "dataset.jsonl", "w", encoding="utf-8") as f:
        for case_id, sample in chosen:
            f.write(json.dumps({"id": f"sample-{case_id}", **sample}, ensure_ascii=False) + "\n")
    print(json.dumps({"rows": len(chosen), "scores": {k: v for k, v in result._repr_dict.items()},
                      "bare_traces_dump": bare_dump}, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
