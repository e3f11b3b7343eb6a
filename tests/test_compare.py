"""``privtool compare``: every output file, verified releases, and resuming."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from privtool.comparison.spec import parse_spec
from privtool.errors import ParameterError


def test_spec_grammar() -> None:
    spec = parse_spec("safe=disassociation:partitioner=horpart,max-cluster-size=10+safe-disassociation")
    assert (spec.label, spec.method, spec.sanitizers) == ("safe", "disassociation", ("safe-disassociation",))
    assert spec.options == {"partitioner": "horpart", "max_cluster_size": "10"}
    plain = parse_spec("lgr:hierarchy=a=b.csv")
    assert (plain.label, plain.method, plain.options) == ("lgr:hierarchy=a=b.csv", "lgr", {"hierarchy": "a=b.csv"})
    with pytest.raises(ParameterError, match="expected OPTION=VALUE"):
        parse_spec("disassociation:k")


@pytest.fixture
def small_data(tmp_path: Path, run_cli) -> Path:
    data = tmp_path / "small.dat"
    assert (
        run_cli(
            "synth",
            "--records",
            "400",
            "--items",
            "40",
            "--avg-size",
            "4",
            "--max-size",
            "12",
            "--seed",
            "3",
            "-o",
            data,
        ).code
        == 0
    )
    return data


def test_compare_writes_everything_and_resumes(tmp_path: Path, run_cli, small_data: Path) -> None:
    out = tmp_path / "cmp"
    args = (
        "compare",
        small_data,
        "--method",
        "horpart=disassociation:partitioner=horpart",
        "--method",
        "adding=disassociation:partitioner=adding",
        "--k",
        "2,3",
        "-o",
        out,
        "-q",
        "--executor",
        "serial",
    )
    first = run_cli(*args)
    assert first.code == 0, first.err
    rows = list(csv.DictReader((out / "results.csv").open()))
    assert len(rows) == 4 and {r["method"] for r in rows} == {"horpart", "adding"}
    assert all(r["verified"] == "True" for r in rows), [r["refuted"] for r in rows]
    assert all(float(r["tlost.tlost_terms"]) >= 0 for r in rows)
    payload = json.loads((out / "results.json").read_text())
    assert len(payload["rows"]) == 4 and payload["meta"]["input_sha256"]
    assert (out / "plots" / "seconds.png").stat().st_size > 1000 and (out / "plots" / "seconds.svg").is_file()
    index = (out / "index.html").read_text()
    assert index.count("<svg") >= 2 and "horpart" in index
    assert len(list((out / "releases").glob("*.json"))) == 4
    stamps = {p.name: p.stat().st_mtime_ns for p in (out / "cells").glob("*.json")}
    again = run_cli(*args, "--k", "2,3,4")
    assert again.code == 0, again.err
    cells = {p.name: p.stat().st_mtime_ns for p in (out / "cells").glob("*.json")}
    assert len(cells) == 6 and all(cells[name] == stamp for name, stamp in stamps.items()), (
        "finished cells were recomputed"
    )
    assert len(list(csv.DictReader((out / "results.csv").open()))) == 6


def test_compare_puts_every_release_kind_on_the_shared_utility_axis(tmp_path: Path, run_cli, small_data: Path) -> None:
    """Disassociated, generalized (local and global) and sanitized releases all
    get tkd, re and ARE, as the first measures of results.csv and in one figure."""
    out = tmp_path / "axis"
    tree = "hierarchy=4,hierarchy_format=fanout"
    methods = ["disassociation", f"partition:{tree}", f"aa:{tree}", "mfi-relevance:sensitive=2"]
    args = ["compare", small_data, "--k", "2,3", "--grid", "min_support=0.05", "--grid", "min_confidence=0.3"]
    for metric in ("tkd", "re", "are"):
        args += ["--metric", metric]
    for method in methods:
        args += ["--method", method]
    result = run_cli(*args, "-o", out, "-q", "--executor", "serial")
    assert result.code == 0, result.err
    rows = _rows(out)
    assert {r["method"] for r in rows} == set(methods) and len(rows) == 8
    header = next(csv.reader((out / "results.csv").open()))
    assert header[header.index("cell") + 1 : header.index("cell") + 4] == ["tkd.tkd", "re.re", "are.are"]
    for row in rows:
        assert all(0 <= float(row[c]) for c in ("tkd.tkd", "re.re", "are.are")), row
    assert (out / "plots" / "utility.png").stat().st_size > 1000
    svg = (out / "plots" / "utility.svg").read_text()
    assert all(name in svg for name in ("tkd.tkd", "re.re", "are.are"))


def test_compare_rejects_bad_specs(tmp_path: Path, run_cli, small_data: Path) -> None:
    result = run_cli("compare", small_data, "--method", "nosuch", "-o", tmp_path / "o")
    assert result.code == 2 and "unknown method 'nosuch': not an anonymizer" in result.err
    result = run_cli(
        "compare", small_data, "--method", "disassociation", "--method", "disassociation", "-o", tmp_path / "o"
    )
    assert result.code == 2 and "same label" in result.err


# ---------------------------------------------------------------- rule hiding

HIDE = ("--grid", "min_support=0.02", "--grid", "min_confidence=0.3")


def _rows(folder: Path) -> list[dict[str, str]]:
    return list(csv.DictReader((folder / "results.csv").open()))


def test_compare_rule_hiding_writes_verifies_and_resumes(tmp_path: Path, run_cli, small_data: Path) -> None:
    out = tmp_path / "hide"
    args = (
        "compare",
        small_data,
        "--method",
        "mfi-relevance",
        "--method",
        "fhsar",
        "--method",
        "exact=exact:time_limit=10,second_objective=false",
        *HIDE,
        "--metric",
        "rule-side-effects",
        "-o",
        out,
        "-q",
        "--executor",
        "serial",
    )
    first = run_cli(*args, "--grid", "sensitive=2,3")
    assert first.code == 0, first.err
    rows = _rows(out)
    assert len(rows) == 6 and {r["method"] for r in rows} == {"mfi-relevance", "fhsar", "exact"}
    for row in rows:
        assert row["verified"] == "True" and row["verdict"] == "PASS", row["refuted"]
        certified = row["certified"].split("; ")
        assert "removal-only" in certified and any(c.startswith("rule-hiding (min_support=") for c in certified)
        assert float(row["rule-side-effects.hiding_failure"]) == 0.0
        assert int(row["rule-side-effects.added_item_occurrences"]) == 0
        assert int(row["rule-side-effects.removed_item_occurrences"]) > 0
        assert int(row["rule-side-effects.sensitive_rules"]) == int(row["sensitive"])
    for row in (r for r in rows if r["method"] == "exact"):
        assert row["notes.removal_optimal"] == "1.0"
        same = [r for r in rows if r["sensitive"] == row["sensitive"]]
        assert int(row["rule-side-effects.removed_item_occurrences"]) == min(
            int(r["rule-side-effects.removed_item_occurrences"]) for r in same
        )
    for name in ("rule-side-effects", "seconds"):
        assert (out / "plots" / f"{name}.png").stat().st_size > 1000 and (out / "plots" / f"{name}.svg").is_file()
    assert "lost_rules" in (out / "index.html").read_text()
    # Every method hides the same rules at a given count: the choice depends on the seed and the count only.
    chosen: dict[str, set[str]] = {}
    for row in rows:
        release = json.loads((out / "releases" / f"{row['cell']}.json").read_text())
        assert "sensitive_rules" not in release["params"]  # the rules are a secret of the trail
        trail = json.loads((out / "trails" / f"{row['cell']}.json").read_text())
        chosen.setdefault(row["sensitive"], set()).add(json.dumps(trail["sensitive_rules"]))
    assert all(len(v) == 1 for v in chosen.values()) and len(chosen) == 2
    stamps = {p.name: p.stat().st_mtime_ns for p in (out / "cells").glob("*.json")}
    again = run_cli(*args, "--grid", "sensitive=2,3,4")
    assert again.code == 0, again.err
    cells = {p.name: p.stat().st_mtime_ns for p in (out / "cells").glob("*.json")}
    assert len(cells) == 9 and all(cells[name] == stamp for name, stamp in stamps.items()), (
        "finished cells were recomputed"
    )
    assert len(_rows(out)) == 9


def test_compare_and_hide_share_one_code_path(tmp_path: Path, run_cli, small_data: Path) -> None:
    """A compare cell with a rule file makes the very release ``privtool hide`` makes."""
    listed = run_cli("rules", small_data, "--min-support", "0.02", "--min-confidence", "0.3", "--top", "3", "--json")
    top = json.loads(listed.out)["rules"]
    rules = tmp_path / "rules.txt"
    rules.write_text("".join(f"{r['id']}\n" for r in top))
    hidden = run_cli(
        "hide",
        small_data,
        "--rules",
        rules,
        "--min-support",
        "0.02",
        "--min-confidence",
        "0.3",
        "--sanitizer",
        "mdsrrc",
        "-o",
        tmp_path / "s.dat",
        "--release",
        tmp_path / "r.json",
        "-q",
    )
    assert hidden.code == 0, hidden.err
    out = tmp_path / "cmp"
    result = run_cli(
        "compare",
        small_data,
        "--method",
        f"file=mdsrrc:rules={rules}",
        "--method",
        "top=mdsrrc:sensitive=3,pick=top",
        *HIDE,
        "-o",
        out,
        "-q",
        "--no-verify",
        "--metric",
        "rule-side-effects",
    )
    assert result.code == 0, result.err
    by_method = {r["method"]: r for r in _rows(out)}
    expected = (tmp_path / "r.json").read_text()
    for method in ("file", "top"):
        assert (out / "releases" / f"{by_method[method]['cell']}.json").read_text() == expected
    by_count = run_cli(
        "hide",
        small_data,
        "--sensitive",
        "3",
        "--pick",
        "top",
        "--min-support",
        "0.02",
        "--min-confidence",
        "0.3",
        "--sanitizer",
        "mdsrrc",
        "-o",
        tmp_path / "s2.dat",
        "--release",
        tmp_path / "r2.json",
        "-q",
    )
    assert by_count.code == 0 and (tmp_path / "r2.json").read_text() == expected
    # A changed rule file is a different cell, never a stale one.
    rules.write_text(f"{top[0]['id']}\n")
    assert (
        run_cli(
            "compare", small_data, "--method", f"file=mdsrrc:rules={rules}", *HIDE, "-o", out, "-q", "--no-verify"
        ).code
        == 0
    )
    assert len(list((out / "cells").glob("file-*.json"))) == 2


class _RemoveConsequents:
    """A third-party rule hider: drops each sensitive rule's consequent from every
    record that supports the rule."""

    @staticmethod
    def make():
        from privtool.plugins.rulehiding.base import RuleHidingSanitizer

        class RemoveConsequents(RuleHidingSanitizer):
            name = "remove-consequents"
            summary = "test plugin"

            def hide(self, workspace, params, ctx):
                for rule in workspace.rules:
                    for record in workspace.rows_with(rule.xy).tolist():
                        workspace.remove(record, next(iter(rule.xy - rule.x)))
                return {}

        class GiveUp(RuleHidingSanitizer):
            name = "give-up"
            summary = "test plugin that never finds a solution"

            def hide(self, workspace, params, ctx):
                from privtool.errors import NoSolution

                raise NoSolution("give-up found no solution within its budget.")

        return [RemoveConsequents(), GiveUp()]


def test_compare_runs_a_third_party_rule_hider_and_records_no_solution(
    tmp_path: Path, run_cli, small_data: Path
) -> None:
    import types

    from privtool.comparison.runner import grid, run_cell
    from privtool.comparison.spec import parse_spec
    from privtool.context import Context
    from privtool.hookspecs import hookimpl
    from privtool.io import read_dataset
    from privtool.registry import load_registry

    module = types.ModuleType("third_party_hider")
    module.privtool_sanitizers = hookimpl(lambda: _RemoveConsequents.make())
    registry = load_registry(extra={"third-party-hider": module})
    for sub in ("cells", "releases", "trails"):
        (tmp_path / sub).mkdir()
    dataset = read_dataset(registry, str(small_data))
    specs = [
        parse_spec("remove-consequents:min_support=0.02,min_confidence=0.3"),
        parse_spec("give-up:min_support=0.02,min_confidence=0.3"),
    ]
    done, failed = (
        run_cell(registry, dataset, cell, tmp_path, Context(seed=cell.seed))
        for cell in grid(specs, {"sensitive": [2]}, 1, 0)
    )
    assert done["verified"] is True and done["rule-side-effects.hiding_failure"] == 0.0
    assert "error" not in done and done["rule-side-effects.removed_item_occurrences"] > 0
    assert failed["error"] == "give-up found no solution within its budget." and "verified" not in failed
    assert json.loads((tmp_path / "cells" / f"{failed['cell']}.json").read_text()) == failed


@pytest.mark.parametrize(
    ("method", "grid", "message"),
    [
        ("mfi-relevance", ("--grid", "sensitive=2"), "--method 'mfi-relevance' needs --min-support."),
        ("mfi-relevance", HIDE, "give the sensitive rules one way"),
        ("fhsar:sensitive=2,rules=x.txt", HIDE, "not rules and sensitive."),
        ("fhsar", (*HIDE, "--grid", "sensitive=0,2"), "--sensitive must be at least 1, not 0."),
        ("fhsar:pick=best,sensitive=2", HIDE, "--pick must be one of random, top, not 'best'."),
        ("mfi-relevance+fhsar", HIDE, "works on raw data and takes no further +stage."),
        ("safe-disassociation", (), "sanitizer 'safe-disassociation' does not work on raw data"),
        (
            "fhsar:sensitive=2",
            (*HIDE, "--grid", "sensitve=3"),
            "--grid sensitve: no --method takes a parameter 'sensitve'.",
        ),
        ("fhsar:sensitive=2", (*HIDE, "--k", "2,3"), "--k: no --method takes a parameter 'k'."),
    ],
)
def test_compare_rejects_bad_rule_hiding_specs(
    tmp_path: Path, run_cli, small_data: Path, method: str, grid: tuple, message: str
) -> None:
    result = run_cli("compare", small_data, "--method", method, *grid, "-o", tmp_path / "o", "-q")
    assert result.code == 2 and message in result.err
    assert len(result.err.strip().splitlines()) == 1 and "Traceback" not in result.err
    assert not (tmp_path / "o").exists(), "nothing is written for a bad spec"


def test_compare_sample_is_seeded_and_recorded(tmp_path: Path, run_cli, small_data: Path) -> None:
    def meta(seed: str, name: str) -> dict:
        args = (
            "compare",
            small_data,
            "--sample",
            "100",
            "--seed",
            seed,
            "--method",
            "fhsar",
            *HIDE,
            "--grid",
            "sensitive=1",
            "--no-verify",
            "--metric",
            "rule-side-effects",
            "-o",
            tmp_path / name,
            "-q",
        )
        result = run_cli(*args)
        assert result.code == 0, result.err
        return json.loads((tmp_path / name / "results.json").read_text())["meta"]

    first, again, other = meta("0", "a"), meta("0", "b"), meta("1", "c")
    assert first["records"] == 100 and first["sample"] == 100
    assert first["input_sha256"] == again["input_sha256"] != other["input_sha256"]
