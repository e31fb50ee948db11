"""Run a real Ragas ``evaluate()`` over samples of a case file and save what a user would save.

Run with the Ragas environment's interpreter (never imported into the harness process):

    python evaluate_and_save.py CASES.json OUT_DIR --base-url http://127.0.0.1:PORT/v1 [--first N] [--only-complete]

The judge is an OpenAI-compatible chat endpoint (the tests start one on 127.0.0.1). The samples are the
cases' texts (``user_input``, ``response``, ``reference``, ``retrieved_contexts``); the metrics are the
legacy context precision (with and without reference), context recall and faithfulness. Writes, into
OUT_DIR, the files the README's "Audit someone else's run" tells a user to save:

- ``traces.json``: ``{k: v.model_dump(mode="json") for k, v in result.ragas_traces.items()}``;
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
    args = parser.parse_args()

    import warnings

    warnings.simplefilter("ignore", DeprecationWarning)
    from langchain_openai import ChatOpenAI
    from ragas import EvaluationDataset, evaluate
    from ragas.metrics import ContextPrecision, ContextRecall, Faithfulness, LLMContextPrecisionWithoutReference

    chosen = samples(args.cases, args.first, args.only_complete)
    dataset = EvaluationDataset.from_list([sample for _, sample in chosen])
    llm = ChatOpenAI(model=args.model, base_url=args.base_url, api_key="not-a-key", max_retries=0)
    result = evaluate(dataset, metrics=[ContextPrecision(), LLMContextPrecisionWithoutReference(), ContextRecall(),
                                        Faithfulness()], llm=llm, show_progress=False)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    os.chdir(out)
    # the two lines the README ("Audit someone else's run") tells a user to add, verbatim
    json.dump({k: v.model_dump(mode="json") for k, v in result.ragas_traces.items()}, open("traces.json", "w"))
    result.to_pandas().to_csv("scores.csv", index=False)   # or .to_parquet("scores.parquet")
    result.to_pandas().to_parquet("scores.parquet")
    with open(out / "dataset.jsonl", "w", encoding="utf-8") as f:
        for case_id, sample in chosen:
            f.write(json.dumps({"id": f"sample-{case_id}", **sample}, ensure_ascii=False) + "\n")
    print(json.dumps({"rows": len(chosen), "scores": {k: v for k, v in result._repr_dict.items()}}, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
