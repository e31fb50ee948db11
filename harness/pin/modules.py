"""Which Ragas files stand behind the registered targets, and whether the pin audits them all.

A target (``legacy:FactualCorrectness[mode=precision]``) is scored by one Ragas class
(``legacy:FactualCorrectness``: its *class key*; options do not change the code that runs). The
files behind a class are the module defining it, the modules of its Ragas base classes (in
``ragas.metrics``) and, for a class defined in a per-metric collections package
(``ragas/metrics/collections/<metric>/``), the other modules of that package (its prompts and
output models). ``pinned/pin.toml [audited.targets]`` records them per class key, measured once on
an installed Ragas (``measure_target_modules``, which imports Ragas in a subprocess of that
Python, never here); ``unaudited_targets`` says which registered targets the manifest does not
cover, and ``coverage`` is what a report shows.

``python -m ragas_compat.pin.modules [--python PY] [--write]`` prints the measured mapping, or
writes it (with the union of its files as ``[audited] files``) into ``pinned/pin.toml``.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Mapping
from dataclasses import replace

from ragas_compat.errors import HarnessInputError
from ragas_compat.pin.manifest import PinManifest, load_manifest, write_manifest
from ragas_compat.probe.protocol import TargetSpec
from ragas_compat.runner import check_timeout, resolve_executable, run_in_own_group

# Run by the Python that has Ragas: class keys as arguments, {class key: [files]} on stdout.
_MEASURE = r"""
import importlib, inspect, json, pathlib, sys
import ragas
root = pathlib.Path(ragas.__file__).resolve().parent.parent
collections_dir = root / "ragas" / "metrics" / "collections"
answer = {}
for key in sys.argv[1:]:
    api, name = key.split(":", 1)
    module = importlib.import_module("ragas.metrics" if api == "legacy" else "ragas.metrics.collections")
    cls = getattr(module, name, None)
    if cls is None and api == "legacy":  # a function target: defined in one of ragas.metrics's modules
        import pkgutil
        for info in sorted(pkgutil.iter_modules(module.__path__), key=lambda i: i.name):
            found = getattr(importlib.import_module("ragas.metrics." + info.name), name, None)
            if found is not None and getattr(found, "__module__", "") == "ragas.metrics." + info.name:
                cls = found
                break
    if not isinstance(cls, type):
        answer[key] = ["src/" + pathlib.Path(inspect.getsourcefile(cls)).resolve().relative_to(root).as_posix()]
        continue
    files = []
    for base in cls.__mro__:
        if base.__module__ == "ragas.metrics" or base.__module__.startswith("ragas.metrics."):
            files.append(pathlib.Path(inspect.getsourcefile(base)).resolve())
    home = files[0].parent
    if home.parent == collections_dir:
        files += sorted(p.resolve() for p in home.glob("*.py") if p.name != "__init__.py")
    answer[key] = list(dict.fromkeys("src/" + f.relative_to(root).as_posix() for f in files))
json.dump(answer, sys.stdout)
"""


def class_key(target: Mapping) -> str:
    """``"<api>:<class>"`` of a probe target (``protocol.TargetSpec``)."""
    return f"{target['api']}:{target['ragas_class']}"


def registered_targets() -> dict[str, TargetSpec]:
    """Every target of the registered metrics (the metric registry's ``probe_targets``) but those of a
    class some earlier releases only have (``releases``: Ragas 0.2.0-0.2.5's rubric classes), which the
    pinned commit does not hold: no file of the pin is behind them."""
    from ragas_compat.metrics.registry import probe_targets

    return {name: target for name, target in probe_targets().items() if "releases" not in target}


def unaudited_targets(manifest: PinManifest, targets: Mapping[str, Mapping] | None = None) -> dict[str, str]:
    """Targets (name -> why) whose files the manifest does not audit: no ``[audited.targets]`` entry
    for their class, or an entry naming a file not in ``[audited] files``. ``targets``: by name, as
    ``registered_targets()`` gives them (the default)."""
    targets = registered_targets() if targets is None else targets
    audited = set(manifest.audited_files)
    out: dict[str, str] = {}
    for name, target in targets.items():
        modules = manifest.target_modules.get(class_key(target))
        if modules is None:
            out[name] = f"no [audited.targets] entry for {class_key(target)}"
        elif not set(modules) <= audited:
            out[name] = "not audited: " + ", ".join(m for m in modules if m not in audited)
    return out


def coverage(manifest: PinManifest, targets: Mapping[str, Mapping] | None = None) -> dict:
    """What the audited files cover, for a report: how many targets and classes there are, how many
    files are hashed, and the targets whose files are not (JSON-ready)."""
    targets = registered_targets() if targets is None else targets
    missing = unaudited_targets(manifest, targets)
    return {"targets": len(targets), "classes": len({class_key(t) for t in targets.values()}),
            "targets_covered": len(targets) - len(missing), "files_hashed": len(manifest.audited_files),
            "unaudited_targets": dict(sorted(missing.items()))}


def measure_target_modules(class_keys: Iterable[str], *, python: str = sys.executable,
                           sys_path_prefix: tuple[str, ...] = (), timeout: float = 120.0) -> dict[str, tuple[str, ...]]:
    """The files behind each class key, asked of the Ragas ``python`` imports (in a subprocess;
    ``sys_path_prefix``: put first on its import path, e.g. a checkout's ``src/``)."""
    keys = sorted(set(class_keys))
    prefix = "import sys; sys.path[:0] = " + json.dumps(list(sys_path_prefix)) + "\n"
    try:
        completed = run_in_own_group([resolve_executable(python), "-c", prefix + _MEASURE, *keys],
                                     timeout=check_timeout(timeout))
    except OSError as exc:
        raise HarnessInputError(f"cannot run {python}: {exc}", field="python", value=python) from None
    if completed.returncode is None:
        raise HarnessInputError(f"{python} did not answer within {timeout:g} s", field="python", value=python)
    if completed.returncode != 0:
        last = (completed.stderr.strip().splitlines() or ["no output"])[-1]
        raise HarnessInputError(f"cannot measure the modules behind the targets with {python}: {last}",
                                field="python", value=python)
    answer = json.loads(completed.stdout)
    return {key: tuple(answer[key]) for key in keys}


def with_measured_modules(manifest: PinManifest, measured: Mapping[str, tuple[str, ...]]) -> PinManifest:
    """``manifest`` whose ``[audited]`` is exactly ``measured``: its classes and the union of their files,
    sorted (the recorded reference points keep only blobs of files still audited)."""
    files = tuple(sorted({file for modules in measured.values() for file in modules}))
    points = tuple(replace(p, blobs={f: b for f, b in p.blobs.items() if f in files},
                           absent=tuple(f for f in p.absent if f in files)) for p in manifest.reference_points)
    return replace(manifest, audited_files=files, target_modules=dict(sorted(measured.items())),
                   reference_points=points)


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m ragas_compat.pin.modules", description=__doc__.split("\n\n")[0])
    parser.add_argument("--python", default=sys.executable, help="the Python whose Ragas is inspected")
    parser.add_argument("--write", action="store_true", help="write [audited] of pinned/pin.toml")
    args = parser.parse_args(argv)
    manifest = load_manifest()
    measured = measure_target_modules({class_key(t) for t in registered_targets().values()}, python=args.python)
    if args.write:
        path = write_manifest(with_measured_modules(manifest, measured))
        print(f"{path}: {len(measured)} classes, {len({f for m in measured.values() for f in m})} audited files")
    else:
        print(json.dumps({k: list(v) for k, v in measured.items()}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
