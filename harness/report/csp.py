"""The Content-Security-Policy of the HTML reports (report.html, matrix.html), as a ``<meta>`` element.

Nothing is fetched (``default-src 'none'``, and ``'none'`` for every directive that does not fall back
to it: ``base-uri``, ``form-action``), and only the page's own inline ``<script>`` and ``<style>`` run,
each allowed by the SHA-256 of its exact text (``source_hash``), computed when the page is rendered:
no ``'unsafe-inline'`` for scripts, so an element that user text smuggled in could not run, nor an
event-handler attribute. ``style_attributes``: the page sets per-item colours and widths in ``style``
attributes, which a hash cannot allow without ``'unsafe-hashes'`` and a hash per value; they are then
allowed by ``style-src-attr 'unsafe-inline'`` alone (CSS cannot run script, and with nothing fetched it
cannot send anything anywhere); ``<style>`` elements stay limited to the hashed one.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterable

NONE = "'none'"
UNSAFE_INLINE = "'unsafe-inline'"


def source_hash(text: str) -> str:
    """``'sha256-…'``: the CSP source that allows exactly this inline script or style text."""
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii") + "'"


def policy(*, scripts: Iterable[str] = (), styles: Iterable[str] = (), style_attributes: bool = False,
           data_images: bool = False) -> str:
    """The policy text: ``scripts`` and ``styles`` are the exact texts of the page's inline elements."""
    script_src = " ".join(source_hash(text) for text in scripts) or NONE
    style_src = " ".join(source_hash(text) for text in styles) or NONE
    return "; ".join([
        f"default-src {NONE}", f"script-src {script_src}", f"script-src-attr {NONE}",
        f"style-src {style_src}", f"style-src-elem {style_src}",
        f"style-src-attr {UNSAFE_INLINE if style_attributes else NONE}",
        f"img-src {'data:' if data_images else NONE}", "connect-src 'none'", "font-src 'none'",
        "media-src 'none'", "object-src 'none'", "frame-src 'none'", "worker-src 'none'", "manifest-src 'none'",
        "base-uri 'none'", "form-action 'none'"])


def policy_meta(**sources) -> str:
    """``<meta http-equiv="Content-Security-Policy" content="…">`` (``policy(**sources)``)."""
    return f'<meta http-equiv="Content-Security-Policy" content="{policy(**sources)}">'
