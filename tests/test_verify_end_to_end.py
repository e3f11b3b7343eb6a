"""Every method on main, run through the real CLI on small data, is certified by
``privtool verify`` (with the original and the trail), and a planted change to
each real release is refuted."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest
from tampering import write_tampered


def write_random_data(path, n=240, items=40, seed=3):
    """Integer-labelled baskets with skewed popularity (FIMI format)."""
    rng = np.random.default_rng(seed)
    weights = 1.0 / np.arange(1, items + 1)
    weights /= weights.sum()
    lines = []
    for _ in range(n):
        size = int(rng.integers(1, 7))
        record = sorted(set(rng.choice(items, size=size, p=weights).tolist()))
        lines.append(" ".join(str(x + 1) for x in record))
    path.write_text("\n".join(lines) + "\n")
    return path


def certificates(result):
    return {c["guarantee"]: c for c in json.loads(result.out)["certificates"]}


@pytest.mark.parametrize("partitioner", ["adding", "horpart", "suppression", "remaining-list"])
def test_disassociation_then_safe_disassociation_are_certified(run_cli, tmp_path, partitioner):
    data = write_random_data(tmp_path / "data.dat", n=150)
    release, trail = tmp_path / "r.json", tmp_path / "t.json"
    made = run_cli(
        "anonymize",
        data,
        "--method",
        "disassociation",
        "--partitioner",
        partitioner,
        "--k",
        "3",
        "--m",
        "2",
        "--max-cluster-size",
        "12",
        "-o",
        release,
        "--trail",
        trail,
        "--executor",
        "serial",
        "-q",
    )
    assert made.code == 0, made.err
    engine = "both" if partitioner == "adding" else "auto"  # cross-check the engines once, keep the suite short
    checked = run_cli(
        "verify", release, "--original", data, "--trail", trail, "--engine", engine, "--json", "--executor", "serial"
    )
    assert checked.code == 0, checked.out
    certs = certificates(checked)
    for name in ("km-anonymity", "disassociation-guarantee", "faithfulness"):
        assert certs[name]["holds"] is True, (name, certs[name])
    safe, safe_trail = tmp_path / "s.json", tmp_path / "st.json"
    made = run_cli(
        "sanitize",
        release,
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
    checked = run_cli("verify", safe, "--original", data, "--trail", safe_trail, "--json", "--executor", "serial")
    assert checked.code == 0, checked.out
    assert certificates(checked)["cover-freedom"]["holds"] is True


def test_real_disassociated_release_with_a_planted_rare_item_is_refuted(run_cli, tmp_path):
    data = write_random_data(tmp_path / "data.dat")
    release, trail = tmp_path / "r.json", tmp_path / "t.json"
    assert (
        run_cli(
            "anonymize",
            data,
            "--method",
            "disassociation",
            "--k",
            "3",
            "--m",
            "2",
            "-o",
            release,
            "--trail",
            trail,
            "--executor",
            "serial",
            "-q",
        ).code
        == 0
    )
    obj = json.loads(release.read_text())
    cluster = next(c for c in obj["clusters"] if c["record_chunks"])
    cluster["record_chunks"][0][0].append("99999")  # a rare item moved into a record chunk
    tampered = write_tampered(obj, tmp_path / "tampered.json")
    checked = run_cli("verify", tampered, "--trail", trail, "--json", "--executor", "serial")
    assert checked.code == 1
    certs = certificates(checked)
    assert certs["km-anonymity"]["witness"]["itemset"] == ["99999"] and certs["km-anonymity"]["witness"]["support"] == 1
    # With the original, the item is refuted before any certificate: the original never held it.
    against_original = run_cli("verify", tampered, "--original", data, "--json", "--executor", "serial")
    assert against_original.code == 1
    assert ["99999" in problem["problem"] for problem in json.loads(against_original.out)["structure"]] == [True]


@pytest.mark.parametrize("method", ["partition", "lgr"])
def test_generalization_methods_are_certified(run_cli, tmp_path, method):
    data = write_random_data(tmp_path / "data.dat", n=120, items=30)
    release, trail = tmp_path / "g.json", tmp_path / "gt.json"
    made = run_cli(
        "anonymize",
        data,
        "--method",
        method,
        "--k",
        "4",
        "--hierarchy",
        "4",
        "--hierarchy-format",
        "fanout",
        "-o",
        release,
        "--trail",
        trail,
        "--executor",
        "serial",
        "-q",
    )
    assert made.code == 0, made.err
    checked = run_cli("verify", release, "--original", data, "--trail", trail, "--json", "--executor", "serial")
    assert checked.code == 0, checked.out
    certs = certificates(checked)
    assert certs["k-anonymity"]["holds"] and certs["hierarchy"]["holds"] and certs["faithfulness"]["holds"]
    assert certs["hierarchy"]["details"]["checked_against_original"] is True
    obj = json.loads(release.read_text())
    obj["records"][0] = ["1"] if obj["records"][0] != ["1"] else ["2"]  # a generalized record made unique
    tampered = tmp_path / "tampered.json"
    tampered.write_text(json.dumps(obj))
    assert run_cli("verify", tampered, "--json", "--executor", "serial").code == 1


@pytest.mark.parametrize("sanitizer", ["mfi-relevance", "fhsar", "mdsrrc"])
def test_rule_hiding_sanitizers_are_certified(run_cli, tmp_path, sanitizer):
    data = write_random_data(tmp_path / "data.dat", n=200, items=12)
    rules = tmp_path / "rules.txt"
    rules.write_text("1 => 2\n2 3 => 1\n")
    out, release, trail = tmp_path / "out.dat", tmp_path / "h.json", tmp_path / "ht.json"
    made = run_cli(
        "hide",
        data,
        "--rules",
        rules,
        "--min-support",
        "5",
        "--min-confidence",
        "0.3",
        "--sanitizer",
        sanitizer,
        "-o",
        out,
        "--release",
        release,
        "--trail",
        trail,
        "-q",
    )
    assert made.code == 0, made.err
    checked = run_cli("verify", release, "--original", data, "--trail", trail, "--json", "--executor", "serial")
    assert checked.code == 0, checked.out
    certs = certificates(checked)
    assert certs["rule-hiding"]["holds"] and certs["removal-only"]["holds"] and certs["faithfulness"]["holds"]
    assert certs["removal-only"]["engine"] == "trail"
    # Without the trail the sensitive rules are unknown (they are a secret): the
    # claim is unverified and the run INCOMPLETE, while removal-only still holds.
    checked = run_cli("verify", release, "--original", data, "--json", "--executor", "serial")
    report = json.loads(checked.out)
    assert checked.code == 1 and report["verdict"] == "INCOMPLETE"
    assert report["claims"][0]["status"] == "unverified" and "trail" in report["claims"][0]["reason"]
    assert certificates(checked)["removal-only"]["engine"] == "matching"
    obj = json.loads(release.read_text())
    obj["claims"][0].update(min_confidence=0.0, min_support=1)  # a rule left above the (now lowered) threshold
    lowered = tmp_path / "lowered.json"
    lowered.write_text(json.dumps(obj))
    checked = run_cli("verify", lowered, "--trail", trail, "--json", "--executor", "serial")
    claim = json.loads(checked.out)["claims"][0]
    assert claim["status"] == "unverified" and "belongs to another release" in claim["reason"]
    rebound, rebound_trail = json.loads(trail.read_text()), tmp_path / "lowered.trail.json"
    rebound["release_sha256"] = hashlib.sha256(lowered.read_bytes()).hexdigest()
    rebound_trail.write_text(json.dumps(rebound))
    checked = run_cli("verify", lowered, "--trail", rebound_trail, "--json", "--executor", "serial")
    rule = certificates(checked)["rule-hiding"]
    visible = [
        r
        for r in json.loads(trail.read_text())["sensitive_rules"]
        if any(set(r[0]) | set(r[1]) <= set(record) for record in obj["records"])
    ]  # s(X u Y) >= 1 = min_support
    assert rule["holds"] is (not visible) and checked.code == (1 if visible else 0)
    if visible:
        assert rule["witness"]["support"] >= 1
