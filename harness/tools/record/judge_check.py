"""Build the judge's client once, offline, before any sample is scored: ``record`` runs this file by path
with ``--python`` (the interpreter whose Ragas records), so a ``--judge-setting`` the client refuses is
exit 2 with one line, not the recording probe's traceback.

Usage: ``python judge_check.py REQUEST.json`` where REQUEST is the judge part of the probe's request
(``{"kind": "openai", "model", "base_url", "timeout", "max_retries", "settings", "api"}``).
Standard library at the top; LangChain / OpenAI / Ragas imported as the recording probe imports them.
The client is built the way the probe builds it (``ChatOpenAI(...)``, or with ``"api": "collections"``
``llm_factory(model, client=AsyncOpenAI(...), **settings)``) with a placeholder key; building it
sends nothing. Prints one JSON line: ``{"ok": true}``, ``{"ok": false, "error": "..."}`` (the
settings are wrong) or ``{"ok": null, "skipped": "..."}`` (the client library is not importable:
the probe reports that itself).
"""

from __future__ import annotations

import json
import sys

PLACEHOLDER_KEY = "sk-judge-check-placeholder"


def build(judge: dict) -> None:
    settings = judge.get("settings") or {}
    if judge.get("api") == "collections":
        from openai import AsyncOpenAI
        from ragas.llms.base import llm_factory

        client = AsyncOpenAI(base_url=judge["base_url"], api_key=PLACEHOLDER_KEY, timeout=judge.get("timeout"),
                             max_retries=judge.get("max_retries", 2))
        llm_factory(judge["model"], client=client, **settings)
        return
    from langchain_openai import ChatOpenAI

    ChatOpenAI(model=judge["model"], base_url=judge["base_url"], api_key=PLACEHOLDER_KEY,
               timeout=judge.get("timeout"), max_retries=judge.get("max_retries", 2), **settings)


def main(argv: list[str]) -> int:
    with open(argv[1], encoding="utf-8") as handle:
        judge = json.load(handle)
    try:
        build(judge)
    except ImportError as exc:
        print(json.dumps({"ok": None, "skipped": f"{type(exc).__name__}: {exc}"}))
        return 0
    except Exception as exc:  # the client refused the settings: its own message, on one line
        text = " ".join(f"{type(exc).__name__}: {exc}".split())
        print(json.dumps({"ok": False, "error": text[:400] + (" ..." if len(text) > 400 else "")}))
        return 0
    print(json.dumps({"ok": True}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
