"""Issue 16: readers treat every line end alike, non-seekable inputs work, and
each input that used to end in a traceback is one sentence with exit code 2."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from privtool.dataset import Dataset
from privtool.io import write_dataset
from privtool.registry import Registry

RECORDS = [["1", "2"], ["3", "4"], [], ["5", "6", "7"], ["2"]]


def one_line_error(result, *fragments: str) -> str:
    assert result.code == 2, (result.code, result.out, result.err)
    lines = result.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("privtool: error: "), result.err
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])
    return lines[0]


# ------------------------------------------------------------------ line ends
@pytest.mark.parametrize("fmt", ["fimi", "basket", "spmf", "csv", "csv-long", "jsonl"])
def test_lf_crlf_and_lone_cr_read_alike_in_every_text_format(registry: Registry, tmp_path: Path, fmt: str) -> None:
    extension = {"fimi": "dat", "csv-long": "long.csv"}.get(fmt, fmt)
    records = [r for r in RECORDS if r] if fmt == "csv-long" else RECORDS  # csv-long holds no empty record
    lf = tmp_path / f"lf.{extension}"
    write_dataset(registry, Dataset.from_records(records), lf)
    data = lf.read_bytes()
    assert b"\r" not in data
    read = {}
    for name, end in (("lf", b"\n"), ("crlf", b"\r\n"), ("cr", b"\r")):
        path = tmp_path / f"{name}.{extension}"
        path.write_bytes(data.replace(b"\n", end))
        from privtool.io import read_dataset

        read[name] = read_dataset(registry, path).to_label_records()
    assert read["lf"] == read["crlf"] == read["cr"]
    assert read["lf"] == Dataset.from_records(records).to_label_records()


def test_a_fimi_file_with_cr_line_ends_has_one_record_per_line(run_cli, tmp_path: Path) -> None:
    """The issue's example: printf '1 2\\r3 4\\r5 6\\n' > cr.dat was one record."""
    for name in ("cr.dat", "cr.basket", "cr.spmf"):
        path = tmp_path / name
        path.write_bytes(b"1 2\r3 4\r5 6\n")
        assert json.loads(run_cli("stats", path, "--json").out)["records"] == 3


def test_an_error_after_lone_crs_names_the_right_line(run_cli, tmp_path: Path) -> None:
    path = tmp_path / "bad.dat"
    path.write_bytes(b"1 2\r3 4\rx 6\n")
    one_line_error(run_cli("stats", path), "bad.dat, line 3: 'x' is not an integer item id")
    latin = tmp_path / "latin.csv"
    latin.write_bytes(b"a,b\rc\rna\xefve\n")
    one_line_error(run_cli("stats", latin), "latin.csv, line 3: byte 0xef is not UTF-8 text")


def test_hierarchy_and_rule_files_take_any_line_end(run_cli, tmp_path: Path) -> None:
    data = tmp_path / "d.basket"
    data.write_text("a b\na b\na c\nb c\na b c\n")
    hierarchy = tmp_path / "h.csv"
    hierarchy.write_bytes(b"child,parent\rab,ALL\rc,ALL\ra,ab\rb,ab\r")
    checked = run_cli("hierarchy", "check", hierarchy, data)
    assert checked.code == 0, checked.err
    rules = tmp_path / "rules.txt"
    rules.write_bytes(b"a => b\rb => c\r")
    hidden = run_cli(
        "hide", data, "--rules", rules, "--min-support", "1", "--min-confidence", "0.1", "-o", tmp_path / "h.basket",
        "-q",
    )  # fmt: skip
    assert hidden.code == 0, hidden.err


# --------------------------------------------------------- non-seekable inputs
def _fifo_with(tmp_path: Path, name: str, content: bytes) -> Path:
    fifo = tmp_path / name
    os.mkfifo(fifo)

    def feed() -> None:
        with open(fifo, "wb") as handle:
            handle.write(content)

    threading.Thread(target=feed, daemon=True).start()
    return fifo


def test_fifos_work_as_inputs(run_cli, tmp_path: Path) -> None:
    plain = b"1 2\n1 2\n1 3\n2 3\n1 2 3\n"
    stats = run_cli("stats", _fifo_with(tmp_path, "data.dat", plain), "--json")
    assert stats.code == 0 and json.loads(stats.out)["records"] == 5
    packed = run_cli("stats", _fifo_with(tmp_path, "packed.dat.gz", gzip.compress(plain)), "--json")
    assert packed.code == 0 and json.loads(packed.out)["records"] == 5
    release, trail = tmp_path / "r.json", tmp_path / "t.json"
    made = run_cli(
        "anonymize", _fifo_with(tmp_path, "in.dat", plain), "--method", "disassociation", "--k", "2",
        "-o", release, "--trail", trail, "--executor", "serial", "-q",
    )  # fmt: skip
    assert made.code == 0, made.err
    verified = run_cli(
        "verify", _fifo_with(tmp_path, "r-fifo.json", release.read_bytes()),
        "--trail", _fifo_with(tmp_path, "t-fifo.json", trail.read_bytes()),
        "--original", _fifo_with(tmp_path, "o.dat", plain), "--executor", "serial", "--json",
    )  # fmt: skip
    assert verified.code == 0, verified.out + verified.err
    assert json.loads(verified.out)["release_sha256"] == read_sha(release)


def read_sha(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_dev_stdin_works_as_an_input() -> None:
    done = subprocess.run(
        [sys.executable, "-c", "import sys; from privtool.cli import main; sys.exit(main(sys.argv[1:]))",
         "stats", "/dev/stdin", "--format", "fimi", "--json"],
        input=b"1 2\r\n3 4\r\n", capture_output=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["records"] == 2


# ------------------------------------------------ inputs that were tracebacks
@pytest.fixture
def release(run_cli, tmp_path: Path) -> Path:
    data = tmp_path / "d.basket"
    data.write_text("a b\na b\na c\nb c\na b c\na b\n")
    path = tmp_path / "r.json"
    made = run_cli("anonymize", data, "--method", "disassociation", "--k", "2", "-o", path, "-q")
    assert made.code == 0, made.err
    return path


READERS = [["verify"], ["attack"], ["audit"], ["metrics"], ["sanitize", "--sanitizer", "safe-disassociation"]]


def _every_reader(run_cli, path: Path, tmp_path: Path, *fragments: str) -> None:
    for command in READERS:
        extra = ["-o", str(tmp_path / "out.json")] if command[0] == "sanitize" else []
        one_line_error(run_cli(*command, path, *extra, "-q"), *fragments)


def test_json_nested_100000_deep(run_cli, tmp_path: Path) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    _every_reader(run_cli, deep, tmp_path, "deep.json: the release nests arrays or objects too deeply")
    nested = {"format": "privtool-release/2", "kind": "sanitized", "provenance": {}, "claims": [], "records": []}
    nested["params"] = {"x": json.loads("[" * 500 + "]" * 500)}
    within = tmp_path / "within.json"
    within.write_text(json.dumps(nested))
    _every_reader(run_cli, within, tmp_path, "$.params: nested more than 16 levels deep")
    nested["params"] = {}
    within.write_text(json.dumps(nested))
    trail = tmp_path / "trail.json"
    trail.write_text(json.dumps({"format": "privtool-trail/2", "notes": {"x": json.loads("[" * 500 + "]" * 500)}}))
    one_line_error(run_cli("verify", within, "--trail", trail), "$.notes: nested more than 16 levels deep")


def test_lone_surrogates_in_a_release_and_a_trail(run_cli, release: Path, tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text(release.read_text().replace('"c0"', '"\\udc80"', 1))
    _every_reader(run_cli, broken, tmp_path, "broken.json, line 1: the release escapes a lone surrogate (\\udc80)")
    trail = tmp_path / "t.json"
    trail.write_text('{"format": "privtool-trail/2", "cluster_of_record": ["\\ud800"]}')
    one_line_error(run_cli("verify", release, "--trail", trail), "the trail escapes a lone surrogate (\\ud800)")


def test_huge_cluster_sizes(run_cli, release: Path, tmp_path: Path) -> None:
    for size in (10**30, 2**31):
        obj = json.loads(release.read_text())
        obj["clusters"][0]["size"] = size
        huge = tmp_path / "huge.json"
        huge.write_text(json.dumps(obj))
        _every_reader(run_cli, huge, tmp_path, "invalid release at $.clusters[0].size: must be at most 2,147,483,647")


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        ("[method]\nx = 1\n", "key 'method' holds dict values"),
        ("method = 3\n", "method must be a string, not 3"),
        ("sanitizer = 5\n", "sanitizer must be a string or an array of strings"),
        ("when = 1979-05-27\n", "key 'when' holds date values"),
        ("k = [[2]]\n", "key 'k' holds list values"),
        ("k = 2\nk = 3\n", "not a valid TOML file"),
        ("k = 2\r\n", None),
    ],
)
def test_malformed_toml_configs(run_cli, release: Path, tmp_path: Path, content: str, fragment: str | None) -> None:
    config = tmp_path / "c.toml"
    config.write_text(content, newline="")
    data = tmp_path / "d.basket"
    result = run_cli("anonymize", data, "--method", "disassociation", "-o", tmp_path / "x.json", "--config", config)
    if fragment is None:
        assert result.code == 0, result.err
    else:
        one_line_error(result, f"c.toml: {fragment}")
    sanitized = run_cli("sanitize", release, "--sanitizer", "safe-disassociation", "-o", tmp_path / "s.json",
                        "--config", config, "-q")  # fmt: skip
    assert sanitized.code == (0 if fragment is None else 2), sanitized.err


def test_a_corrupt_gzip_body(run_cli, tmp_path: Path) -> None:
    packed = bytearray(gzip.compress(b"1 2\n3 4\n" * 1000))
    packed[30] ^= 0xFF
    packed[40] ^= 0xFF
    path = tmp_path / "corrupt.dat.gz"
    path.write_bytes(bytes(packed))
    one_line_error(run_cli("stats", path), "corrupt.dat.gz: cannot read the gzip-compressed file")
    hierarchy = tmp_path / "h.csv.gz"
    hierarchy.write_bytes(bytes(packed))
    one_line_error(run_cli("hierarchy", "show", hierarchy), "h.csv.gz: cannot read the gzip-compressed file")


@pytest.mark.parametrize(
    ("options", "fragment"),
    [
        (["--items", "100000000000"], "--items must be between 1 and 10,000,000"),
        (["--patterns", "10000000000"], "--patterns must be between 1 and 10,000,000"),
        (["--skew", "1e300"], "--skew must be between 0 and 20"),
        (["--avg-size", "nan"], "--avg-size must be between 1"),
        (["--records", "-1"], "--records must be at least 1"),
    ],
)
def test_extreme_synth_options(run_cli, tmp_path: Path, options: list[str], fragment: str) -> None:
    one_line_error(run_cli("synth", "-o", tmp_path / "s.dat", "-q", *options), fragment)
    assert not (tmp_path / "s.dat").exists()


LONG = [[str(j) for j in range(500)]] * 4 + [[str(j) for j in range(i, 500 + i)] for i in range(1, 11)]
"""Records of 500 items: 124,750 pairs and 2.6e9 itemsets of four items each."""


def test_rae_and_tkd_refuse_what_long_records_would_allocate(run_cli, tmp_path: Path) -> None:
    original = tmp_path / "long.jsonl"
    original.write_text("".join(json.dumps(r) + "\n" for r in LONG * 30))
    chunk = [row for row in LONG] * 2
    release = {
        "format": "privtool-release/2", "kind": "disassociated", "params": {"k": 2, "m": 1}, "provenance": {},
        "claims": [],
        "clusters": [{"id": "c0", "size": 28, "record_chunks": [chunk], "term_chunk": []}],
    }  # fmt: skip
    path = tmp_path / "long.json"
    path.write_text(json.dumps(release))
    rae = run_cli("metrics", path, "--original", original, "--metric", "rae", "--rae-pairs", "0", "-q")
    one_line_error(rae, "metric 'rae' would hold 52,395,000 item pairs of the original in memory")
    sanitized = tmp_path / "sanitized.json"
    published = {"format": "privtool-release/2", "kind": "sanitized", "params": {}, "provenance": {}, "claims": []}
    sanitized.write_text(json.dumps({**published, "records": LONG}))
    tkd = run_cli("metrics", sanitized, "--original", original, "--metric", "tkd", "-q")
    one_line_error(tkd, "would enumerate more than 20,000,000 itemsets (records of up to 500 items)")
