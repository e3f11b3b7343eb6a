"""``evidence_text``: evidence as short readable text, cut between whole parts
with a count of what was left out (parts after the cut are never rendered)."""

from __future__ import annotations

from privtool.evidence_text import evidence_text


def test_reads_as_phrases() -> None:
    assert evidence_text({"itemset": ["a", "b"], "support": 1, "k": 2}) == "itemset {a, b}; support 1; k 2"


def test_long_values_are_cut_between_whole_parts_with_the_count_left_out() -> None:
    rows = {"rows": [[str(i) for i in range(j)] for j in range(40)], "n": 3}
    assert evidence_text(rows) == "rows [{}, {0}, {0, 1}, {0, 1, 2}, {0, 1, 2, 3}, {0, 1, 2, 3, 4}, … (34 more)]; n 3"
    text = evidence_text(list(range(500)))
    assert text.startswith("0; 1; 2;") and text.endswith("42; … (457 more)")
    nested = {"implications": {str(i): ["x"] * i for i in range(30)}}
    assert evidence_text(nested) == "implications (0 {}; 1 {x}; 2 {x, x}; 3 {x, x, x}; 4 {x, x, x, x}; … (25 more))"


def test_a_huge_list_costs_what_is_shown() -> None:
    class Counted(str):
        made = 0

        def __str__(self) -> str:
            Counted.made += 1
            return str.__str__(self)

    evidence_text({"items": [Counted(f"x{i}") for i in range(100_000)]})
    assert Counted.made < 100
