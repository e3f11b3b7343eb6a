"""``privtool audit``: verdict, sections, formats, escaping, and the HTML as a
browser shows it."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest
from browser import dump_dom, screenshot

PAYLOAD = "<script>alert('x')</script>"
HIERARCHY = {"root": "*", "edges": [[PAYLOAD, "*"], ["b", 'G"q'], ["c", 'G"q'], ['G"q', "*"]]}


def _write(tmp_path: Path, records: list[list[str]], original: list[list[str]]) -> tuple[Path, Path]:
    release = {
        "format": "privtool-release/1",
        "kind": "generalized",
        "params": {"method": "partition", "k": 2},
        "provenance": {"privtool": "test", "plugins": {}, "input_sha256": "0" * 64, "seed": 0},
        "stats": {},
        "records": records,
        "hierarchy": HIERARCHY,
    }
    rel = tmp_path / "release.json"
    rel.write_text(json.dumps(release))
    data = tmp_path / "original.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in original))
    return rel, data


def _unique_release(tmp_path: Path) -> tuple[Path, Path]:
    """A generalized release whose first record is unique: linkage breaks it."""
    return _write(
        tmp_path,
        [[PAYLOAD], ['G"q'], ['G"q']],
        [[PAYLOAD], ["b"], ["c"]],
    )


def test_unique_record_fails_in_the_linkability_section(tmp_path: Path, run_cli) -> None:
    rel, data = _unique_release(tmp_path)
    out = tmp_path / "audit.json"
    result = run_cli("audit", rel, "--original", data, "--format", "json", "-o", out, "-q", "--executor", "serial")
    assert result.code == 1, result.err
    report = json.loads(out.read_text())
    assert report["verdict"] == "FAIL" and report["format"] == "privtool-release/1"
    assert report["notes"] and "derived from its kind and parameters" in report["notes"][0]
    [claim] = report["claims"]
    assert claim["label"] == "k-anonymity (k=2)" and claim["status"] == "fails"
    criteria = {(c["criterion"], c["adversary"]): c["status"] for c in report["criteria"]}
    assert criteria[("linkability", "consistent-reconstruction")] == "FAIL"
    assert criteria[("singling-out", "consistent-reconstruction")] == "FAIL"
    assert criteria[("inference", "consistent-reconstruction")] == "NOT PROTECTED"
    assert criteria[("linkability", "algorithm-aware")] == "NOT PROTECTED"
    linkage = next(a for a in report["attacks"] if a["attack"] == "linkage")
    breach = [f for f in linkage["findings"] if f["severity"] == "breach"]
    assert breach and breach[0]["evidence"]["candidates"] == 1 and breach[0]["refutes"] == "k-anonymity"
    assert breach[0]["evidence"]["known_items"].startswith("(withheld")


def test_markdown_escapes_labels(tmp_path: Path, run_cli) -> None:
    rel, data = _unique_release(tmp_path)
    out = tmp_path / "audit.md"
    run_cli(
        "audit",
        rel,
        "--original",
        data,
        "--format",
        "md",
        "-o",
        out,
        "-q",
        "--executor",
        "serial",
        "--include-examples",
    )
    text = out.read_text()
    assert text.startswith("# Privacy audit: **FAIL**")
    assert "<script>" not in text and "&lt;script&gt;" in text


def test_html_report_in_chromium(tmp_path: Path, run_cli) -> None:
    rel, data = _unique_release(tmp_path)
    html = tmp_path / "audit.html"
    result = run_cli(
        "audit",
        rel,
        "--original",
        data,
        "--format",
        "html",
        "-o",
        html,
        "-q",
        "--executor",
        "serial",
        "--include-examples",
    )
    assert result.code == 1
    source = html.read_text()
    assert "<script" not in source.lower(), "a label from the data became markup"
    for external in ('src="http', "src='http", 'href="http', "href='http", "url(http", "@import"):
        assert external not in source, "the report must work offline (no external resource)"
    dom = dump_dom(html)
    assert 'id="verdict"' in dom and "Verdict: FAIL" in dom
    assert dom.count("<svg") >= 2
    assert "&lt;script&gt;alert('x')&lt;/script&gt;" in dom  # the label, shown as text
    assert "<script" not in dom.lower()
    png = screenshot(html, tmp_path / "audit.png")
    import matplotlib.image as mpimg

    pixels = (mpimg.imread(png)[..., :3] * 255).astype(int)
    red = np.all(np.abs(pixels - np.array([0xC6, 0x28, 0x28])) < 12, axis=-1)
    assert red.sum() > 500, "the FAIL verdict banner is not visible"
    assert pixels.std() > 20, "the page rendered blank"


def test_audit_without_output_for_html_is_a_usage_error(tmp_path: Path, run_cli) -> None:
    rel, _ = _unique_release(tmp_path)
    result = run_cli("audit", rel, "--format", "html")
    assert result.code == 2 and "needs -o REPORT" in result.err


OPENINGS = {"html": "<!DOCTYPE html>", "md": "# ", "json": "{"}


@pytest.mark.parametrize(("name", "fmt"), [("A.html", "html"), ("A.HTM", "html"), ("a.md", "md"), ("a.json", "json")])
def test_audit_output_extension_chooses_the_format(tmp_path: Path, run_cli, name: str, fmt: str) -> None:
    """The lead's bug: ``-o A.html`` without ``--format`` printed the terminal
    report and wrote nothing."""
    rel, data = _unique_release(tmp_path)
    out = tmp_path / name
    result = run_cli("audit", rel, "--original", data, "-o", out, "-q", "--executor", "serial")
    assert result.code == 1, result.err
    assert out.read_text().startswith(OPENINGS[fmt])
    assert result.out == ""  # the report went to the file, not to the terminal
    if fmt == "json":
        assert json.loads(out.read_text())["verdict"] == "FAIL"


def test_audit_explicit_format_wins_over_the_extension(tmp_path: Path, run_cli) -> None:
    rel, data = _unique_release(tmp_path)
    out = tmp_path / "report.html"
    result = run_cli("audit", rel, "--original", data, "--format", "json", "-o", out, "-q", "--executor", "serial")
    assert result.code == 1 and json.loads(out.read_text())["verdict"] == "FAIL"


@pytest.mark.parametrize(
    ("args", "sentence"),
    [
        (["-o", "report.txt"], "cannot tell the report format of"),
        (["-o", "report"], "cannot tell the report format of"),
        (["--format", "terminal", "-o", "report.html"], "--format terminal prints the report and writes no file"),
    ],
)
def test_audit_refuses_what_it_would_lose(tmp_path: Path, run_cli, args: list[str], sentence: str) -> None:
    rel, _ = _unique_release(tmp_path)
    args = [str(tmp_path / a) if a.startswith("report") else a for a in args]
    result = run_cli("audit", rel, *args)
    assert result.code == 2 and sentence in result.err and "Traceback" not in result.err
    assert len(result.err.strip().splitlines()) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["original.jsonl", "release.json"]  # nothing written


class _Visible(HTMLParser):
    """The text of a page outside its appendix, and the order of its ids."""

    def __init__(self) -> None:
        super().__init__()
        self.depth_in_appendix = 0
        self.main_text: list[str] = []
        self.appendix_rows = 0
        self.appendix_tables = 0
        self.ids: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        if attributes.get("id"):
            self.ids.append(str(attributes["id"]))
        if tag == "details" and attributes.get("id") == "appendix":
            self.depth_in_appendix = 1
        elif self.depth_in_appendix and tag == "details":
            self.depth_in_appendix += 1
        if self.depth_in_appendix and tag == "tr":
            self.appendix_rows += 1
        if self.depth_in_appendix and tag == "table":
            self.appendix_tables += 1

    def handle_endtag(self, tag: str) -> None:
        if self.depth_in_appendix and tag == "details":
            self.depth_in_appendix -= 1

    def handle_data(self, data: str) -> None:
        if not self.depth_in_appendix:
            self.main_text.append(data)


@pytest.mark.slow
def test_safe_webview2_audit_reads_well_in_chromium(shared_data: Path, tmp_path: Path, run_cli) -> None:
    """The safe disassociation of bms-webview-2 (k = 5, m = 2): the verdict and
    the criteria are the first screen, the 324 cover-linkage risks are summarised
    (counts, exposure, the worst few) with every finding only in the collapsed
    appendix, and no raw JSON appears outside it."""
    data = shared_data / "bms-webview-2.dat.gz"
    release, trail, html = tmp_path / "safe.json", tmp_path / "safe.trail.json", tmp_path / "audit.html"
    made = run_cli(
        "anonymize", data, "--method", "disassociation", "--k", "5", "--m", "2",
        "--sanitizer", "safe-disassociation", "-o", release, "--trail", trail, "-q",
    )  # fmt: skip
    assert made.code == 0, made.err
    result = run_cli(
        "audit", release, "--original", data, "--trail", trail, "--targets", "200",
        "--metric", "tlost", "--metric", "pem", "--metric", "rlm",
        "--format", "html", "-o", html, "-q", "--executor", "serial",
    )  # fmt: skip
    assert result.code == 0, result.err
    dom = dump_dom(html)
    page = _Visible()
    page.feed(dom)
    assert page.ids.index("verdict") < page.ids.index("criteria") < page.ids.index("claims")
    assert "Verdict: PASS" in dom
    main = " ".join(page.main_text)
    for raw_json in ('{"', '":', '["', "\\u"):
        assert raw_json not in main, f"raw JSON ({raw_json!r}) outside the appendix"
    assert "cover-linkage: 0 breach(es), 324 risk(s) of 324 finding(s)" in main
    assert "no claim covers this" in main  # every risk says why no claim covers it
    assert "Lower is better" in main and "ghost records were added" in main
    summary = re.search(r"Appendix: every finding \(([\d,]+)\)", dom)
    assert summary is not None
    total = int(summary.group(1).replace(",", ""))
    assert total >= 324 and page.appendix_tables >= 2
    assert page.appendix_rows == total + page.appendix_tables  # one header row per attack table
    assert "<details" in dom and "<details open" not in dom  # collapsed
    png = screenshot(html, tmp_path / "first-screen.png", size="1280,900")
    import matplotlib.image as mpimg

    pixels = (mpimg.imread(png)[..., :3] * 255).astype(int)
    green = np.all(np.abs(pixels - np.array([0x2E, 0x7D, 0x32])) < 12, axis=-1)
    amber = np.all(np.abs(pixels - np.array([0xB2, 0x6A, 0x00])) < 12, axis=-1)
    assert green[:200].sum() > 2000, "the PASS verdict banner is not at the top of the first screen"
    assert green[200:].sum() > 300 and amber.sum() > 300, "the criteria badges are not on the first screen"
