"""report.md: the document and its sections."""
