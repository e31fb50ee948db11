"""Compare: classify Ragas against the reference, pair the two Ragas APIs, dataset means, expectations."""
