"""``ragas-compat record``: record a live Ragas run (judge replies, parsed verdicts, live scores) as a case file.

``dataset`` reads Ragas EvaluationDataset files, ``cases`` turns one recorded sample into a case,
``session`` runs the recording (batches of the recording probe, resumable, atomic per batch).
"""
