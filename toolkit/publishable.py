"""What a release may publish, and what belongs in its private trail.

A release is public; the trail is not (docs/formats.md lists every field with
why it is safe). The rule for the free-form parts:

* ``stats``: only what a reader can recompute from the published content
  (:func:`content_stats`), plus the record accounting ``records_in`` and
  ``suppressed_records`` that shows no input record was lost silently. The
  accounting is withheld once a sanitizer ran after the anonymizer: safe
  disassociation adds ghost records, and ``records_in - suppressed_records``
  against the published records would count them. Every other count a method
  knows (term-chunk occurrences, what a sanitizer suppressed or invented, the
  NCP weighted by the original's occurrences...) describes the original
  beyond what the privacy model lets an adversary know, so it goes to
  ``trail.stats``.
* ``provenance``: the privtool and plugin versions. The input's SHA-256 is a
  commitment anyone can test guesses against (hash every reconstruction of a
  small release and the original is found), and the seed lets an
  algorithm-aware adversary replay a randomised sanitizer's choices (which
  rows of a chunk safe disassociation invented): both live in the trail.
* ``params``: the parameters the method ran with, a file path replaced by the
  content SHA-256 of what it held (a local path says nothing a reader needs).

:func:`split_stats` is applied by :func:`privtool.pipeline.stamp`, the step
every release goes through before it is written, so a third-party method's
extra counts are kept private by default. :func:`private_fields` names what a
release file carries that it should not (the audit warns about each).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from .release import Release

ACCOUNTING_STATS = ("records_in", "suppressed_records")
"""Input-side record counts, public unless a sanitizer ran after the anonymizer."""
PUBLIC_PROVENANCE = ("privtool", "plugins")
"""The provenance keys a release publishes."""


def content_stats(release: Release) -> dict[str, int]:
    """Every count a reader can recompute from the release's content (from
    its CSR arrays when it is held in them)."""
    arrays = release.backing_arrays
    if release.kind == "disassociated" and arrays is not None:
        record_chunks = int(arrays.owner_offsets[arrays.n_clusters])
        in_record_chunks = int(arrays.row_offsets[arrays.chunk_offsets[record_chunks]])
        return {
            "records_published": int(arrays.cluster_sizes.sum()),
            "clusters": arrays.n_clusters,
            "joint_clusters": arrays.n_joint_clusters,
            "record_chunks": record_chunks,
            "shared_chunks": arrays.n_chunks - record_chunks,
            "item_occurrences_in_record_chunks": in_record_chunks,
            "item_occurrences_in_shared_chunks": len(arrays.items) - in_record_chunks,
        }
    if release.kind == "disassociated":
        return {
            "records_published": sum(c.size for c in release.clusters),
            "clusters": len(release.clusters),
            "joint_clusters": len(release.joint_clusters),
            "record_chunks": sum(len(c.record_chunks) for c in release.clusters),
            "shared_chunks": sum(len(j.shared_chunks) for j in release.joint_clusters),
            "item_occurrences_in_record_chunks": sum(
                len(row) for c in release.clusters for chunk in c.record_chunks for row in chunk
            ),
            "item_occurrences_in_shared_chunks": sum(
                len(row) for j in release.joint_clusters for chunk in j.shared_chunks for row in chunk
            ),
        }
    stats = {
        "records_published": len(release.records),
        "item_occurrences_published": sum(len(set(row)) for row in release.records),
    }
    if release.kind == "generalized":
        groups = Counter(frozenset(row) for row in release.records)
        stats["groups"] = len(groups)
        stats["smallest_group"] = min(groups.values(), default=0)
    return stats


def accounting_is_public(release: Release) -> bool:
    """Whether ``records_in``/``suppressed_records`` may be published (see the module docstring)."""
    return not release.params.get("sanitizers")


def split_stats(release: Release, stats: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(public, private)``: the release's stats recomputed from its content
    plus the public accounting taken from ``stats``, and every other entry of
    ``stats``."""
    public: dict[str, Any] = dict(content_stats(release))
    if accounting_is_public(release):
        public.update({key: stats[key] for key in ACCOUNTING_STATS if key in stats})
    private = {key: value for key, value in stats.items() if key not in public}
    return public, private


def private_fields(release: Release) -> list[str]:
    """JSON paths of what ``release`` carries that the trail should hold: a
    stat that is neither recomputable from the content nor public accounting,
    a provenance entry other than the versions, a parameter that names a local
    file instead of its content hash."""
    allowed = set(content_stats(release)) | (set(ACCOUNTING_STATS) if accounting_is_public(release) else set())
    found = [f"$.stats.{key}" for key in release.stats if key not in allowed]
    found += [f"$.provenance.{key}" for key in release.provenance if key not in PUBLIC_PROVENANCE]
    hierarchy = release.params.get("hierarchy")
    if isinstance(hierarchy, str) and release.params.get("hierarchy_format") in ("auto", "edges", "paths"):
        if not hierarchy.startswith("sha256:"):
            found.append("$.params.hierarchy")
    if "sensitive_rules" in release.params:
        found.append("$.params.sensitive_rules")
    return found
