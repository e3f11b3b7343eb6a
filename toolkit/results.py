"""What attacks and verifiers report: findings and certificates.

Both are plain data so that the CLI, the audit report and ``compare`` can show
them as tables, JSON, Markdown or HTML without knowing which plugin made them.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, is_dataclass
from typing import Any

SEVERITIES = ("breach", "risk", "info")
ORIGINAL_DATA_KEYS = ("target_record", "original_record", "original_records", "known_items", "sensitive_rule")
"""Evidence keys that hold what only the private side may see: records of the
original data, and a sensitive rule (a secret of the trail). Reports withhold
them unless asked to include examples."""


@dataclass
class Finding:
    """One thing an adversary can learn.

    ``refutes`` names the claim model the finding refutes, judged with the
    parameters the release claims (a known itemset of at most m items matching
    fewer than k records refutes ``km-anonymity``), or None. ``severity`` is
    ``breach`` when the release claims that model against the attack's adversary
    (the assessment engine decides this from the claims: ``privtool attack``
    then exits 1), ``risk`` when the finding matters but breaks no claim, with
    ``explanation`` saying in one sentence what the adversary learns and why no
    claim covers it, ``info`` otherwise. ``evidence`` holds what a reader needs to
    check it by hand (itemsets, counts, the chunk it comes from), JSON-ready.
    Evidence taken from the original data (not the release) goes under the keys
    in :data:`ORIGINAL_DATA_KEYS`, which reports leave out unless asked to
    include examples.
    """

    attack: str
    severity: str
    title: str
    evidence: dict[str, Any] = field(default_factory=dict)
    refutes: str | None = None
    explanation: str = ""

    def __post_init__(self) -> None:
        if self.severity not in SEVERITIES:
            raise ValueError(f"severity must be one of {SEVERITIES}, not {self.severity!r}")

    @property
    def breaks_guarantee(self) -> bool:
        return self.severity == "breach"

    def to_json(self) -> dict[str, Any]:
        """The finding as a new dict (what :func:`dataclasses.asdict` gives, its
        evidence copied, in one pass that reports with thousands of findings afford)."""
        return {
            "attack": self.attack,
            "severity": self.severity,
            "title": self.title,
            "evidence": _copied(self.evidence),
            "refutes": self.refutes,
            "explanation": self.explanation,
        }


def _copied(value: Any) -> Any:
    """A copy of JSON-like ``value`` (dicts, lists and tuples copied; a
    dataclass becomes a dict, as with :func:`dataclasses.asdict`)."""
    if isinstance(value, dict):
        return {k: _copied(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copied(v) for v in value]
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return tuple(_copied(v) for v in value)
    if is_dataclass(value) and not isinstance(value, type):
        return asdict(value)
    return value


@dataclass
class Certificate:
    """The verdict on one guarantee of a release.

    ``holds`` is True (proved: every unit certified), False (refuted: ``witness``
    gives a concrete counterexample) or None (not checked: the reason in
    ``details["reason"]``; ``details["timed_out"]`` when a time bound stopped
    it). ``engine`` is ``cpsat``, ``enum`` or ``both``; ``units`` the number of
    chunks/records/rules checked (a certificate with 0 units had nothing to
    check and proves nothing); ``seconds`` the time.
    """

    guarantee: str
    holds: bool | None
    engine: str
    units: int
    seconds: float
    witness: dict[str, Any] | None = None
    details: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)
