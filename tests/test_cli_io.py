"""`privtool stats` and `privtool convert` end to end, and the error contract of
issue 2 item 10 for bad input files: exit code 2, exactly one stderr line
starting `privtool: error:` that names the file (and line), no traceback."""

from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path

import pytest

from privtool.errors import InputError
from privtool.release import Cluster, Release, read_release, write_release


def assert_one_line_error(result, *fragments: str) -> None:
    assert result.code == 2, (result.code, result.out, result.err)
    lines = result.err.splitlines()
    assert len(lines) == 1, result.err
    assert lines[0].startswith("privtool: error: "), lines[0]
    assert "Traceback" not in result.err
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])


@pytest.mark.parametrize(
    ("name", "content", "fragments"),
    [
        ("empty.dat", b"", ["empty.dat: the file is empty"]),
        ("blank.csv", b"\n\n", ["blank.csv: the file is empty"]),
        ("ids.dat", b"1 2\n" * 16 + b"3 abc 4\n", ["ids.dat, line 17: 'abc' is not an integer item id"]),
        ("seq.spmf", b"1 -1 2 -1 -2\n3 -1 -1 -2\n", ["seq.spmf, line 2: stray '-1'"]),
        ("open.spmf", b"1 -1 2 -1 -2\n3 -1\n", ["open.spmf, line 2: the record does not end with -2"]),
        (
            "long.long.csv",
            b"rid,item\n1,a\n",
            ["long.long.csv, line 1: expected the header 'record_id,item', found 'rid,item'"],
        ),
        ("latin.csv", "a,b\nc\nna\u00efve\n".encode("latin-1"), ["latin.csv, line 3: byte 0xef is not UTF-8 text"]),
        ("latin.dat", b"1 2\n3 \xe9\n", ["latin.dat, line 2: byte 0xe9 is not UTF-8 text"]),
        ("nothing.jsonl", b"[]\n[]\n", ["nothing.jsonl: the file holds 2 records but not a single item"]),
        ("fake.dat.gz", b"1 2\n", ["fake.dat.gz: the name ends in .gz but the content is not gzip-compressed"]),
    ],
)
def test_bad_input_file_is_one_line_exit_2(
    run_cli, tmp_path: Path, name: str, content: bytes, fragments: list[str]
) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    assert_one_line_error(run_cli("stats", path), *fragments)


def test_missing_file_and_directory(run_cli, tmp_path: Path) -> None:
    assert_one_line_error(run_cli("stats", tmp_path / "nope.dat"), "nope.dat: no such file")
    assert_one_line_error(run_cli("stats", tmp_path), "expected a file, found a directory")
    assert_one_line_error(run_cli("convert", tmp_path / "nope.csv", tmp_path / "x.dat"), "nope.csv: no such file")


def test_format_and_option_errors(run_cli, tmp_path: Path) -> None:
    data = tmp_path / "d.csv"
    data.write_text("a,b\n")
    assert_one_line_error(
        run_cli("stats", data, "--format", "parquet"), "unknown format 'parquet'", "csv, csv-long, fimi, jsonl, spmf"
    )
    assert_one_line_error(run_cli("stats", data, "--delim", ";"), "format 'csv' has no option --delim")
    assert_one_line_error(run_cli("stats", data, "--delimiter", ";;"), "--delimiter must be one character")
    odd = tmp_path / "d.parquet"
    odd.write_text("1\n")
    assert_one_line_error(run_cli("stats", odd), "cannot tell the format", "pass --format")


def test_convert_output_errors(run_cli, tmp_path: Path) -> None:
    data = tmp_path / "words.csv"
    data.write_text("apple,pear\nfig\n")
    assert_one_line_error(run_cli("convert", data, tmp_path / "w.dat"), "w.dat: item 'apple' cannot be written as fimi")
    assert not (tmp_path / "w.dat").exists()
    assert_one_line_error(run_cli("convert", data, tmp_path / "no" / "w.jsonl"), "the output directory does not exist")
    assert_one_line_error(run_cli("convert", data, tmp_path), "expected an output file name, found a directory")
    assert_one_line_error(run_cli("convert", data, tmp_path / "w.jsonl", "--colour", "red"), "has no option --colour")
    assert_one_line_error(run_cli("convert", data, tmp_path / "w.jsonl", "--to", "yaml"), "unknown format 'yaml'")


def test_convert_between_formats_and_delimiters(run_cli, tmp_path: Path) -> None:
    source = tmp_path / "in.csv"
    source.write_text('a;"b;c"\nd\n', encoding="utf-8")
    long = tmp_path / "out.long.csv.gz"
    result = run_cli("convert", source, long, "--in-delimiter", ";", "--out-delimiter", "tab")
    assert result.code == 0, result.err
    assert "2 records, 3 items" in result.err
    assert gzip.decompress(long.read_bytes()).decode() == "record_id\titem\n0\ta\n0\tb;c\n1\td\n"
    back = tmp_path / "back.json"
    assert run_cli("convert", long, back, "--to", "jsonl", "--delimiter", "tab", "-q").code == 0
    assert back.read_text() == '["a", "b;c"]\n["d"]\n'
    stats = run_cli("stats", source, "--delimiter", ";", "--json")
    assert stats.code == 0, stats.err
    assert json.loads(stats.out)["items"] == 3


def test_convert_refuses_an_empty_record_in_long_format(run_cli, tmp_path: Path) -> None:
    source = tmp_path / "gaps.csv"
    source.write_text("a\n\nb\n")
    assert_one_line_error(run_cli("convert", source, tmp_path / "g.long.csv"), "g.long.csv: record 1 is empty")
    assert not (tmp_path / "g.long.csv").exists()


def test_stats_histogram_covers_every_record(run_cli, tmp_path: Path) -> None:
    data = tmp_path / "h.jsonl"
    rows = [[], ["a"], ["a", "b"], ["a", "b", "c"], [str(i) for i in range(9)]]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = run_cli("stats", data, "--json", "--top", "2")
    assert result.code == 0, result.err
    stats = json.loads(result.out)
    assert [(row["size"], row["records"]) for row in stats["size_histogram"]] == [
        ("0", 1),
        ("1", 1),
        ("2", 1),
        ("3-4", 1),
        ("5-8", 0),
        ("9-16", 1),
    ]
    assert stats["top_items"] == [{"item": "a", "support": 3}, {"item": "b", "support": 2}]
    table = run_cli("stats", data)
    assert table.code == 0 and "9-16" in table.out and "20.0%" in table.out


@pytest.mark.slow
def test_stats_json_on_bms_webview_2(run_cli, shared_data: Path) -> None:
    """Figures from issue 2 and data/README.md (358,278 occurrences / 77,512 = 4.622)."""
    result = run_cli("stats", shared_data / "bms-webview-2.dat.gz", "--json")
    assert result.code == 0, result.err
    stats = json.loads(result.out)
    assert (stats["records"], stats["items"], stats["max_size"], stats["occurrences"]) == (77512, 3340, 161, 358278)
    assert round(stats["avg_size"], 2) == 4.62
    assert sum(row["records"] for row in stats["size_histogram"]) == 77512


@pytest.mark.slow
def test_convert_reproduces_the_canonical_bytes(run_cli, shared_data: Path, tmp_path: Path) -> None:
    """bms-webview-1 through SPMF (gzip) and back to FIMI gives the decompressed
    content whose SHA-256 data/README.md lists."""
    spmf = tmp_path / "b.spmf.gz"
    assert run_cli("convert", shared_data / "bms-webview-1.dat.gz", spmf, "-q").code == 0
    fimi = tmp_path / "b.dat"
    assert run_cli("convert", spmf, fimi, "-q").code == 0
    digest = hashlib.sha256(fimi.read_bytes()).hexdigest()
    assert digest == "ea5189346c5f719204508c0ba3cd53a34d01181f2aebbcf65ff4ef57acaadea2"


# ------------------------------------------------------------ release files
def _release_file(tmp_path: Path) -> Path:
    path = tmp_path / "r.json"
    write_release(
        Release(kind="disassociated", params={"k": 2}, clusters=[Cluster("c0", 2, [[["a"], ["a"]]], [])]), path
    )
    return path


def test_read_release_accepts_a_written_release(tmp_path: Path) -> None:
    assert read_release(_release_file(tmp_path)).clusters[0].record_chunks == [[["a"], ["a"]]]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b'{"format": "privtool-release/1",\n "kind": ', r"r\.json, line 2: the release is not valid JSON"),
        (
            b'{"format": "privtool-release/1",\n "kind": "disassociated\xff"}',
            r"r\.json, line 2: the release is not UTF-8 text \(byte 0xff\)",
        ),
        (b"", r"r\.json, line 1: the release is not valid JSON"),
        (b"[1, 2]", r"r\.json: invalid release at \$: expected an object"),
    ],
)
def test_read_release_rejects_unreadable_files(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "r.json"
    path.write_bytes(content)
    with pytest.raises(InputError, match=message) as caught:
        read_release(path)
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            lambda o: o.update(format="privtool-release/3"),
            r"\$\.format: expected 'privtool-release/2' \(or 'privtool-release/1'\)",
        ),
        (lambda o: o.pop("claims"), r"\$\.claims: missing"),
        (lambda o: o.update(claims=[{"k": 2}]), r"\$\.claims\[0\]\.model: missing"),
        (
            lambda o: o.update(claims=[{"model": "km-anonymity", "k": [2]}]),
            r"\$\.claims\[0\]\.k: a claim parameter is a number",
        ),
        (
            lambda o: o.update(claims=[{"model": "km-anonymity", "adversary": "psychic"}]),
            r"\$\.claims\[0\]\.adversary: expected one of consistent-reconstruction, algorithm-aware",
        ),
        (lambda o: o.update(format="privtool-release/1"), r"\$\.claims: unknown field"),
        (lambda o: o["clusters"][0].update(size=-1), r"\$\.clusters\[0\]\.size: must be at least 1"),
        (lambda o: o.pop("params"), r"\$\.params: missing"),
        (
            lambda o: o["clusters"][0]["record_chunks"][0].append(["a", 3]),
            r"\$\.clusters\[0\]\.record_chunks\[0\]\[2\]\[1\]: expected a string",
        ),
    ],
)
def test_read_release_rejects_a_wrong_field(tmp_path: Path, edit, message: str) -> None:
    path = _release_file(tmp_path)
    obj = json.loads(path.read_text())
    edit(obj)
    path.write_text(json.dumps(obj))
    with pytest.raises(InputError, match=rf"r\.json: invalid release at {message}"):
        read_release(path)


def test_read_release_missing_and_directory(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"nope\.json: no such release file"):
        read_release(tmp_path / "nope.json")
    with pytest.raises(InputError, match="expected a release file, found a directory"):
        read_release(tmp_path)


def test_format_option_overrides_the_extension(run_cli, tmp_path: Path) -> None:
    data = tmp_path / "export.dat"
    data.write_text('["a b", "c"]\n["c"]\n')
    assert_one_line_error(run_cli("stats", data), "export.dat, line 1: '[\"a' is not an integer item id")
    result = run_cli("stats", data, "--format", "jsonl", "--json")
    assert result.code == 0, result.err
    assert json.loads(result.out)["format"] == "jsonl"
    assert json.loads(result.out)["top_items"][0] == {"item": "c", "support": 2}


def test_outputs_get_ordinary_permissions(run_cli, tmp_path: Path) -> None:
    """Atomic writes go through mkstemp (mode 0600); the result must not stay private."""
    import os

    source = tmp_path / "a.csv"
    source.write_text("a,b\n")
    old = os.umask(0o022)
    try:
        assert run_cli("convert", source, tmp_path / "new.jsonl", "-q").code == 0
        assert (tmp_path / "new.jsonl").stat().st_mode & 0o777 == 0o644
        kept = tmp_path / "kept.jsonl"
        kept.write_text("")
        kept.chmod(0o640)
        assert run_cli("convert", source, kept, "-q").code == 0
        assert kept.stat().st_mode & 0o777 == 0o640
    finally:
        os.umask(old)


def test_every_command_reading_data_takes_its_format_options(run_cli, tmp_path: Path) -> None:
    """A semicolon CSV is read the same by anonymize, verify, metrics, attack,
    audit, hierarchy, rules, hide and compare when `--delimiter ';'` follows; without it the file
    reads as one item per record and the release no longer matches it."""
    rows = [f"{a};{b}" for a, b in [("1", "2"), ("1", "3"), ("2", "3")] * 4]
    data = tmp_path / "semi.csv"
    data.write_text("\n".join(rows) + "\n")
    release, trail = tmp_path / "r.json", tmp_path / "t.json"
    made = run_cli(
        "anonymize",
        data,
        "--method",
        "disassociation",
        "--k",
        "2",
        "--m",
        "2",
        "--delimiter",
        ";",
        "-o",
        release,
        "--trail",
        trail,
        "--executor",
        "serial",
        "-q",
    )
    assert made.code == 0, made.err
    assert json.loads(trail.read_text())["stats"]["item_occurrences_in"] == 24  # private: in the trail
    common = ["--original", data, "--trail", trail, "--executor", "serial"]
    verified = run_cli("verify", release, *common, "--delimiter", ";", "--json")
    assert verified.code == 0, verified.out
    assert json.loads(verified.out)["original_sha256"] == json.loads(trail.read_text())["input_sha256"]
    assert run_cli("verify", release, *common, "--json").code == 1  # read as "1;2" items: not the input
    metrics = run_cli("metrics", release, *common, "--delimiter", ";", "--json")
    assert metrics.code == 0, metrics.err
    assert run_cli("attack", release, *common, "--delimiter", ";", "--json", "-q").code == 0
    assert run_cli("audit", release, *common, "--delimiter", ";", "-q").code == 0
    hierarchy = tmp_path / "h.csv"
    assert run_cli("hierarchy", "build", data, "--fanout", "2", "-o", hierarchy, "--delimiter", ";").code == 0
    assert run_cli("hierarchy", "check", hierarchy, data, "--delimiter", ";").code == 0
    rules = run_cli("rules", data, "--min-support", "0.3", "--min-confidence", "0.5", "--json", "--delimiter", ";")
    assert rules.code == 0 and json.loads(rules.out)["rules"], rules.err
    hidden = tmp_path / "hidden.csv"
    made = run_cli(
        "hide",
        data,
        "--sensitive",
        "1",
        "--min-support",
        "0.3",
        "--min-confidence",
        "0.5",
        "-o",
        hidden,
        "-q",
        "--delimiter",
        ";",
    )
    assert made.code == 0, made.err
    assert all(";" in line or line.count(",") == 0 for line in hidden.read_text().splitlines())  # written as read
    compared = run_cli(
        "compare",
        data,
        "--method",
        "disassociation",
        "--k",
        "2",
        "-o",
        tmp_path / "cmp",
        "--executor",
        "serial",
        "--delimiter",
        ";",
    )
    assert compared.code == 0, compared.err
    assert_one_line_error(run_cli("verify", release, "--delimiter", ";"), "verify has no option --delimiter")
