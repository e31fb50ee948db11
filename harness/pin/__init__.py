"""The Ragas pin: the manifest in ``pinned/``, git blob ids, and resolving which Ragas a run uses."""

from ragas_compat.pin.blobs import blob_id, file_blob_id
from ragas_compat.pin.manifest import (
                                  DEFAULT_MANIFEST_PATH,
                                  Pin,
                                  PinManifest,
                                  ReferencePoint,
                                  load_constraints,
                                  load_manifest,
                                  load_pin,
                                  write_manifest,
)
from ragas_compat.pin.sources import (
                                  RagasNotInstalled,
                                  RagasSource,
                                  RagasSourceError,
                                  check_constraints,
                                  resolve_checkout,
                                  resolve_git,
                                  resolve_installed,
                                  resolve_ragas_source,
)

__all__ = [
    "DEFAULT_MANIFEST_PATH", "Pin", "PinManifest", "RagasNotInstalled", "RagasSource", "RagasSourceError", "ReferencePoint",
    "blob_id", "check_constraints", "file_blob_id", "load_constraints", "load_manifest", "load_pin",
    "resolve_checkout", "resolve_git", "resolve_installed", "resolve_ragas_source", "write_manifest",
]
