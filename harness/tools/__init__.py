"""Tools built on the audit: explain, fuzz, matrix, bench."""
