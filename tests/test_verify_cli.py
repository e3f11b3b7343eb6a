"""``privtool verify``: exit codes 0/1/2, JSON output, overrides, bad input."""

from __future__ import annotations

import json

import pytest

from privtool.claims import Claim
from privtool.dataset import Dataset
from privtool.release import Cluster, Release, write_release
from privtool.trail import Trail, write_trail

RECORDS = [
    ["a", "e"],
    ["a", "b", "c", "d", "e"],
    ["a", "b", "c", "d"],
    ["a", "b", "c", "d"],
    ["a", "b", "c", "d"],
    ["a", "b"],
]
CHUNKS = [
    [["a"], ["a", "b", "c", "d"], ["a", "b", "c", "d"], ["a", "b", "c", "d"], ["a", "b", "c", "d"], ["a", "b"]],
    [["e"], ["e"]],
]


@pytest.fixture
def figure1(tmp_path):
    """Awad et al. Figure 1: the 2^2-disassociated release, its original and trail."""
    data = tmp_path / "fig1.csv"
    data.write_text("".join(",".join(r) + "\n" for r in RECORDS))
    original = Dataset.from_records(RECORDS)
    release = Release(
        "disassociated",
        params={"method": "disassociation", "k": 2, "m": 2},
        claims=[Claim("km-anonymity", {"k": 2, "m": 2})],
        provenance={"input_sha256": original.content_sha256()},
        stats={"records_in": 6, "suppressed_records": 0},
        clusters=[Cluster("c0", 6, CHUNKS, [])],
    )
    path = tmp_path / "fig1.json"
    write_release(release, path)
    trail = tmp_path / "fig1.trail.json"
    write_trail(
        Trail(release_sha256=release.sha256(), input_sha256=original.content_sha256(), cluster_of_record=["c0"] * 6),
        trail,
    )
    return path, data, trail, release


def test_valid_release_exits_0_and_json_lists_every_certificate(run_cli, figure1):
    path, data, trail, release = figure1
    result = run_cli(
        "verify", path, "--original", data, "--trail", trail, "--json", "--engine", "both", "--executor", "serial"
    )
    assert result.code == 0, result.err
    report = json.loads(result.out)
    assert report["holds"] is True and report["release_sha256"] == release.sha256()
    assert report["original_sha256"] == report["input_sha256"]
    assert report["verdict"] == "PASS" and report["exit_code"] == 0
    [claim] = report["claims"]
    assert claim["claim"] == {"model": "km-anonymity", "k": 2, "m": 2, "adversary": "consistent-reconstruction"}
    assert claim["status"] == "holds"
    assert {v["verifier"] for v in claim["verifiers"]} == {"km-anonymity", "disassociation-guarantee"}
    by_name = {c["guarantee"]: c for c in report["certificates"]}
    assert by_name["km-anonymity"]["holds"] is True and by_name["km-anonymity"]["units"] == 2
    assert by_name["faithfulness"]["holds"] is True
    # A plain disassociated release does not claim cover-freedom: verify does not
    # hold it to it (the cover problem is a risk that attack and audit report).
    assert "cover-freedom" not in by_name
    for c in report["certificates"]:
        assert c["details"]["release_sha256"] == release.sha256()


def test_table_output(run_cli, figure1):
    path, *_ = figure1
    result = run_cli("verify", path, "--executor", "serial", "-q")
    assert result.code == 0
    assert "km-anonymity (k=2, m=2)" in result.out and "Verdict: PASS (every claim holds)" in result.out


def test_stricter_k_refutes_with_witness_and_exits_1(run_cli, figure1):
    path, *_ = figure1
    result = run_cli("verify", path, "--k", "3", "--json", "--executor", "serial", "--engine", "cpsat")
    assert result.code == 1
    km = {c["guarantee"]: c for c in json.loads(result.out)["certificates"]}["km-anonymity"]
    assert km["holds"] is False and km["witness"]["support"] < 3 and km["details"]["k"] == 3


def test_weaker_k_does_not_certify_the_stated_claim(run_cli, figure1, tmp_path):
    path, *_ = figure1
    release = json.loads(path.read_text())
    release["claims"][0]["k"] = 5
    stated5 = tmp_path / "k5.json"
    stated5.write_text(json.dumps(release))
    result = run_cli("verify", stated5, "--k", "2", "--json", "--executor", "serial")
    assert result.code == 1
    report = json.loads(result.out)
    [claim] = report["claims"]
    assert report["verdict"] == "INCOMPLETE" and claim["status"] == "unverified"
    assert "--k 2 is weaker than the claimed k = 5" in claim["reason"] and claim["checked"]["k"] == 2


def test_only_leaves_the_other_claims_unverified(run_cli, figure1):
    path, *_ = figure1
    result = run_cli("verify", path, "--only", "faithfulness", "--json", "--executor", "serial")
    assert result.code == 1
    report = json.loads(result.out)
    assert report["verdict"] == "INCOMPLETE" and report["claims"][0]["status"] == "unverified"
    assert "--only" in report["claims"][0]["reason"]
    both = run_cli(
        "verify", path, "--only", "km-anonymity", "--only", "disassociation-guarantee", "--json", "--executor", "serial"
    )
    assert both.code == 0 and json.loads(both.out)["verdict"] == "PASS"
    one = json.loads(run_cli("verify", path, "--only", "km-anonymity", "--json", "--executor", "serial").out)
    assert one["verdict"] == "PASS"  # every selected verifier that proves the claim proved it


def test_claimed_cover_freedom_fails(run_cli, figure1, tmp_path):
    path, *_ = figure1
    release = json.loads(path.read_text())
    release["claims"].append({"model": "cover-freedom", "m": 2, "adversary": "consistent-reconstruction"})
    safe = tmp_path / "safe.json"
    safe.write_text(json.dumps(release))
    result = run_cli("verify", safe, "--executor", "serial", "-q", "--json")
    assert result.code == 1
    claims = {c["claim"]["model"]: c for c in json.loads(result.out)["claims"]}
    assert claims["cover-freedom"]["status"] == "fails" and claims["km-anonymity"]["status"] == "holds"


def test_claim_without_its_parameter_is_a_structure_failure(run_cli, figure1, tmp_path):
    path, *_ = figure1
    release = json.loads(path.read_text())
    del release["claims"][0]["k"]
    broken = tmp_path / "nok.json"
    broken.write_text(json.dumps(release))
    result = run_cli("verify", broken, "--json", "--executor", "serial")
    assert result.code == 1
    report = json.loads(result.out)
    assert report["verdict"] == "FAIL" and report["claims"] == []
    assert report["structure"] == [{"path": "$.claims[0].k", "problem": "missing"}]


@pytest.mark.parametrize(
    "args, message",
    [
        (["missing.json"], "no such release file"),
        (["{bad}", "--k", "1"], "--k must be at least 2"),
        (["{bad}", "--m", "0"], "--m must be at least 1"),
        (["{bad}"], "not valid JSON"),
        (["{good}", "--original", "nope.dat"], "no such file"),
        (["{good}", "--trail", "{bad}"], "not valid JSON"),
        (["{good}", "--only", "rule-hiding"], "applies to sanitized releases"),
        (["{invalid}"], "invalid release at $.clusters[0].size"),
    ],
)
def test_bad_input_exits_2_with_one_sentence(run_cli, figure1, tmp_path, args, message):
    path, *_ = figure1
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    invalid = tmp_path / "invalid.json"
    release = json.loads(path.read_text())
    release["clusters"][0]["size"] = "six"
    invalid.write_text(json.dumps(release))
    names = {"{bad}": bad, "{good}": path, "{invalid}": invalid}
    argv = [str(names.get(a, tmp_path / a if a.endswith((".json", ".dat")) else a)) for a in args]
    result = run_cli("verify", *argv, "--executor", "serial", "-q")
    assert result.code == 2
    assert message in result.err and "Traceback" not in result.err
    assert result.err.count("\n") == 1


def test_safe_disassociation_release_is_certified_end_to_end(run_cli, figure1, tmp_path):
    """Figure 1 through the safe-disassociation sanitizer (privtool sanitize):
    cover-free, still 2^2-anonymous, and faithful (partial suppression explained by
    the ghost sub-records of the trail and counted in the stats)."""
    path, data, trail, _ = figure1
    safe, safe_trail = tmp_path / "safe.json", tmp_path / "safe.trail.json"
    made = run_cli(
        "sanitize",
        path,
        "--sanitizer",
        "safe-disassociation",
        "-o",
        safe,
        "--trail",
        trail,
        "--trail-out",
        safe_trail,
        "-q",
    )
    assert made.code == 0, made.err
    result = run_cli("verify", safe, "--original", data, "--trail", safe_trail, "--json", "--executor", "serial")
    assert result.code == 0, result.out
    by_name = {c["guarantee"]: c for c in json.loads(result.out)["certificates"]}
    assert by_name["cover-freedom"]["holds"] is True
    models = {c["claim"]["model"]: c["status"] for c in json.loads(result.out)["claims"]}
    assert models == {"km-anonymity": "holds", "cover-freedom": "holds"}
    assert by_name["faithfulness"]["details"]["removed_without_trail_entry"] == 4
    forged = json.loads(safe_trail.read_text())
    forged["ghost_records"] = forged["ghost_records"][:1]  # one ghost sub-record no longer accounted for
    forged_path = tmp_path / "forged.trail.json"
    forged_path.write_text(json.dumps(forged))
    result = run_cli("verify", safe, "--original", data, "--trail", forged_path, "--json", "--executor", "serial")
    assert result.code == 1
    faith = {c["guarantee"]: c for c in json.loads(result.out)["certificates"]}["faithfulness"]
    assert faith["holds"] is False  # the size (8 = 6 records + 2 ghosts) no longer adds up
    assert faith["witness"]["problem"] == "the cluster size is not its input records plus at most its ghost sub-records"


def test_malformed_trail_entries_exit_2(run_cli, figure1, tmp_path):
    path, data, trail, _ = figure1
    obj = json.loads(trail.read_text())
    obj["ghost_records"] = [{"cluster": "c0", "chunk": "first", "items": ["a"]}]
    bad = tmp_path / "bad.trail.json"
    bad.write_text(json.dumps(obj))
    result = run_cli("verify", path, "--original", data, "--trail", bad, "--executor", "serial", "-q")
    assert result.code == 2 and "$.ghost_records[0]" in result.err and "Traceback" not in result.err
