"""Where ``ragas`` would be imported from, and which distributions are installed, without importing it.

Standard library only. Run as an entry module (``ragas_compat_probe.locate [DIST ...]``, ``protocol.probe_command``) it prints the answer
as one JSON object; the probe (``--wait``) writes the same answer to ``located.json``
before it imports Ragas, so the host can compare the installed files with the pin while Ragas loads.

The answer: ``{"python_version", "found", "distributions": {name: version | null},
"package_dir", "version", "version_source"}`` (the last three only when ``found``).
"""

from __future__ import annotations

import importlib.metadata as metadata
import importlib.util
import json
import pathlib
import platform
import sys


def locate_ragas(distributions: list[str] | tuple[str, ...] = ()) -> dict:
    """The answer described in the module docstring, for this interpreter's ``sys.path``."""
    out: dict = {"python_version": platform.python_version(), "found": False, "distributions": {}}
    for name in distributions:
        try:
            out["distributions"][name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out["distributions"][name] = None
    spec = importlib.util.find_spec("ragas")
    if spec is None:
        return out
    locations = list(spec.submodule_search_locations or [])
    package = pathlib.Path(locations[0] if locations else spec.origin).resolve()
    if not locations:
        package = package.parent
    out.update(found=True, package_dir=str(package), version=None, version_source=None)
    # only the entries named like ragas (ragas-X.dist-info, ragas.egg-info) are read: reading every
    # distribution's metadata beside it took about 80 ms before the probe's Ragas import could start
    for dist in metadata.distributions(name="ragas", path=[str(package.parent)]):
        if (dist.metadata["Name"] or "").lower() == "ragas":
            out["version"], out["version_source"] = dist.version, "distribution metadata beside the package"
            break
    else:
        try:
            out["version"] = metadata.version("ragas")
            out["version_source"] = "distribution metadata elsewhere on sys.path (editable install?)"
        except metadata.PackageNotFoundError:
            pass
    return out


if __name__ == "__main__":
    print(json.dumps(locate_ragas(sys.argv[1:])))
