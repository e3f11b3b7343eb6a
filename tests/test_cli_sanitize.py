"""``privtool sanitize``: a release file in, a sanitized release (and trail) out."""

from __future__ import annotations

import json

from safe_examples import figure1_release

from privtool.attacks.cover import vulnerable_chunks
from privtool.release import read_release, write_release
from privtool.trail import Trail, read_trail, write_trail


def _write(tmp_path):
    path = tmp_path / "plain.json"
    release = figure1_release()
    release.provenance = {"input_sha256": "ab" * 32, "seed": 0}
    write_release(release, path)
    return path


def test_sanitize_writes_a_cover_free_release_and_trail(run_cli, tmp_path) -> None:
    plain = _write(tmp_path)
    trail = tmp_path / "plain.trail.json"
    write_trail(Trail(release_sha256=read_release(plain).sha256(), cluster_of_record=["c0"] * 6), trail)
    out, new_trail = tmp_path / "safe.json", tmp_path / "safe.trail.json"
    result = run_cli(
        "sanitize",
        plain,
        "--sanitizer",
        "safe-disassociation",
        "-o",
        out,
        "--trail",
        trail,
        "--trail-out",
        new_trail,
        "--seed",
        "4",
        "--executor",
        "serial",
        "-q",
    )
    assert result.code == 0, result.err
    safe = read_release(out)
    assert vulnerable_chunks(safe) == []
    assert safe.params["sanitizers"] == ["safe-disassociation"]
    assert safe.params["k"] == 2 and safe.params["max_cluster_size"] == 30  # taken from the release
    assert safe.provenance.keys() == {"privtool", "plugins"}  # seed and input SHA-256 are the trail's
    written = read_trail(new_trail)
    assert written.seed == 4 and written.input_sha256 == "ab" * 32
    assert written.stats["ghost_subrecords"] == 2 and "ghost_subrecords" not in safe.stats
    assert written.release_sha256 == safe.sha256()
    assert written.cluster_of_record == ["c0"] * 6
    assert len(written.ghost_records) == 2
    again = tmp_path / "again.json"
    assert (
        run_cli(
            "sanitize",
            plain,
            "--sanitizer",
            "safe-disassociation",
            "-o",
            again,
            "--seed",
            "4",
            "--executor",
            "serial",
            "-q",
        ).code
        == 0
    )
    assert again.read_text() == out.read_text()


def test_sanitize_option_overrides_the_release_params(run_cli, tmp_path) -> None:
    plain = _write(tmp_path)
    out, new_trail = tmp_path / "safe.json", tmp_path / "safe.trail.json"
    # with delta = 7 precondition (3) fails (6 > 7 - 2): the fallback suppresses the chunk
    result = run_cli(
        "sanitize",
        plain,
        "--sanitizer",
        "safe-disassociation",
        "-o",
        out,
        "--trail-out",
        new_trail,
        "--max-cluster-size",
        "7",
        "--executor",
        "serial",
        "-q",
    )
    assert result.code == 0, result.err
    safe = read_release(out)
    assert safe.clusters[0].record_chunks == [[["e"], ["e"]]]
    assert read_trail(new_trail).stats["suppressed_chunks"] == 1


def test_sanitize_errors_are_one_sentence_exit_2(run_cli, tmp_path) -> None:
    plain = _write(tmp_path)
    out = tmp_path / "safe.json"
    cases = [
        (("sanitize", plain, "-o", out), "--sanitizer"),
        (("sanitize", plain, "--sanitizer", "safe-disassociation"), "-o"),
        (("sanitize", plain, "--sanitizer", "nope", "-o", out), "unknown sanitizer"),
        (("sanitize", tmp_path / "missing.json", "--sanitizer", "safe-disassociation", "-o", out), "no such release"),
        (("sanitize", plain, "--sanitizer", "safe-disassociation", "-o", out, "--k", "1"), "--k must be at least 2"),
        (("sanitize", plain, "--sanitizer", "safe-disassociation", "-o", out, "--bogus", "1"), "no option --bogus"),
        (
            ("sanitize", plain, "--sanitizer", "safe-disassociation", "-o", out, "--m", "1"),
            "--m 1: safe disassociation",
        ),
        (
            ("sanitize", plain, "--sanitizer", "safe-disassociation-hardened", "-o", out, "--min-preimages", "1"),
            "--min-preimages must be at least 2",
        ),
    ]
    for args, message in cases:
        result = run_cli(*args)
        assert result.code == 2, args
        assert message in result.err and "Traceback" not in result.err, result.err
        assert len(result.err.strip().splitlines()) == 1
        assert not out.exists()
    other = tmp_path / "other.trail.json"
    write_trail(Trail(release_sha256="0" * 64), other)
    result = run_cli("sanitize", plain, "--sanitizer", "safe-disassociation", "-o", out, "--trail", other)
    assert result.code == 2 and "belongs to another release" in result.err
    sanitized = tmp_path / "records.json"
    sanitized.write_text(
        json.dumps(
            {"format": "privtool-release/1", "kind": "sanitized", "params": {}, "provenance": {}, "records": [["a"]]}
        )
    )
    result = run_cli("sanitize", sanitized, "--sanitizer", "safe-disassociation", "-o", out)
    assert result.code == 2 and "applies to disassociated" in result.err
    assert not out.exists()


def test_hardened_sanitizer_from_the_command_line(run_cli, tmp_path) -> None:
    """The hardened release claims cover-freedom against the algorithm-aware
    adversary, and verify proves it (the criteria table has both columns)."""
    plain = _write(tmp_path)
    out = tmp_path / "hard.json"
    result = run_cli("sanitize", plain, "--sanitizer", "safe-disassociation-hardened", "-o", out, "-q")
    assert result.code == 0, result.err
    claims = json.loads(out.read_text())["claims"]
    assert {"model": "cover-freedom", "m": 2, "adversary": "algorithm-aware"} in claims
    verified = run_cli("verify", out, "--json")
    assert verified.code == 0, verified.out
    report = json.loads(verified.out)
    claim = next(c for c in report["claims"] if c["claim"]["model"] == "cover-freedom")
    assert [run["verifier"] for run in claim["verifiers"]] == ["cover-freedom-algorithm-aware"]
    rows = {(c["criterion"], c["adversary"]): c["status"] for c in report["criteria"]}
    assert rows[("inference", "algorithm-aware")] == "PASS"
    assert rows[("singling-out", "algorithm-aware")] == "NOT PROTECTED"
