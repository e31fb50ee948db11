"""Target configurations a case file names: the Ragas classes scoring a case, with their constructor options.

``"targets"`` (a case's key, or the file's top-level suite default) maps ``legacy:<Class>``,
``collections:<Class>`` or a bare ``<Class>`` (every API that has the class) to one configuration (an
object of constructor options; ``{}`` is the class's own defaults) or a list of them::

    "targets": {"legacy:SemanticSimilarity": {"threshold": 0.0},
                "RougeScore": [{"rouge_type": "rouge1", "mode": "recall"}, {}]}

For each (API, class) named, the built-in configurations of that class are replaced by the named ones
for that case; every other class keeps its built-in configurations. A case's entry replaces the suite
default's entry for the same (API, class). Which classes take options, on which API and of which type,
is declared once, in the case schema (``$defs.targetConfigurations["x-ragas-classes"]``); the loader
checks a file against it and the metric registry gives each configuration its reference.

Standard library only (and the probe's protocol, for the one target-name formatter).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ragas_compat.probe.protocol import API_COLLECTIONS, API_LEGACY, target_name
from ragas_compat.resources import CASES_SCHEMA, package_text

APIS = (API_LEGACY, API_COLLECTIONS)
CLASSES_KEY = "x-ragas-classes"

Options = tuple[tuple[str, Any], ...]


@dataclass(frozen=True)
class ClassOptions:
    """One configurable Ragas class: its name on each API that has it, and the options it takes
    (option -> JSON Schema of its value, in declaration order: the order a target name lists them)."""

    name: str                        # the declaration's key (a bare key in a case file)
    apis: Mapping[str, str]          # api -> class name on that API
    options: Mapping[str, Mapping[str, Any]]


@dataclass(frozen=True)
class TargetConfig:
    """One configured target of a case: an API's class with its options (declaration order; a JSON
    list value is a tuple)."""

    api: str
    ragas_class: str
    options: Options

    @property
    def name(self) -> str:
        return target_name(self.api, self.ragas_class, self.options)

    def options_json(self) -> list[list[Any]]:
        """The options as a probe request carries them (tuples back to lists)."""
        return [[key, list(value) if isinstance(value, tuple) else value] for key, value in self.options]


def _declarations() -> dict[str, ClassOptions]:
    schema = json.loads(package_text(CASES_SCHEMA))
    declared = schema["$defs"]["targetConfigurations"][CLASSES_KEY]
    return {name: ClassOptions(name, dict(entry["apis"]), dict(entry["options"])) for name, entry in declared.items()}


CLASSES: dict[str, ClassOptions] = _declarations()


def target_keys() -> dict[str, tuple[ClassOptions, tuple[str, ...]]]:
    """Every key a ``targets`` object may hold -> (its class, the APIs it names)."""
    keys: dict[str, tuple[ClassOptions, tuple[str, ...]]] = {}
    for declared in CLASSES.values():
        for api, class_name in declared.apis.items():
            keys[f"{api}:{class_name}"] = (declared, (api,))
        keys.setdefault(declared.name, (declared, tuple(api for api in APIS if api in declared.apis)))
    return keys


def configurations_of(value: Any) -> list[Any]:
    """A key's value as a list of configurations (one object, or a list of them)."""
    return list(value) if isinstance(value, list) else [value]


class FrozenOptions(dict):  # type: ignore[type-arg]
    """An object-valued option (BleuScore's and ChrfScore's sacrebleu ``kwargs``), keys sorted: a dict the
    probe request and the Ragas constructor take as it is, hashable so a configuration is a dict key."""

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(tuple(self.items()))


def _frozen(value: Any) -> Any:
    if isinstance(value, dict):
        return FrozenOptions((key, _frozen(value[key])) for key in sorted(value))
    return tuple(_frozen(v) for v in value) if isinstance(value, list) else value


def _ordered(declared: ClassOptions, options: Mapping[str, Any]) -> Options:
    return tuple((key, _frozen(options[key])) for key in declared.options if key in options)


def by_target(value: Any) -> dict[tuple[str, str], tuple[Options, ...]]:
    """A valid ``targets`` object as (api, class) -> its configurations' options, in file order."""
    keys = target_keys()
    out: dict[tuple[str, str], tuple[Options, ...]] = {}
    for key, configured in (value or {}).items():
        declared, apis = keys[key]
        for api in apis:
            out[(api, declared.apis[api])] = tuple(_ordered(declared, options) for options in configurations_of(configured))
    return out


def merged(suite_default: Any, case_value: Any) -> dict[str, list[dict[str, Any]]] | None:
    """The ``targets`` a case runs with: the suite default's entries, each (API, class) the case names
    replaced by the case's, as ``{"api:Class": [options, ...]}`` (None: neither names any)."""
    if not suite_default and not case_value:
        return None
    entries = {**by_target(suite_default), **by_target(case_value)}
    return {f"{api}:{class_name}": [{key: list(v) if isinstance(v, tuple) else v for key, v in options}
                                    for options in configurations]
            for (api, class_name), configurations in entries.items()}


def resolve(value: Any) -> tuple[TargetConfig, ...]:
    """The configured targets of a valid ``targets`` object, one per (API, class, configuration)."""
    out: dict[str, TargetConfig] = {}
    for (api, class_name), configurations in by_target(value).items():
        for options in configurations:
            config = TargetConfig(api, class_name, options)
            out.setdefault(config.name, config)
    return tuple(out.values())


def overridden(configs: tuple[TargetConfig, ...]) -> frozenset[tuple[str, str]]:
    """The (API, class) pairs whose built-in configurations ``configs`` replace."""
    return frozenset((config.api, config.ragas_class) for config in configs)
