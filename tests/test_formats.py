"""Dataset formats: round trips (hypothesis), the vectorised tokenizer against a
naive parser, SPMF markers, compression and format detection."""

from __future__ import annotations

import io
import re
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privtool.dataset import Dataset
from privtool.errors import InputError, OutputError, ParameterError
from privtool.io import choose_format, read_bytes, read_dataset, write_dataset
from privtool.plugins import int_tokens
from privtool.plugins.formats import is_integer_id

integer_labels = st.integers(0, 10**18 - 1).map(str)
text_labels = st.text(min_size=1, max_size=8)
odd_labels = st.sampled_from(
    ["a b", " lead", "trail ", "x,y", 'say "hi"', "naïve", "日本", "a;b", "tab\there", "1", "007"]
)


def datasets(labels: st.SearchStrategy[str], allow_empty_records: bool = True) -> st.SearchStrategy[Dataset]:
    """Datasets with at least one item occurrence (a file without items is an error)."""
    record = st.lists(labels, min_size=0 if allow_empty_records else 1, max_size=6)
    return st.lists(record, min_size=1, max_size=12).filter(lambda rows: any(rows)).map(Dataset.from_records)


def round_trip(registry, dataset: Dataset, fmt: str, options: dict | None = None) -> Dataset:
    """Write with the format's writer and read back through its byte reader."""
    component = registry.get("format", fmt)
    params = {p.name: p.default for p in component.params} | (options or {})
    text = io.StringIO(newline="")
    component.write(dataset, text, params)
    return component.read_bytes(text.getvalue().encode("utf-8"), "test", params)


@settings(max_examples=60, deadline=None)
@given(datasets(integer_labels))
def test_fimi_round_trip(registry, dataset: Dataset) -> None:
    assert round_trip(registry, dataset, "fimi") == dataset


@settings(max_examples=60, deadline=None)
@given(datasets(st.one_of(text_labels, odd_labels).filter(lambda label: not any(c.isspace() for c in label))))
def test_basket_round_trip_without_whitespace_in_labels(registry, dataset: Dataset) -> None:
    assert round_trip(registry, dataset, "basket") == dataset


def test_basket_refuses_a_label_with_whitespace(registry, tmp_path: Path) -> None:
    with pytest.raises(OutputError, match=r"item 'a b' cannot be written as basket"):
        write_dataset(registry, Dataset.from_records([["a b", "c"]]), tmp_path / "x.basket")
    assert list(tmp_path.iterdir()) == []


@settings(max_examples=60, deadline=None)
@given(datasets(integer_labels), st.booleans())
def test_spmf_round_trip_both_styles(registry, dataset: Dataset, markers: bool) -> None:
    assert round_trip(registry, dataset, "spmf", {"markers": markers}) == dataset


@settings(max_examples=60, deadline=None)
@given(datasets(st.one_of(text_labels, odd_labels)), st.sampled_from([",", ";", "\t", " "]))
def test_csv_round_trip_with_odd_labels(registry, dataset: Dataset, delimiter: str) -> None:
    assert round_trip(registry, dataset, "csv", {"delimiter": delimiter}) == dataset


@settings(max_examples=60, deadline=None)
@given(datasets(st.one_of(text_labels, odd_labels), allow_empty_records=False))
def test_csv_long_round_trip_with_odd_labels(registry, dataset: Dataset) -> None:
    assert round_trip(registry, dataset, "csv-long") == dataset


@settings(max_examples=60, deadline=None)
@given(datasets(st.one_of(text_labels, odd_labels, integer_labels)))
def test_jsonl_round_trip_with_odd_labels(registry, dataset: Dataset) -> None:
    assert round_trip(registry, dataset, "jsonl") == dataset


@pytest.mark.parametrize("fmt", ["fimi", "spmf"])
@pytest.mark.parametrize("label", ["a b", "abc", "007", "-3", "1234567890123456789"])
def test_integer_formats_refuse_labels_they_cannot_hold(registry, tmp_path: Path, fmt: str, label: str) -> None:
    dataset = Dataset.from_records([["1", label]])
    target = tmp_path / f"out.{fmt}"
    with pytest.raises(OutputError, match=rf"out\.{fmt}: item '{re.escape(label)}' cannot be written as {fmt}"):
        write_dataset(registry, dataset, target, fmt)
    assert list(tmp_path.iterdir()) == [], "a refused write must leave no file behind"


def test_csv_long_refuses_an_empty_record(registry, tmp_path: Path) -> None:
    with pytest.raises(OutputError, match="record 1 is empty"):
        write_dataset(registry, Dataset.from_records([["a"], []]), tmp_path / "x.long.csv")


# --------------------------------------------------------------- tokenizer
def naive_fimi(data: bytes) -> list[list[str]] | int:
    """Oracle: the records, or the 1-based line of the first bad token. Lines
    end in LF, CRLF or a lone CR (``bytes.splitlines``), as in every text format."""
    lines = data.splitlines()
    records = []
    for number, line in enumerate(lines, start=1):
        tokens = line.split()
        if any(not re.fullmatch(rb"[0-9]{1,18}", token) for token in tokens):
            return number
        records.append([str(int(token)) for token in tokens])
    return records


fimi_bytes = st.lists(
    st.sampled_from([b"0", b"1", b"7", b"12", b"007", b"65535", b" ", b"  ", b"\t", b"\r\n", b"\n", b"\n\n", b"\r"]),
    min_size=1,
    max_size=60,
).map(b"".join)
bad_tokens = st.sampled_from([b"x", b"-3", b"1-2", b"-", b"--1", b"3.5", b"\xff", "é".encode(), b"1234567890123456789"])


@settings(max_examples=200, deadline=None)
@given(fimi_bytes, st.lists(st.tuples(st.integers(0, 60), bad_tokens), max_size=2), st.sampled_from([8, 64, 1 << 20]))
def test_fimi_reader_equals_naive_parser(registry, data: bytes, inserts: list[tuple[int, bytes]], block: int) -> None:
    for position, token in sorted(inserts, reverse=True):
        data = data[:position] + b" " + token + b" " + data[position:]
    expected = naive_fimi(data)
    original, int_tokens.BLOCK_BYTES = int_tokens.BLOCK_BYTES, block
    try:
        if isinstance(expected, int):
            with pytest.raises(InputError, match=rf"^src, line {expected}: "):
                registry.get("format", "fimi").read_bytes(data, "src", {})
        else:
            dataset = registry.get("format", "fimi").read_bytes(data, "src", {})
            assert dataset.to_label_records() == Dataset.from_records(expected).to_label_records()
            assert dataset.labels == Dataset.from_records(expected).labels
    finally:
        int_tokens.BLOCK_BYTES = original


def test_fimi_error_names_line_and_token(registry) -> None:
    data = b"1 2\n" * 16 + b"3 abc 4\n"
    with pytest.raises(InputError, match=r"^f\.dat, line 17: 'abc' is not an integer item id$"):
        registry.get("format", "fimi").read_bytes(data, "f.dat", {})
    with pytest.raises(InputError, match=r"line 2: '-4' is not an item id: item ids are non-negative"):
        registry.get("format", "fimi").read_bytes(b"1\n2 -4\n", "f.dat", {})


def test_fimi_reads_crlf_tabs_and_leading_zeros(registry) -> None:
    dataset = registry.get("format", "fimi").read_bytes(b"10\t9 009\r\n\r\n3", "f", {})
    assert dataset.to_label_records() == [["9", "10"], [], ["3"]]
    assert dataset.labels == ("3", "9", "10")


# -------------------------------------------------------------------- SPMF
def naive_spmf(data: bytes) -> list[list[str]] | int:
    """Oracle for SPMF: records, or the line of the first violation. A token
    that is no integer at all is reported before any misplaced marker."""
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    tokens = [line.split() for line in lines]
    for number, line in enumerate(tokens, start=1):
        if any(not re.fullmatch(rb"-?[0-9]{1,18}", token) for token in line):
            return number
    marked = any(token in (b"-1", b"-2") for line in tokens for token in line)
    records = []
    for number, line in enumerate(tokens, start=1):
        items: list[str] = []
        for i, token in enumerate(line):
            if token == b"-1":
                if i == 0 or line[i - 1] in (b"-1", b"-2"):
                    return number
            elif token == b"-2":
                if i != len(line) - 1:
                    return number
            elif re.fullmatch(rb"[0-9]{1,18}", token):
                items.append(str(int(token)))
            else:
                return number
        if marked and line and line[-1] != b"-2":
            return number
        records.append(items)
    return records


spmf_bytes = st.lists(
    st.sampled_from([b"1", b"2", b"30", b" ", b" -1 ", b" -2", b" -2\n", b"\n", b" -1 -2\n", b"-3", b"x"]),
    min_size=1,
    max_size=40,
).map(b"".join)


@settings(max_examples=300, deadline=None)
@given(spmf_bytes)
def test_spmf_reader_equals_naive_parser(registry, data: bytes) -> None:
    expected = naive_spmf(data)
    spmf = registry.get("format", "spmf")
    if isinstance(expected, int):
        with pytest.raises(InputError, match=rf"^s, line {expected}: "):
            spmf.read_bytes(data, "s", {"markers": True})
    else:
        assert (
            spmf.read_bytes(data, "s", {"markers": True}).to_label_records()
            == Dataset.from_records(expected).to_label_records()
        )


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        (b"1 -1 -2\n-1 2 -1 -2\n", 2, "stray '-1'"),
        (b"1 -1 -1 -2\n", 1, "stray '-1'"),
        (b"1 -1 -2\n2 -1 3 -1\n", 2, "does not end with -2"),
        (b"1 -1 -2 4 -1 -2\n", 1, "'-2' ends the record"),
        (b"1 -1 -2\n1 -7 -2\n", 2, "'-7' is neither an item id nor an SPMF marker"),
    ],
)
def test_spmf_marker_errors_name_the_line(registry, text: bytes, line: int, message: str) -> None:
    with pytest.raises(InputError, match=rf"line {line}: .*{re.escape(message)}"):
        registry.get("format", "spmf").read_bytes(text, "s", {"markers": True})


def test_spmf_sequence_is_read_as_the_set_of_its_items(registry) -> None:
    dataset = registry.get("format", "spmf").read_bytes(b"5 -1 3 5 -1 -2\n-2\n4 -2\n", "s", {})
    assert dataset.to_label_records() == [["3", "5"], [], ["4"]]


# ------------------------------------------------------- CSV and JSON Lines
def test_csv_long_keeps_first_appearance_order(registry) -> None:
    text = 'record_id,item\nb,x\na,y\nb,z\n\nc,"q,r"\n'
    dataset = registry.get("format", "csv-long").read_bytes(text.encode(), "l", {"delimiter": ","})
    assert dataset.to_label_records() == [["x", "z"], ["y"], ["q,r"]]


@pytest.mark.parametrize(
    ("fmt", "text", "message"),
    [
        ("csv-long", "id,item\n1,a\n", r"line 1: expected the header 'record_id,item', found 'id,item'"),
        ("csv-long", "record_id,item\n1,a\n2,b,c\n", r"line 3: expected 2 fields"),
        ("csv-long", "record_id,item\n1,\n", r"line 2: empty item"),
        ("csv", "a,b\nc,,d\n", r"line 2: empty item"),
        ("csv", 'a,"b"x\n', r"line 1: malformed CSV"),
        ("jsonl", '["a"]\n\n["b"]\n', r"line 2: blank line"),
        ("jsonl", '["a"]\n{"a": 1}\n', r"line 2: expected a JSON array of items, found an object"),
        ("jsonl", '["a", 1.5]\n', r"line 1: item 1.5 is a number, not a string or an integer"),
        ("jsonl", '["a", true]\n', r"line 1: item true is true/false"),
        ("jsonl", '["a", ""]\n', r"line 1: empty item label"),
        ("jsonl", '["a"\n', r"line 1: not valid JSON"),
        ("jsonl", '["\\ud800"]\n', r"line 1: .*lone surrogate"),
    ],
)
def test_text_format_errors_name_the_line(registry, fmt: str, text: str, message: str) -> None:
    component = registry.get("format", fmt)
    params = {p.name: p.default for p in component.params}
    with pytest.raises(InputError, match=message):
        component.read_bytes(text.encode(), "f", params)


def test_undecodable_bytes_name_the_line(registry) -> None:
    with pytest.raises(InputError, match=r"^f, line 3: byte 0xff is not UTF-8 text$"):
        registry.get("format", "csv").read_bytes(b"a\nb\nc\xff\n", "f", {"delimiter": ","})
    with pytest.raises(InputError, match=r"^f, line 2: byte 0xe9 is not UTF-8 text$"):
        registry.get("format", "fimi").read_bytes(b"1\n2 \xe9\n", "f", {})


@pytest.mark.parametrize("delimiter", [";;", "", '"', "\n"])
def test_bad_delimiter_is_a_parameter_error(registry, delimiter: str) -> None:
    with pytest.raises(ParameterError, match="--delimiter must be one character"):
        registry.get("format", "csv").read_bytes(b"a\n", "f", {"delimiter": delimiter})


def test_tab_delimiter_by_name(registry) -> None:
    dataset = registry.get("format", "csv").read_bytes(b"a b\tc\n", "f", {"delimiter": "tab"})
    assert dataset.to_label_records() == [["a b", "c"]]


def test_integer_id_rule() -> None:
    assert is_integer_id("0") and is_integer_id("10") and is_integer_id("9" * 18)
    assert not any(is_integer_id(x) for x in ["", "01", "-1", "1.0", "٣", "9" * 19, " 1"])


# ------------------------------------------------- files: compression, detection
@settings(max_examples=15, deadline=None)
@given(
    datasets(st.one_of(text_labels, odd_labels)),
    st.sampled_from(["", ".gz", ".bz2", ".xz"]),
    st.sampled_from(["csv", "jsonl"]),
)
def test_file_round_trip_with_compression(registry, dataset: Dataset, compression: str, ext: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"data.{ext}{compression}"
        write_dataset(registry, dataset, path)
        assert read_dataset(registry, path) == dataset


@pytest.mark.parametrize("compression", [".gz", ".bz2", ".xz"])
def test_compressed_output_is_byte_reproducible_and_really_compressed(
    registry, tmp_path: Path, compression: str
) -> None:
    dataset = Dataset.from_records([[str(i), str(i + 1)] for i in range(200)])
    first, second = tmp_path / f"a.dat{compression}", tmp_path / "sub" / f"a.dat{compression}"
    second.parent.mkdir()
    write_dataset(registry, dataset, first)
    write_dataset(registry, dataset, second)
    assert first.read_bytes() == second.read_bytes()
    assert first.read_bytes()[:2] != b"0 "
    assert read_dataset(registry, first) == dataset


def test_compression_is_sniffed_from_content(registry, tmp_path: Path) -> None:
    import gzip

    path = tmp_path / "renamed.dat"
    path.write_bytes(gzip.compress(b"1 2\n3\n"))
    assert read_dataset(registry, path).to_label_records() == [["1", "2"], ["3"]]
    liar = tmp_path / "plain.dat.xz"
    liar.write_bytes(b"1 2\n")
    with pytest.raises(InputError, match=r"plain\.dat\.xz: the name ends in \.xz but the content is not xz-compressed"):
        read_dataset(registry, liar)
    truncated = tmp_path / "cut.dat.gz"
    truncated.write_bytes(gzip.compress(b"1 2\n" * 1000)[:-30])
    with pytest.raises(InputError, match=r"cut\.dat\.gz: cannot read the gzip-compressed file"):
        read_dataset(registry, truncated)


def test_byte_order_mark_is_dropped(registry, tmp_path: Path) -> None:
    path = tmp_path / "bom.long.csv"
    path.write_bytes(b"\xef\xbb\xbfrecord_id,item\n1,a\n")
    assert read_bytes(path).startswith(b"record_id")
    assert read_dataset(registry, path).to_label_records() == [["a"]]


@pytest.mark.parametrize(
    ("name", "fmt"),
    [
        ("x.dat", "fimi"),
        ("x.DAT.GZ", "fimi"),
        ("x.txt.bz2", "basket"),
        ("x.basket", "basket"),
        ("x.fimi", "fimi"),
        ("x.spmf.xz", "spmf"),
        ("x.csv", "csv"),
        ("x.long.csv.gz", "csv-long"),
        ("my.data.long.csv", "csv-long"),
        ("my.data.csv", "csv"),
        ("x.jsonl", "jsonl"),
        ("x.ndjson.gz", "jsonl"),
    ],
)
def test_format_detection_by_extension(registry, name: str, fmt: str) -> None:
    assert choose_format(registry, name, None).name == fmt


def test_format_override_and_unknown_extension(registry, tmp_path: Path) -> None:
    assert choose_format(registry, "x.csv", "jsonl").name == "jsonl"
    path = tmp_path / "x.weird"
    path.write_text("a,b\n")
    with pytest.raises(ParameterError, match=r"cannot tell the format of .*x\.weird.*pass --format"):
        read_dataset(registry, path)
    assert read_dataset(registry, path, "csv").to_label_records() == [["a", "b"]]
