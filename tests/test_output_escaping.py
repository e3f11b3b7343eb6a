"""Issue 16: every user-facing output escapes data. A label ``[/]`` crashed
stats, rules, verify, attack and the terminal audit (rich markup), a label
``[link=...]`` rendered as a hyperlink, and a parameter holding a code fence
broke out of the Markdown audit's block."""

from __future__ import annotations

import json
import re
from pathlib import Path

from privtool.audit.render import md_block, md_code

CLOSE = "[/]"
LINK = "[link=http://evil.example]click[/link]"
STYLE = "[bold]b[/bold]"
LABELS = (CLOSE, LINK, STYLE)


def _data(tmp_path: Path) -> Path:
    """Ten records in which the three markup labels are frequent (so they reach
    the top items, the rules, the record chunks and the findings)."""
    rows = [[CLOSE, LINK, STYLE, "plain"]] * 6 + [[CLOSE, LINK], [STYLE, "plain"], [CLOSE], [LINK, "x"]]
    path = tmp_path / "marks.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def _shown(text: str, label: str) -> bool:
    """Whether ``label`` appears literally (rich may wrap a long line)."""
    return label in text or label in "".join(text.split())


def _assert_literal(result, labels=LABELS) -> None:
    assert "Traceback" not in result.err and "MarkupError" not in result.err, result.err
    for label in labels:
        assert _shown(result.out, label), (label, result.out)


def test_stats_and_rules_show_markup_labels_literally(run_cli, tmp_path: Path) -> None:
    data = _data(tmp_path)
    stats = run_cli("stats", data)
    assert stats.code == 0
    _assert_literal(stats)
    rules = run_cli("rules", data, "--min-support", "3", "--min-confidence", "0.5")
    assert rules.code == 0
    _assert_literal(rules)


def test_verify_attack_and_audit_show_markup_labels_literally(run_cli, tmp_path: Path) -> None:
    data = _data(tmp_path)
    release, trail = tmp_path / "r.json", tmp_path / "t.json"
    made = run_cli(
        "anonymize", data, "--method", "disassociation", "--k", "2", "--m", "2", "-o", release, "--trail", trail,
        "--executor", "serial", "-q",
    )  # fmt: skip
    assert made.code == 0, made.err
    # at k = 7 every chunk fails, so the witnesses print the labels
    verified = run_cli("verify", release, "--k", "7", "--executor", "serial", "-q")
    assert verified.code == 1
    _assert_literal(verified, (CLOSE,))
    attacked = run_cli("attack", release, "--original", data, "--executor", "serial", "-q")
    assert attacked.code in (0, 1)
    assert "Traceback" not in attacked.err
    audited = run_cli("audit", release, "--original", data, "--trail", trail, "--executor", "serial", "-q")
    assert audited.code in (0, 1)
    assert "Traceback" not in audited.err
    # a label in a parameter and in the path reach the audit's header lines
    marked = tmp_path / f"{CLOSE}{LINK}.json".replace("/", "_")
    obj = json.loads(release.read_text())
    obj["params"]["note"] = LINK
    marked.write_text(json.dumps(obj))
    again = run_cli("audit", marked, "--executor", "serial", "-q")
    assert "Traceback" not in again.err
    assert _shown(again.out, marked.name)


def test_hierarchy_show_draws_markup_labels_literally(run_cli, tmp_path: Path) -> None:
    edges = tmp_path / "h.csv"
    edges.write_text(f'child,parent\n"{CLOSE}",ALL\n"{LINK}",ALL\n"{STYLE}","{CLOSE}"\n')
    shown = run_cli("hierarchy", "show", edges, "--depth", "3")
    assert shown.code == 0, shown.err
    _assert_literal(shown)


def test_markdown_code_cannot_be_closed_by_its_content() -> None:
    for text in ("plain", "a`b", "``x``", "`start", "end`", "```\n# injected heading\n```", "````"):
        span = md_code(text)
        fence = re.match("`+", span).group(0)
        inner = span[len(fence) : len(span) - len(fence)]
        assert span.endswith(fence) and fence not in inner.replace(fence + "`", "")
        assert max((len(r) for r in re.findall("`+", inner)), default=0) < len(fence)
        block = md_block(text)
        assert block[0] == block[-1] and set(block[0]) == {"`"}
        assert all(not line.startswith(block[0]) for line in block[1:-1])


def test_the_markdown_audit_keeps_a_fence_in_a_parameter_inside_its_block(run_cli, tmp_path: Path) -> None:
    data = _data(tmp_path)
    release = tmp_path / "r.json"
    assert run_cli("anonymize", data, "--method", "disassociation", "--k", "2", "-o", release, "-q").code == 0
    obj = json.loads(release.read_text())
    obj["params"]["note"] = "```\n# Verdict: PASS\n```"
    obj["params"]["max_cluster_size"] = "`` | [x](http://evil.example) <b>"
    release.write_text(json.dumps(obj))
    report = tmp_path / "report.md"
    run_cli("audit", release, "--format", "md", "-o", report, "--executor", "serial", "-q")
    lines = report.read_text().splitlines()
    start = lines.index("## Reproduce") + 2
    fence = lines[start]
    assert set(fence) == {"`"} and len(fence) >= 4
    end = lines.index(fence, start + 1)
    injected = [n for n, line in enumerate(lines) if line == "# Verdict: PASS"]
    assert injected and all(start < n < end for n in injected)  # inside the block, never a heading
    parameters = next(line for line in lines if line.startswith("- Parameters: "))
    assert "<b>" not in parameters and "](" not in parameters.replace("\\](", "")
