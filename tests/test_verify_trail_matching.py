"""The hierarchy verifier checks the trail's assignment in linear time and falls
back to its own matching search when the assignment is wrong."""

from __future__ import annotations

import copy

from privtool import examples
from privtool.components import Evidence
from privtool.context import Context
from privtool.pipeline import run_method


def _partition(registry, tmp_path):
    example = examples.get("he-naughton")
    hierarchy = tmp_path / "h.csv"
    hierarchy.write_text("".join(f"{child},{parent}\n" for child, parent in example.hierarchy_edges))
    return run_method(
        registry,
        examples.load("he-naughton"),
        "partition",
        {"k": 2, "hierarchy": str(hierarchy), "hierarchy_format": "edges"},
        Context(),
    )


def test_trail_assignment_is_checked_not_trusted(registry, tmp_path) -> None:
    outcome = _partition(registry, tmp_path)
    verifier = registry.get("verifier", "hierarchy")
    original = examples.load("he-naughton")
    [good] = verifier.verify(outcome.release, Evidence(original=original, trail=outcome.trail), {}, Context())
    assert good.holds is True and good.details["matching"].startswith("the trail's assignment")
    forged = copy.deepcopy(outcome.trail)
    forged.cluster_of_record = list(reversed(forged.cluster_of_record))
    [searched] = verifier.verify(outcome.release, Evidence(original=original, trail=forged), {}, Context())
    assert searched.holds is True and "matching" not in searched.details  # found by its own search
    tampered = copy.deepcopy(outcome.release)
    leaves = sorted(set(original.labels))
    tampered.records[0] = [leaves[0], leaves[-1]]  # a record no original record generalizes to
    assert not any(set(r) == {leaves[0], leaves[-1]} for r in original.to_label_records())
    [refuted] = verifier.verify(tampered, Evidence(original=original, trail=outcome.trail), {}, Context())
    assert refuted.holds is False and refuted.witness["problem"].startswith("no distinct original record")
