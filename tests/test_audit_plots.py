"""The audit's plain-SVG bar charts: well-formed, one bar per non-zero value,
heights proportional to the values, labels escaped, integer ticks that cover the data."""

from __future__ import annotations

import itertools
import xml.etree.ElementTree as ET

from hypothesis import given, settings
from hypothesis import strategies as st

from privtool.audit.plots import bar_chart, integer_ticks

SVG = "{http://www.w3.org/2000/svg}"


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 10**7))
def test_integer_ticks_cover_the_top_in_few_round_steps(top: int) -> None:
    ticks = integer_ticks(top)
    assert ticks[0] == 0 and ticks[-1] >= top and 2 <= len(ticks) <= 8
    steps = {b - a for a, b in itertools.pairwise(ticks)}
    assert len(steps) == 1
    (step,) = steps
    assert int(str(step).rstrip("0") or "0") in (1, 2, 5)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 50), st.integers(0, 50)), min_size=1, max_size=12))
def test_stacked_bars_are_drawn_to_scale(values: list[tuple[int, int]]) -> None:
    labels = [f"<a&{i}>" for i in range(len(values))]
    series = [("risk", "#f00", [a for a, _ in values]), ("info", "#00f", [b for _, b in values])]
    svg = bar_chart("t<", list(range(len(values))), series, list(enumerate(labels)), "x", "y", slanted=True)
    root = ET.fromstring(svg)  # well-formed, every label escaped
    texts = [t.text for t in root.iter(f"{SVG}text")]
    assert set(labels) <= set(texts) and "t<" in texts
    bars = [r for r in root.iter(f"{SVG}rect") if r.find(f"{SVG}title") is not None]
    assert len(bars) == sum(a > 0 for a, _ in values) + sum(b > 0 for _, b in values)
    heights = [float(r.get("height", 0)) for r in bars]  # bar by bar, each bar's series in order
    counts = [v for pair in values for v in pair if v > 0]
    per_unit = [h / c for h, c in zip(heights, counts, strict=True)]
    if per_unit:
        assert max(per_unit) - min(per_unit) <= 0.1  # heights are written to 0.1 pixel
