"""What of the judge's configuration may be written into a recording (a file the README says to commit).

``redacted(value)`` returns a copy of ``value`` (settings, headers, nested dicts and lists) in which
every entry whose name looks like a credential has its value replaced by ``REDACTED``, and every
string that carries one in itself (``Bearer ...``, a URL's ``user:password@`` or a ``?api-key=``
query parameter) is cut the same way.

A name looks like a credential when one of its words (split at ``-``, ``_``, ``.``, spaces and
camelCase humps, compared in lower case) is one of ``CREDENTIAL_WORDS`` (``api-key``, ``x-api-key``,
``Authorization``, ``openai_api_key``, ``accessToken``, ``client_secret``, ``password`` ...), or the
whole name is one of ``CREDENTIAL_NAMES`` (``apikey``, ``passwd`` ...). ``max_tokens`` is not one: its
word is ``tokens``, a count.
"""

from __future__ import annotations

import re
import urllib.parse
from typing import Any

REDACTED = "<redacted>"
CREDENTIAL_WORDS = frozenset({"key", "apikey", "token", "secret", "password", "passwd", "pwd", "authorization",
                              "auth", "credential", "credentials", "cookie", "bearer", "signature", "sig"})
CREDENTIAL_NAMES = frozenset({"apikey", "accesstoken", "authtoken", "secretkey", "privatekey", "xapikey"})
_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_SCHEME_CREDENTIAL = re.compile(r"^\s*(bearer|basic|token|digest)\s+\S", re.IGNORECASE)


def looks_secret(name: object) -> bool:
    """Whether a setting or header named ``name`` holds a credential."""
    if not isinstance(name, str):
        return False
    words = [w.lower() for w in _WORDS.findall(name)]
    return bool(set(words) & CREDENTIAL_WORDS) or "".join(words) in CREDENTIAL_NAMES


def _redacted_text(text: str) -> str:
    if _SCHEME_CREDENTIAL.match(text):
        return REDACTED
    if "://" not in text:
        return text
    try:
        parts = urllib.parse.urlsplit(text)
        if not parts.scheme or not parts.netloc:
            return text
        netloc = parts.netloc
        if "@" in netloc:
            netloc = f"{REDACTED}@{netloc.rpartition('@')[2]}"
        query = parts.query
        if query:
            pairs = urllib.parse.parse_qsl(query, keep_blank_values=True)
            if any(looks_secret(k) for k, _ in pairs):
                query = urllib.parse.urlencode([(k, REDACTED if looks_secret(k) else v) for k, v in pairs],
                                               safe="<>")
        return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
    except ValueError:
        return text


def redacted(value: Any) -> Any:
    """``value`` with every credential replaced by ``REDACTED`` (see the module docstring); a copy."""
    if isinstance(value, dict):
        return {k: (REDACTED if looks_secret(k) and v is not None else redacted(v)) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redacted(item) for item in value]
    if isinstance(value, str):
        return _redacted_text(value)
    return value


def secret_values(value: Any) -> list[str]:
    """The credential strings ``redacted`` removes from ``value`` (to cut them out of messages too)."""
    found: list[str] = []
    if isinstance(value, dict):
        for k, v in value.items():
            if looks_secret(k) and isinstance(v, str) and v:
                found.append(v)
            else:
                found.extend(secret_values(v))
    elif isinstance(value, list | tuple):
        for item in value:
            found.extend(secret_values(item))
    elif isinstance(value, str) and _SCHEME_CREDENTIAL.match(value):
        found.append(value)
    return found
