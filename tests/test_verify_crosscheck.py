"""The verifier's own implementations against the attack modules written
independently by other helpers: cover detection (``privtool.attacks.cover``) and
reconstruction support bounds (``privtool.attacks.reconstruction``)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from test_verify_chunks import rows_strategy
from test_verify_disassociation_guarantee import tiny_releases

from privtool.attacks.cover import analyse_chunk
from privtool.attacks.reconstruction import ReconstructionModel
from privtool.context import Context
from privtool.verifiers.chunks import covered_items_cpsat, covered_items_enum
from privtool.verifiers.reconstruction_bounds import max_supports


@settings(max_examples=80, deadline=None)
@given(rows=rows_strategy)
def test_cover_detection_agrees_with_the_attack_module(rows):
    theirs = analyse_chunk(rows)
    covered, support = covered_items_enum(rows)
    assert set(covered) == set(theirs.covered)
    assert set(covered_items_cpsat(rows)[0]) == set(theirs.covered)
    if covered:
        assert support == theirs.itemset_support


@settings(max_examples=60, deadline=None)
@given(release=tiny_releases(), m=st.integers(1, 2))
def test_max_support_agrees_with_the_reconstruction_module(release, m):
    """With term-chunk terms allowed in up to |P| records (our model), recon's
    max_support must equal ours on every itemset some reconstruction holds."""
    model = ReconstructionModel(release, term_max_support=max(c.size for c in release.clusters))
    ours = max_supports(release, m, Context())
    for itemset, support in ours.items():
        assert model.max_support(itemset) == support, itemset
