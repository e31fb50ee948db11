"""The Ragas probe: standard library + Ragas code run as a subprocess under the import name
``ragas_compat_probe`` (``protocol.probe_command``: loaded from this folder by a bootstrap that adds
nothing to ``sys.path``, so no module of the Ragas environment can shadow it, nor it one of theirs).

Entry modules (run as ``__main__``): the package itself (``__main__``: score a request), ``record``
(record a live judge), ``locate`` (where Ragas is), ``bench.benchmark`` and ``bench.stub_loop``.
Inside: ``protocol`` (the documents shared with the host, the only module the host imports),
``targets`` (the targets of a request), ``scoring`` (one case with one target), ``evaluate``
(Ragas's ``evaluate()``), ``workers`` (forked scoring), ``network_guard``, ``selftest``, ``judge/``
(the scripted judge: prompt book, prompt dialects and layouts, judge scripts) and ``stubs/`` (the
frozen LLMs and embedding models handed to Ragas). Relative imports only.
"""
