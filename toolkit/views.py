"""What the Python API returns after a release is assessed, measured or
compared: thin views over the engine's own results.

:class:`Verdict` and :class:`Findings` wrap one
:class:`~privtool.assess.Assessment` (the object ``privtool verify``,
``attack`` and ``audit`` report), so Python and the command line cannot
disagree: the verdict, its reason and the exit code are the assessment's
properties, never recomputed here. :class:`Metrics` wraps the metric results
of the same code ``privtool metrics`` runs, :class:`Comparison` the rows
``privtool compare`` writes. Each converts to a pandas DataFrame
(:meth:`to_frame`, pandas being an optional extra) and shows itself in Jupyter
(``_repr_html_``: the verdict first, then a compact table, data escaped).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import notebook
from .assess import Assessment, MetricResult
from .assessment_tables import claim_evidence, redact
from .frames import require_pandas
from .results import Finding

if TYPE_CHECKING:
    import pandas


def _frame(rows: Sequence[dict[str, Any]], columns: Sequence[str]) -> pandas.DataFrame:
    return require_pandas().DataFrame([{c: row.get(c) for c in columns} for row in rows], columns=list(columns))


class Verdict:
    """The assessment of a release: ``verdict`` (``PASS``, ``FAIL`` or
    ``INCOMPLETE``), the one-sentence ``reason``, the command line's
    ``exit_code``, and one row per check (:meth:`rows`): the structure
    problems, each claim with its status, each integrity check.

    A verdict is not a truth value (``if verdict:`` would be true for a FAIL):
    test ``verdict.passed`` or compare ``verdict.verdict``."""

    def __init__(self, assessment: Assessment) -> None:
        self.assessment = assessment

    @property
    def verdict(self) -> str:
        return self.assessment.verdict

    @property
    def reason(self) -> str:
        return self.assessment.verdict_reason

    @property
    def exit_code(self) -> int:
        return self.assessment.exit_code

    @property
    def passed(self) -> bool:
        """True when the verdict is PASS: every claim holds and nothing refutes one."""
        return self.verdict == "PASS"

    def __bool__(self) -> bool:
        raise TypeError("a verdict is not a truth value (a FAIL would count as true); test .passed instead.")

    def rows(self) -> list[dict[str, Any]]:
        """One dict per check: ``check`` (what), ``kind`` (structure, claim or
        integrity), ``status`` and ``detail`` (the witness or the reason)."""
        rows = [
            {"check": p.path, "kind": "structure", "status": "invalid", "detail": p.problem}
            for p in self.assessment.structure
        ]
        for claim in self.assessment.claims:
            rows.append(
                {
                    "check": f"{claim.claim.label} against {claim.claim.adversary}",
                    "kind": "claim",
                    "status": claim.status,
                    "detail": claim_evidence(claim),
                }
            )
        rows += [
            {"check": run.verifier, "kind": "integrity", "status": run.outcome, "detail": run.why}
            for run in self.assessment.integrity
        ]
        return rows

    def to_frame(self) -> pandas.DataFrame:
        """:meth:`rows` as a DataFrame."""
        return _frame(self.rows(), ("check", "kind", "status", "detail"))

    def to_json(self) -> dict[str, Any]:
        """The assessment as ``privtool verify --json`` prints it."""
        return self.assessment.to_json()

    def _title(self) -> str:
        return f"{self.assessment.release.kind} release, {self.assessment.scope.name}"

    def __repr__(self) -> str:
        return f"<privtool.{type(self).__name__} {self.verdict}: {self.reason}>"

    def _repr_html_(self) -> str:
        rows = [(r["check"], r["kind"], r["status"], r["detail"]) for r in self.rows()]
        return notebook.headline(self._title(), self.verdict, self.reason) + notebook.table(
            ("check", "kind", "status", "detail"), rows
        )


class Findings(Verdict):
    """An assessment with attacks: the verdict (a finding that refutes a claim
    makes it FAIL), and every finding of every attack (:meth:`rows`), evidence
    taken from the original data withheld unless ``include_examples``."""

    def __init__(self, assessment: Assessment, include_examples: bool = False) -> None:
        super().__init__(assessment)
        self.include_examples = include_examples

    @property
    def findings(self) -> list[Finding]:
        """Every finding, in attack order, with its severity judged from the claims."""
        return [redact(f, self.include_examples) for run in self.assessment.attacks for f in run.findings]

    @property
    def breaches(self) -> list[Finding]:
        """The findings that refute a claim of the release."""
        return [f for f in self.findings if f.severity == "breach"]

    def rows(self) -> list[dict[str, Any]]:
        """One dict per finding: ``attack``, ``severity``, ``refutes`` (the
        model), ``title``, ``explanation`` and ``evidence``."""
        return [
            {
                "attack": f.attack,
                "severity": f.severity,
                "refutes": f.refutes,
                "title": f.title,
                "explanation": f.explanation,
                "evidence": f.evidence,
            }
            for f in self.findings
        ]

    def to_frame(self) -> pandas.DataFrame:
        return _frame(self.rows(), ("attack", "severity", "refutes", "title", "explanation", "evidence"))

    def _repr_html_(self) -> str:
        summary = [
            (run.attack, run.adversary, len(run.findings), run.breaches, run.risks, run.exposure or "")
            for run in self.assessment.attacks
        ]
        worst = sorted(self.rows(), key=lambda r: ("breach", "risk", "info").index(r["severity"]))
        return (
            notebook.headline(self._title(), self.verdict, self.reason)
            + notebook.table(("attack", "adversary", "findings", "breaches", "risks", "exposure"), summary)
            + notebook.table(
                ("attack", "severity", "finding"), [(r["attack"], r["severity"], r["title"]) for r in worst]
            )
        )


class Metrics:
    """Utility and risk figures of a release: one :class:`MetricResult` per
    metric (``ok`` with its values, ``skipped`` or ``error`` with the reason)."""

    def __init__(self, results: Sequence[MetricResult]) -> None:
        self.results = list(results)

    def __getitem__(self, name: str) -> dict[str, Any]:
        """The values of metric ``name`` (``KeyError`` naming the metrics there are)."""
        for result in self.results:
            if result.name == name:
                return result.values
        raise KeyError(f"no metric {name!r} here (there are: {', '.join(r.name for r in self.results) or 'none'}).")

    def rows(self) -> list[dict[str, Any]]:
        """One dict per figure: ``metric``, ``measure``, ``value``, ``status``
        and ``reason`` (a skipped or failed metric gives one row without value)."""
        rows: list[dict[str, Any]] = []
        for result in self.results:
            if result.status != "ok":
                rows.append({"metric": result.name, "status": result.status, "reason": result.reason})
                continue
            for measure, value in result.values.items():
                if not measure.endswith("_detail"):
                    rows.append({"metric": result.name, "measure": measure, "value": value, "status": "ok"})
        return rows

    def to_frame(self) -> pandas.DataFrame:
        """:meth:`rows` as a DataFrame (long format: one row per figure)."""
        return _frame(self.rows(), ("metric", "measure", "value", "status", "reason"))

    def __repr__(self) -> str:
        return f"<privtool.Metrics of {', '.join(r.name for r in self.results) or 'nothing'}>"

    def _repr_html_(self) -> str:
        rows = [(r["metric"], r.get("measure"), r.get("value"), r.get("reason") or "") for r in self.rows()]
        return notebook.headline(f"{len(self.results)} metric(s)") + notebook.table(
            ("metric", "measure", "value", "note"), rows
        )


class Comparison:
    """Methods side by side: one row per cell (method, grid point, repeat) with
    its verdict and every measure, as ``privtool compare`` writes them to
    ``results.csv``; ``directory`` holds that file, ``results.json``, the
    plots, ``index.html`` and each cell's release and trail."""

    def __init__(self, rows: Sequence[dict[str, Any]], axes: Sequence[str], directory: Path) -> None:
        self.rows = list(rows)
        self.axes = list(axes)
        self.directory = directory

    def columns(self) -> list[str]:
        """Every column of the rows, in first-seen order."""
        seen: dict[str, None] = {}
        for row in self.rows:
            seen.update(dict.fromkeys(row))
        return list(seen)

    def to_frame(self) -> pandas.DataFrame:
        """The rows as a DataFrame, one column per field."""
        return _frame(self.rows, self.columns())

    def __repr__(self) -> str:
        methods = sorted({str(r.get("method")) for r in self.rows})
        return f"<privtool.Comparison of {', '.join(methods)}: {len(self.rows)} run(s) in {self.directory}>"

    def verdicts(self) -> dict[str, int]:
        """How many runs got each verdict (``PASS``, ``FAIL``, ``INCOMPLETE``),
        worst first; runs compared without verification have none."""
        counts: dict[str, int] = {}
        for verdict in ("FAIL", "INCOMPLETE", "PASS"):
            n = sum(1 for row in self.rows if row.get("verdict") == verdict)
            if n:
                counts[verdict] = n
        return counts

    def _repr_html_(self) -> str:
        """The verdicts first (how many runs got each), then one row per run."""
        shown = ["method", *self.axes, "repeat", "verdict", "seconds"]
        measures = [c for c in self.columns() if "." in c][:4]
        rows = [[row.get(c) for c in (*shown, *measures)] for row in self.rows]
        counts = self.verdicts()
        worst = next(iter(counts), None)
        said = ", ".join(f"{n} {verdict}" for verdict, n in counts.items()) or "not verified"
        title = f"{len(self.rows)} run(s): {said}"
        return notebook.headline(title, worst, f"in {self.directory}") + notebook.table((*shown, *measures), rows)
