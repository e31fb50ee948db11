"""The rows of ``ragas-compat bench``: one measurement each, summarised as median and min–max."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Summary:
    """Median and range of a list of samples (n = how many)."""

    n: int
    median: float
    minimum: float
    maximum: float

    def to_json(self) -> dict:
        return {"n": self.n, "median": self.median, "min": self.minimum, "max": self.maximum}


def summarize(samples: Sequence[float]) -> Summary:
    """Median and min–max of ``samples``; raises ValueError when there are none."""
    if not samples:
        raise ValueError("no samples to summarize")
    return Summary(len(samples), statistics.median(samples), min(samples), max(samples))


@dataclass
class BenchRow:
    """One measurement. ``samples`` are the measured side (seconds), ``baseline`` the other side,
    ``ratios`` measured/baseline per alternated repetition; scaling rows carry ``points`` (per K)
    and ``exponent``. ``reason`` is set instead when the row could not be measured."""

    id: str
    measurement: str
    unit: str = "s"
    samples: list[float] = field(default_factory=list)
    baseline: list[float] = field(default_factory=list)
    ratios: list[float] = field(default_factory=list)
    target: float | None = None
    at_least: bool = False        # the target is a floor (ratio >= target: a throughput), not a ceiling
    points: list[dict] = field(default_factory=list)
    exponent: float | None = None
    tail_exponent: float | None = None
    reason: str | None = None
    notes: list[str] = field(default_factory=list)
    extra: dict = field(default_factory=dict)

    @property
    def measured(self) -> bool:
        return self.reason is None

    @property
    def met(self) -> bool | None:
        if self.target is None or not self.ratios:
            return None
        median = summarize(self.ratios).median
        return median >= self.target if self.at_least else median <= self.target

    def to_json(self) -> dict:
        data: dict = {"id": self.id, "measurement": self.measurement,
                      "status": "measured" if self.measured else "not measured", "reason": self.reason}
        if self.samples:
            data.update(unit=self.unit, samples=self.samples, summary=summarize(self.samples).to_json())
        if self.baseline:
            data.update(baseline_samples=self.baseline, baseline_summary=summarize(self.baseline).to_json())
        if self.ratios:
            data.update(ratios=self.ratios, ratio_summary=summarize(self.ratios).to_json(),
                        target=self.target, met=self.met)
            if self.at_least:
                data["target_is_floor"] = True
        if self.points:
            data.update(points=self.points, exponent=self.exponent, tail_exponent=self.tail_exponent)
        if self.notes:
            data["notes"] = self.notes
        data.update(self.extra)
        return data
