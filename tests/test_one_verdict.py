"""One verdict from explicit claims (issue 14): every built-in method through
``verify``, ``attack`` and ``audit`` on the same small data gives the same
verdict; the audit marks a criterion PASS only where a claim the release states
covers it; a tampered release fails in all three; a claim that cannot be
checked without the trail leaves all three INCOMPLETE."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from tampering import recount

from privtool.registry import load_registry

PARTITIONERS = ("horpart", "suppression", "adding", "remaining-list")
DISASSOCIATION = [
    (f"disassociation-{p}-{'refine' if refine else 'norefine'}{'-safe' if safe else ''}", p, refine, safe)
    for p in PARTITIONERS
    for refine in (True, False)
    for safe in (False, True)
]
GENERALIZATION = ("partition", "lgr")
RULE_HIDING = ("mfi-relevance", "fhsar", "mdsrrc", "exact")
METHODS = [name for name, *_ in DISASSOCIATION] + list(GENERALIZATION) + list(RULE_HIDING)
FAST = ["-q", "--executor", "serial"]


def small_records() -> list[list[int]]:
    """60 baskets over 10 items with a few frequent pairs (seeded)."""
    rng = np.random.default_rng(14)
    popular = np.array([0.55, 0.5, 0.4, 0.3, 0.25, 0.2, 0.15, 0.1, 0.08, 0.06])
    records = []
    for _ in range(60):
        row = sorted(int(i) for i in np.flatnonzero(rng.random(10) < popular))
        records.append(row or [int(rng.integers(0, 10))])
    return records


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("one-verdict") / "baskets.dat"
    path.write_text("".join(" ".join(map(str, r)) + "\n" for r in small_records()))
    return path


def make_release(run_cli, method: str, data: Path, folder: Path) -> tuple[Path, Path]:
    release, trail = folder / f"{method}.json", folder / f"{method}.trail.json"
    if method in RULE_HIDING:
        extra = ["--time-limit", "10"] if method == "exact" else []
        args = ["hide", data, "--sensitive", "2", "--pick", "top", "--min-support", "0.15", "--min-confidence", "0.5"]
        args += ["--sanitizer", method, "-o", folder / f"{method}.dat", "--release", release, "--trail", trail, "-q"]
        made = run_cli(*args, *extra)
    elif method in GENERALIZATION:
        args = ["anonymize", data, "--method", method, "--k", "3", "--hierarchy", "3", "--hierarchy-format", "fanout"]
        made = run_cli(*args, "-o", release, "--trail", trail, *FAST)
    else:
        _, partitioner, refine, safe = next(d for d in DISASSOCIATION if d[0] == method)
        args = ["anonymize", data, "--method", "disassociation", "--partitioner", partitioner, "--k", "3", "--m", "2"]
        args += ["--max-cluster-size", "8", "--refiner", "refine" if refine else "none"]
        args += ["--sanitizer", "safe-disassociation"] if safe else []
        made = run_cli(*args, "-o", release, "--trail", trail, *FAST)
    assert made.code == 0, made.err
    return release, trail


def three_verdicts(run_cli, release: Path, folder: Path, *evidence: object) -> dict[str, dict]:
    """verify, attack and audit on one release: each one's exit code and JSON report."""
    verify = run_cli("verify", release, *evidence, "--json", *FAST)
    attack = run_cli("attack", release, *evidence, "--targets", "30", "--json", *FAST)
    report = folder / f"{release.stem}.audit.json"
    audit = run_cli("audit", release, *evidence, "--targets", "30", "--format", "json", "-o", report, *FAST)
    assert audit.code in (0, 1), audit.err
    return {
        "verify": {"code": verify.code, **json.loads(verify.out)},
        "attack": {"code": attack.code, **json.loads(attack.out)},
        "audit": {"code": audit.code, **json.loads(report.read_text())},
    }


def covered_criteria(claims: list[dict]) -> set[tuple[str, str]]:
    """(criterion, adversary) pairs that a stated claim addresses."""
    models = {m.name: m for m in load_registry().all("claim_model")}
    order = ["consistent-reconstruction", "algorithm-aware"]
    return {
        (criterion, adversary)
        for claim in claims
        for criterion in models[claim["model"]].criteria
        for adversary in order[: order.index(claim["adversary"]) + 1]
    }


@pytest.mark.parametrize("method", METHODS)
def test_verify_attack_and_audit_agree(run_cli, data: Path, tmp_path: Path, method: str) -> None:
    release, trail = make_release(run_cli, method, data, tmp_path)
    stated = json.loads(release.read_text())["claims"]
    assert stated, f"{method} states no claim"
    results = three_verdicts(run_cli, release, tmp_path, "--original", data, "--trail", trail)
    verdicts = {command: (r["verdict"], r["code"]) for command, r in results.items()}
    assert set(verdicts.values()) == {("PASS", 0)}, verdicts
    for command, result in results.items():
        assert [c["claim"] for c in result["claims"]] == stated, command
        assert all(c["status"] == "holds" for c in result["claims"]), (command, result["claims"])
    covered = covered_criteria(stated)
    for criterion in results["audit"]["criteria"]:
        key = (criterion["criterion"], criterion["adversary"])
        if criterion["status"] == "PASS":
            assert key in covered, (method, key)
        else:
            assert key not in covered and criterion["status"] == "NOT PROTECTED", (method, criterion)
    statuses = {(c["criterion"], c["adversary"]): c["status"] for c in results["audit"]["criteria"]}
    if method in RULE_HIDING:
        assert statuses[("inference", "consistent-reconstruction")] == "PASS"
        assert statuses[("singling-out", "consistent-reconstruction")] == "NOT PROTECTED"
        exposure = next(c["exposure"] for c in results["audit"]["criteria"] if c["criterion"] == "singling-out")
        assert any("attacked records" in e for e in exposure), exposure
    else:
        assert statuses[("singling-out", "consistent-reconstruction")] == "PASS"
        safe = method.endswith("-safe")
        assert statuses[("inference", "consistent-reconstruction")] == ("PASS" if safe else "NOT PROTECTED")
    assert all(status != "PASS" for (_, adversary), status in statuses.items() if adversary == "algorithm-aware")


def test_a_chunk_below_k_fails_everywhere(run_cli, data: Path, tmp_path: Path) -> None:
    release, _ = make_release(run_cli, "disassociation-adding-norefine", data, tmp_path)
    obj = json.loads(release.read_text())
    cluster, chunk = next((c, ch) for c in obj["clusters"] for ch in c["record_chunks"])
    item = chunk[0][0]
    holders = [row for row in chunk if item in row]
    for row in holders[1:]:  # the item is left in one sub-record of its chunk: support 1 < k = 3
        row.remove(item)
    cluster["record_chunks"] = [[row for row in ch if row] for ch in cluster["record_chunks"]]
    recount(obj)  # a careful tamperer recounts (else: structure)
    tampered = tmp_path / "tampered.json"
    tampered.write_text(json.dumps(obj))
    results = three_verdicts(run_cli, tampered, tmp_path, "--original", data)
    assert {command: (r["verdict"], r["code"]) for command, r in results.items()} == {
        "verify": ("FAIL", 1),
        "attack": ("FAIL", 1),
        "audit": ("FAIL", 1),
    }
    for result in results.values():
        [claim] = result["claims"]
        assert claim["claim"]["model"] == "km-anonymity" and claim["status"] == "fails"
    witness = next(c["witness"] for c in results["verify"]["certificates"] if c["guarantee"] == "km-anonymity")
    assert witness["itemset"] == [item] and witness["support"] == 1 and witness["cluster"] == cluster["id"]
    criteria = {(c["criterion"], c["adversary"]): c["status"] for c in results["audit"]["criteria"]}
    assert criteria[("singling-out", "consistent-reconstruction")] == "FAIL"


def test_rule_hiding_without_the_trail_is_incomplete_everywhere(run_cli, data: Path, tmp_path: Path) -> None:
    release, _ = make_release(run_cli, "mfi-relevance", data, tmp_path)
    results = three_verdicts(run_cli, release, tmp_path, "--original", data)
    assert {command: (r["verdict"], r["code"]) for command, r in results.items()} == {
        "verify": ("INCOMPLETE", 1),
        "attack": ("INCOMPLETE", 1),
        "audit": ("INCOMPLETE", 1),
    }
    for result in results.values():
        [claim] = result["claims"]
        assert claim["status"] == "unverified" and "trail" in claim["reason"]
    criteria = {(c["criterion"], c["adversary"]): c["status"] for c in results["audit"]["criteria"]}
    assert criteria[("inference", "consistent-reconstruction")] == "INCOMPLETE"
