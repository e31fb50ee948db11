"""The scripted judge: the prompt book (frozen replies keyed by prompt content), the prompt layouts and
dialects of each Ragas generation, and the judge scripts that fill the book from a case's frozen
verdicts, by the name a request's target gives (``script_table.SCRIPTS``). Standard library only; Ragas on use."""
