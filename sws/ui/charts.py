"""Tool-use charts as plain geometry for inline SVG (the templates draw them; no chart library).

:func:`bar_chart` lays out grouped bars; :func:`tool_use_charts` builds, from the runs' summary rows, the
distributions of rounds, search calls and open calls per dataset and their means per dataset.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

WIDTH, HEIGHT = 420, 240
MARGIN_LEFT, MARGIN_RIGHT, MARGIN_TOP, MARGIN_BOTTOM = 44, 12, 28, 52
LEGEND_ROW = 16  # extra top margin of a chart with a legend (one row of entries under the title)
MAX_BINS = 40  # integer values beyond this many bins are grouped into the last bin ("N+")
METRICS = (("rounds", "Rounds"), ("search_calls", "Search calls"), ("open_calls", "Open calls"))


@dataclass(slots=True)
class Bar:
    x: float
    y: float
    w: float
    h: float
    series: int
    label: str  # the tooltip: category, series and value


@dataclass(slots=True)
class Tick:
    x: float
    y: float
    text: str


@dataclass(slots=True)
class Chart:
    title: str
    width: int
    height: int
    bars: list[Bar] = field(default_factory=list)
    x_ticks: list[Tick] = field(default_factory=list)
    y_ticks: list[Tick] = field(default_factory=list)
    legend: list[tuple[int, str, float, float]] = field(default_factory=list)  # series, name, x, y
    x_label: str = ""
    y_label: str = ""
    plot: tuple[float, float, float, float] = (0, 0, 0, 0)  # left, top, right, bottom

    @property
    def description(self) -> str:
        return f"{self.title}: " + "; ".join(b.label for b in self.bars[:60])


def nice_max(value: float) -> float:
    """A round axis maximum at or above ``value`` (1, 2, 2.5, 5 x 10^n)."""
    if value <= 0:
        return 1.0
    power = 10 ** math.floor(math.log10(value))
    for step in (1, 2, 2.5, 5, 10):
        if value <= step * power:
            return step * power
    return 10 * power


def _fmt(value: float) -> str:
    return f"{value:.0f}" if float(value).is_integer() else f"{value:.2f}"


def bar_chart(
    title: str,
    categories: list[str],
    series: list[tuple[str, list[float]]],
    *,
    x_label: str = "",
    y_label: str = "",
    width: int = WIDTH,
    height: int = HEIGHT,
    integer: bool = False,
) -> Chart:
    """Grouped bars: one group per category, one bar per series, a linear y axis from 0 with 5 ticks.

    ``integer``: the values are counts, so the axis top is at least 5 and every tick is a whole number.
    """
    legend = len(series) > 1
    left, top = MARGIN_LEFT, MARGIN_TOP + (LEGEND_ROW if legend else 0)
    right, bottom = width - MARGIN_RIGHT, height - MARGIN_BOTTOM
    chart = Chart(title, width, height, x_label=x_label, y_label=y_label, plot=(left, top, right, bottom))
    top_value = nice_max(max((v for _, values in series for v in values), default=0.0))
    if integer:
        top_value = max(5.0, top_value)
    for k in range(6):
        value = top_value * k / 5
        chart.y_ticks.append(Tick(left - 6, bottom - (bottom - top) * k / 5, _fmt(value)))
    if not categories or not series:
        return chart
    group = (right - left) / len(categories)
    bar_w = group * 0.8 / len(series)
    label_every = max(1, math.ceil(len(categories) / 20))
    for c, category in enumerate(categories):
        x0 = left + c * group + group * 0.1
        for s, (name, values) in enumerate(series):
            value = values[c] if c < len(values) else 0.0
            h = (bottom - top) * (value / top_value)
            label = f"{category}: {_fmt(value)}" if len(series) == 1 else f"{category}, {name}: {_fmt(value)}"
            chart.bars.append(
                Bar(round(x0 + s * bar_w, 2), round(bottom - h, 2), round(bar_w, 2), round(h, 2), s, label)
            )
        if c % label_every == 0:
            chart.x_ticks.append(Tick(round(left + (c + 0.5) * group, 2), bottom + 16, category))
    if legend:
        chart.legend = [(s, name, left + 120 * s, MARGIN_TOP + 2) for s, (name, _) in enumerate(series)]
    return chart


def histogram(title: str, values: list[int], x_label: str, high: int | None = None) -> Chart:
    """Episodes per integer value, 0 .. ``high`` (default: the largest value); values beyond
    :data:`MAX_BINS` bins go to one ``N+`` bin."""
    counts = Counter(max(0, int(v)) for v in values)
    high = max(max(counts, default=0), high or 0)
    if high >= MAX_BINS:
        cap = MAX_BINS - 1
        over = sum(n for v, n in counts.items() if v >= cap)
        counts = Counter({v: n for v, n in counts.items() if v < cap}) | Counter({cap: over})
        categories = [str(v) for v in range(cap)] + [f"{cap}+"]
        high = cap
    else:
        categories = [str(v) for v in range(high + 1)]
    data = [float(counts.get(v, 0)) for v in range(high + 1)]
    return bar_chart(
        title, categories, [("episodes", data)], x_label=x_label, y_label="episodes", integer=True
    )


def tool_use_charts(rows: list[dict[str, Any]]) -> tuple[list[Chart], list[tuple[str, list[Chart]]]]:
    """Means per dataset (one chart) and, per dataset, histograms of rounds, search and open calls."""
    by_dataset: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        by_dataset[str(row.get("dataset") or "?")].append(row)
    datasets = sorted(by_dataset)
    means = [
        (label, [sum(r.get(key) or 0 for r in by_dataset[d]) / len(by_dataset[d]) for d in datasets])
        for key, label in METRICS
    ]
    overview = [
        bar_chart(
            "Mean per episode, by dataset",
            datasets,
            means,
            x_label="dataset",
            y_label="per episode",
            width=max(WIDTH, min(1260, 160 * len(datasets))),
        )
    ]
    # one x range per metric across datasets, so the histograms compare at a glance
    highs = {key: max((int(r.get(key) or 0) for r in rows), default=0) for key, _ in METRICS}
    per_dataset = [
        (
            d,
            [
                histogram(
                    f"{label} ({d}, n={len(by_dataset[d])})",
                    [r.get(key) or 0 for r in by_dataset[d]],
                    label.lower(),
                    high=highs[key],
                )
                for key, label in METRICS
            ],
        )
        for d in datasets
    ]
    return overview, per_dataset
