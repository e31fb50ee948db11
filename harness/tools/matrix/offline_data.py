"""Data a Ragas release fetches from the network when imported, seeded into its matrix environment from a
package of the index instead.

Ragas 0.4.2 builds a tiktoken tokenizer for ``o200k_base`` when ``ragas`` is imported
(``ragas/tokenizers.py``: ``DEFAULT_TOKENIZER = TiktokenWrapper(encoding_name="o200k_base")``; 0.4.3
builds it on first use), and tiktoken downloads that encoding's ranks file on first use. Without network
access the import fails (a ConnectionError) and the release could not be compared at all. The ranks are
also shipped by the ``quicktok-v1`` package (``quicktok/data/o200k.vocab``: a count, then per token its
length, its bytes and its rank); ``pinned/versions.toml`` installs it where needed, and after the install
of a release whose requirements hold it the environment's interpreter runs ``SEED_SCRIPT``: it writes the ranks in tiktoken's own file format
(base64 of the token, a space, the rank, one line per rank), checks the SHA-256 tiktoken itself checks
(``tiktoken_ext/openai_public.py``'s ``expected_hash``; tiktoken checks it again when it reads the file),
stores the file in the environment under the name tiktoken's cache gives it (the SHA-1 of its URL) and
adds a ``.pth`` file that points ``TIKTOKEN_CACHE_DIR`` there when it is not set. An environment without
``quicktok`` is left as it is. The file is byte for byte the one tiktoken would download; nothing about
Ragas's behaviour changes.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Sequence
from pathlib import Path

from ragas_compat.tools.matrix.installers import InstallFailed, _child_env

# tiktoken's public facts for o200k_base (tiktoken_ext/openai_public.py)
O200K_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
O200K_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
PTH_NAME = "ragas_compat_offline_data.pth"
SEED_PACKAGE = "quicktok-v1"  # the package of the index that ships the ranks

# Run by the environment's interpreter (-I): argv = url, sha256, pth name. Prints what it did; exit 1 with
# the reason on stdout when the data does not check.
SEED_SCRIPT = r"""
import base64, hashlib, os, struct, sys, sysconfig
url, expected, pth_name = sys.argv[1:4]
try:
    import quicktok
except ImportError:
    print("no quicktok: nothing to seed")
    sys.exit(0)
source = os.path.join(os.path.dirname(quicktok.__file__), "data", "o200k.vocab")
data = open(source, "rb").read()
count, offset, ranks = struct.unpack_from("<I", data, 0)[0], 4, []
for _ in range(count):
    length = struct.unpack_from("<H", data, offset)[0]
    token = data[offset + 2: offset + 2 + length]
    rank = struct.unpack_from("<I", data, offset + 2 + length)[0]
    ranks.append((rank, token))
    offset += 6 + length
if offset != len(data):
    print(f"{source}: {len(data) - offset} bytes after {count} ranks")
    sys.exit(1)
text = "".join(f"{base64.b64encode(token).decode()} {rank}\n" for rank, token in sorted(ranks)).encode()
found = hashlib.sha256(text).hexdigest()
if found != expected:
    print(f"o200k_base from {source}: SHA-256 {found}, tiktoken expects {expected}")
    sys.exit(1)
folder = os.path.join(sys.prefix, "share", "ragas-compat", "tiktoken")
os.makedirs(folder, exist_ok=True)
target = os.path.join(folder, hashlib.sha1(url.encode()).hexdigest())
with open(target + ".partial", "wb") as handle:
    handle.write(text)
os.replace(target + ".partial", target)
pth = os.path.join(sysconfig.get_paths()["purelib"], pth_name)
with open(pth, "w", encoding="utf-8") as handle:
    handle.write(f"import os; os.environ.setdefault('TIKTOKEN_CACHE_DIR', {folder!r})\n")
print(f"seeded o200k_base ({count} ranks) into {folder}")
"""


def needs_offline_data(requirements: Sequence[str]) -> bool:
    """A release's requirements install the package the seed reads (a rule of ``pinned/versions.toml``)."""
    return any(re.match(rf"{SEED_PACKAGE}\b", requirement) for requirement in requirements)


def seed_offline_data(python: Path, timeout: float = 120.0) -> str:
    """Seed what the environment of ``python`` would download at import (``SEED_SCRIPT``); its one-line
    report. InstallFailed when the packaged data does not give the file tiktoken expects."""
    try:
        proc = subprocess.run([str(python), "-I", "-c", SEED_SCRIPT, O200K_URL, O200K_SHA256, PTH_NAME],
                              capture_output=True, text=True, check=False, timeout=timeout, env=_child_env(),
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise InstallFailed(f"seeding offline data timed out after {timeout:g} s") from None
    report = (proc.stdout.strip().splitlines() or [proc.stderr.strip() or "(no output)"])[-1]
    if proc.returncode != 0:
        raise InstallFailed(f"seeding offline data: {report}")
    return report
