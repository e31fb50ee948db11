"""Compare: classify Ragas against the reference, pair the two Ragas APIs, dataset means, expectations
(``expectations``: rules and case entries; ``rules``: the condition vocabulary; ``verdict``: drift and
``--fail-on``; ``bless``: the current classifications as an expectations file)."""
