"""Registered stages are used, disabled plugins are gone everywhere, and the
contracts of :mod:`privtool.contracts` hold at registration and on results."""

from __future__ import annotations

import types
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privtool import __version__
from privtool.chain import ChunkedCluster, ClusterBatch, Partitioning
from privtool.cli import cli
from privtool.components import KINDS, Anonymizer, Bound, Outcome, Partitioner, Stage
from privtool.context import Context
from privtool.contracts import _chunks_hold_the_terms, _cluster_terms_problem, check_result, stats_problem
from privtool.dataset import Dataset
from privtool.errors import PluginError, PluginFault
from privtool.hookspecs import hookimpl
from privtool.params import RESERVED_NAMES, K, Param
from privtool.pipeline import method_chain, run_method
from privtool.registry import load_registry
from privtool.release import Cluster, Release


class Halves(Partitioner):
    """A third-party partitioner: the first and the second half of the records."""

    name = "halves"
    summary = "test only: two clusters, the first and second half of the records"
    params = (K, Param("shift", int, 0, "records moved from the second half to the first", min=0))

    def partition(self, dataset: Dataset, params: dict[str, Any], ctx: Context) -> Partitioning:
        cut = min(dataset.n_records, dataset.n_records // 2 + params["shift"])
        rows = np.arange(dataset.n_records, dtype=np.int64)
        return Partitioning([part for part in (rows[:cut], rows[cut:]) if len(part)])


def _plugin(**hooks: Any) -> types.ModuleType:
    module = types.ModuleType("third_party")
    for name, components in hooks.items():
        setattr(module, name, hookimpl(lambda components=components: components))
    return module


RECORDS = [["a", "b"], ["a", "b", "c"], ["a", "c"], ["b", "c"], ["a", "b"], ["a"], ["b", "c", "d"], ["a", "d"]]


def test_a_registered_partitioner_is_a_choice_and_runs_with_the_builtin_chunker_and_refiner() -> None:
    registry = load_registry(extra={"third-party": _plugin(privtool_partitioners=[Halves()])})
    chain = method_chain(registry, "disassociation", (), {"partitioner": "halves"})
    by_name = {p.name: p for p in chain.spec}
    assert "halves" in by_name["partitioner"].choices and "adding" in by_name["partitioner"].choices
    assert by_name["refiner"].choices == ("refine", "none")
    assert "shift" in by_name and "max_cluster_size" not in by_name  # the chosen stage's own options
    dataset = Dataset.from_records(RECORDS)
    outcome = run_method(registry, dataset, "disassociation", {"partitioner": "halves", "k": 2, "shift": 1}, Context())
    assert outcome.trail.cluster_of_record == ["c0"] * 5 + ["c1"] * 3
    params = outcome.release.params
    assert (params["partitioner"], params["chunker"], params["refiner"], params["shift"]) == (
        "halves",
        "verpart",
        "refine",
        1,
    )
    assert outcome.release.provenance["plugins"] == {"disassociation": __version__, "third-party": "unknown"}


def test_a_method_gets_each_chosen_stage_bound_to_its_parameters() -> None:
    seen: dict[str, Any] = {}

    class Probe(Anonymizer):
        name = "probe"
        stages = (Stage("partitioner", "partitioner", "adding"), Stage("refiner", "refiner", "refine", optional=True))
        params = (K,)

        def anonymize(self, dataset: Dataset, params: dict[str, Any], ctx: Context) -> Outcome:
            seen.update(params)
            raise PluginError("stop here")

    registry = load_registry(extra={"probe": _plugin(privtool_anonymizers=[Probe()])})
    with pytest.raises(PluginError, match="stop here"):
        run_method(registry, Dataset.from_records(RECORDS), "probe", {"k": 3, "refiner": "none"}, Context())
    assert seen["refiner"] is None and seen["k"] == 3
    assert isinstance(seen["partitioner"], Bound) and seen["partitioner"].name == "adding"
    assert seen["partitioner"].params == {"k": 3, "max_cluster_size": 30}
    assert seen["partitioner"].component.plugin == "disassociation"  # guarded, faults name its own plugin


def test_a_disabled_plugin_is_gone_everywhere() -> None:
    class Composed(Anonymizer):
        name = "composed"
        stages = (Stage("partitioner", "partitioner", "adding"),)

    registry = load_registry(blocked=["disassociation"], extra={"composed": _plugin(privtool_anonymizers=[Composed()])})
    for kind in ("partitioner", "vertical_chunker", "refiner"):
        assert registry.names(kind) == []
    with pytest.raises(PluginError, match="unknown anonymizer 'disassociation'"):
        method_chain(registry, "disassociation")
    with pytest.raises(PluginError, match="unknown partitioner 'adding' \\(known: none installed\\)"):
        method_chain(registry, "composed")


def test_stage_choice_outside_the_registry_is_refused_with_the_choices() -> None:
    choices = "adding, adding-skip-sibling, horpart, horpart-literal, remaining-list, suppression"
    with pytest.raises(Exception, match=f"--partitioner must be one of {choices}, not 'balanced'"):
        method_chain(load_registry(), "disassociation", (), {"partitioner": "balanced"})


def test_anonymize_list_shows_every_stage_component_and_its_options(run_cli) -> None:
    listed = run_cli("anonymize", "--list")
    assert listed.code == 0
    for line in (
        "partitioner horpart:",
        "vertical chunker verpart:",
        "refiner refine:",
        "  --refiner (refine|none; default refine)",
        "  --max-cluster-size (int, range 2..; default 30)",
    ):
        assert line in listed.out


COMPONENT_OPTION_COMMANDS = ("anonymize", "sanitize", "hide", "metrics", "verify", "attack", "audit", "compare")
FORMAT_OPTION_COMMANDS = ("stats", "rules", "convert")


def test_every_command_option_is_reserved_or_shared_with_components_on_purpose() -> None:
    """A component parameter named like a command's own option would be taken by
    the command: such names are reserved. The others a command shares with the
    components it forwards them to (``--k`` of verify, ``--known`` of attack)."""
    registry = load_registry()
    declared = {p.name for kind in KINDS for c in registry.all(kind) for p in c.params}
    assert not declared & RESERVED_NAMES
    for name in (*COMPONENT_OPTION_COMMANDS, *FORMAT_OPTION_COMMANDS):
        for param in cli.commands[name].params:
            for option in (*param.opts, *param.secondary_opts):
                if option.startswith("--"):
                    spelt = option[2:].replace("-", "_")
                    assert spelt in RESERVED_NAMES or spelt in declared, f"{name} {option}"


# ------------------------------------------------------------------ results
def _partitioner() -> Any:
    return load_registry().get("partitioner", "adding").component


def test_a_partitioning_must_place_every_record_exactly_once() -> None:
    dataset = Dataset.from_records(RECORDS)
    rows = np.arange(8, dtype=np.int64)
    ok = Partitioning([rows[:5], rows[5:7]], suppressed=rows[7:])
    assert check_result(_partitioner(), "partition", ok, (dataset,)) is None
    for bad, problem in (
        (Partitioning([rows[:5], rows[5:7]]), "does not place each of the 8 records exactly once (7 placements)"),
        (Partitioning([rows[:5], rows[4:]]), "does not place each of the 8 records exactly once (9 placements)"),
        (Partitioning([rows, rows[:0]]), "an empty cluster"),
        (Partitioning([rows.astype(float)]), "not 1-d integer arrays"),
        ([rows], "a list, not a Partitioning"),
    ):
        assert problem in check_result(_partitioner(), "partition", bad, (dataset,))


def test_chunks_must_split_exactly_the_terms_of_their_cluster() -> None:
    chunker = load_registry().get("vertical_chunker", "verpart").component
    dataset = Dataset.from_records(RECORDS[:4])  # terms a b c = ids 0 1 2
    batch = ClusterBatch(3, np.array([2, 2]), dataset.sizes, dataset.items, dataset.labels)
    good = [ChunkedCluster(((0, 1),), (2,)), ChunkedCluster(((2,),), (0, 1))]
    assert check_result(chunker, "chunk_batch", good, (batch,)) is None
    assert "4 values, not a list of one ChunkedCluster for each of the 2 clusters" in check_result(
        chunker, "chunk_batch", good * 2, (batch,)
    )
    shared = [good[0], ChunkedCluster(((2, 0),), (0, 1))]
    assert check_result(chunker, "chunk_batch", shared, (batch,)) == "chunks for cluster 4 that share a term"
    missing = [ChunkedCluster(((0,),), (2,)), good[1]]
    assert "for cluster 3 that do not hold exactly the terms" in check_result(chunker, "chunk_batch", missing, (batch,))
    labels = [ChunkedCluster((("a", 1),), (2,)), good[1]]  # a label among the term ids
    assert check_result(chunker, "chunk_batch", labels, (batch,)) == (
        "chunks for cluster 3 that hold a str ('a'), not an integer term"
    )


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.lists(st.integers(0, 6), min_size=1, max_size=4), min_size=1, max_size=12),
    st.data(),
)
def test_the_batch_check_finds_what_the_check_of_each_cluster_finds(
    records: list[list[int]], data: st.DataObject
) -> None:
    """The one-sort check of a batch's chunks (``_chunks_hold_the_terms``)
    against the cluster-by-cluster one, on chunkings that are right, miss a
    term, add one, repeat one or hold a non-integer."""
    dataset = Dataset.from_records([[str(t) for t in row] for row in records])
    cuts = (
        sorted(data.draw(st.sets(st.integers(1, dataset.n_records - 1), max_size=3))) if dataset.n_records > 1 else []
    )
    sizes = np.diff([0, *cuts, dataset.n_records])
    batch = ClusterBatch(0, sizes, dataset.sizes, dataset.items, dataset.labels)
    result: list[Any] = []
    for c in range(len(batch)):
        terms = np.unique(batch.cluster(c).items).tolist()
        where = data.draw(st.lists(st.integers(0, 2), min_size=len(terms), max_size=len(terms)))
        placed: list[Any] = [[t for t, w in zip(terms, where, strict=True) if w == n] for n in range(3)]
        fault = data.draw(st.sampled_from(["none", "none", "drop", "add", "repeat", "float", "label", "list"]))
        if fault == "drop" and terms:
            placed[0] = placed[0][1:]
        elif fault == "add":
            placed[1].append(data.draw(st.integers(-1, dataset.n_items + 1)))
        elif fault == "repeat" and terms:
            placed[2].append(terms[0])
        elif fault == "float" and placed[0]:
            placed[0][0] = placed[0][0] + 0.5
        elif fault in ("label", "list") and placed[0]:  # a label or a list where a term id belongs
            placed[0][0] = str(placed[0][0]) if fault == "label" else [placed[0][0]]
        result.append(ChunkedCluster(tuple(tuple(d) for d in placed[1:] if d), tuple(placed[0])))
    one_by_one = [
        _cluster_terms_problem(chunked, np.unique(batch.cluster(c).items), "") for c, chunked in enumerate(result)
    ]
    assert _chunks_hold_the_terms(batch, result) == all(problem is None for problem in one_by_one)


def test_stats_must_agree_with_the_content() -> None:
    def release(**stats: int) -> Release:
        return Release("disassociated", stats=stats, clusters=[Cluster("c0", 3), Cluster("c1", 2)])

    assert stats_problem(release(records_in=6, records_published=5, suppressed_records=1), 6) is None
    assert stats_problem(release(), None) is None  # a sanitizer may leave counts out
    assert "publishes 5 records, but whose stats say 6" in stats_problem(release(records_published=6), None)
    assert "states 0 suppressed of 6" in stats_problem(release(records_in=6, suppressed_records=0), None)
    assert "stats.records_in is None, but the input has 5" in stats_problem(release(), 5)
    assert "stats.suppressed_records is not a count" in stats_problem(release(suppressed_records=-1), None)
    assert stats_problem(release(records_published=3, ghost_records=2), None) is None


def test_an_anonymizer_whose_release_loses_records_silently_is_a_fault() -> None:
    class Lossy(Anonymizer):
        name = "lossy"

        def anonymize(self, dataset: Dataset, params: dict[str, Any], ctx: Context) -> Outcome:
            stats = {"records_in": dataset.n_records, "records_published": dataset.n_records, "suppressed_records": 0}
            records = dataset.to_label_records()[1:]  # drops one record, says it published all
            return Outcome(Release("sanitized", stats=stats, records=records), _trail())

    registry = load_registry(extra={"lossy": _plugin(privtool_anonymizers=[Lossy()])})
    with pytest.raises(PluginFault) as raised:
        run_method(registry, Dataset.from_records(RECORDS), "lossy", {}, Context())
    assert raised.value.message == (
        "plugin 'lossy': anonymizer 'lossy' anonymize() returned a release that publishes 7 records, "
        "but whose stats say 8."
    )


def _trail() -> Any:
    from privtool.trail import Trail

    return Trail()
