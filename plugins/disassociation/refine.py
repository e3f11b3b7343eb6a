"""REFINE: joint clusters whose shared chunks rescue term-chunk terms.

Terrovitis et al. (PVLDB 2012) refine the clusters by repeatedly ordering the
(joint) clusters by the contents of their (virtual) term chunks and joining
adjacent ones "based on Equation 1" (``papers/disassociation-horpart-verpart-refine.txt``
§3.3, Figure 7). Equation 1 itself is not available, so the join criterion
here is the project's own (``docs/algorithms/disassociation.md``):

* A group is a simple cluster or a joint cluster. Its *residual* terms are the
  terms of its members' term chunks all of whose occurrences in the group are
  still unpublished (no member has them in a record or shared chunk); residual
  supports are below k by construction.
* Order the groups with residual terms by their virtual term chunk: each group's
  key lists its residual terms by descending number of groups holding the term
  (then ascending id), compared lexicographically, so groups that share their
  commonest rare term sit side by side (ties keep HORPART order).
* Walk the order; from each group, extend a window over the next groups (at most
  ``k`` in all) until some residual term reaches support >= k in the window.
  Then the window becomes one joint cluster, and VERPART's greedy builds
  k^m-anonymous shared chunks over those terms, projected on every record of the
  window. Every such term leaves the members' term chunks, so each join strictly
  lowers tlost. Without such a term, the walk moves on by one group.
* Repeat passes until one joins nothing. Joint clusters can be members of later
  joint clusters (a tree), as in the paper.
"""

from __future__ import annotations

import numpy as np

from privtool.arrays import (
    concat_ranges,
    in_sorted,
    lexicographic_order,
    run_starts,
    search_sorted,
    sort_int,
    stable_order,
    unique_int,
)
from privtool.chain import ChunkedCluster, JointPlan
from privtool.dataset import Dataset

from .horpart import occurrences
from .publish import cluster_layout, domain_table, project, simple_members
from .verpart import cluster_terms, greedy_chunks, pair_greedy_chunks

WALK_BLOCK = 200_000
"""Residual entries examined per vectorised step of a pass (bounds its temporaries)."""

RESIDUAL_BATCH_OCCURRENCES = 1_000_000
"""Item occurrences read per vectorised step of the initial residual supports (bounds their temporaries)."""

SHARED_BATCH_OCCURRENCES = 1_000_000
"""Lifted occurrences per vectorised pass of :func:`.verpart.cluster_terms` over joint clusters."""


def _residual_supports(
    dataset: Dataset, clusters: list[np.ndarray], term_keys: np.ndarray, span: int
) -> tuple[np.ndarray, np.ndarray]:
    """The supports of the term-chunk terms (``term_keys``: ``cluster * span +
    term``, ascending) among their clusters' records: the keys that occur, and
    their counts. The clusters' records are read :data:`RESIDUAL_BATCH_OCCURRENCES`
    occurrences at a time (consecutive clusters, so the batches' keys follow
    each other) and only the occurrences of term-chunk terms are sorted."""
    if not clusters:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    rows = np.concatenate(clusters)
    cluster_sizes = np.fromiter(map(len, clusters), dtype=np.int64, count=len(clusters))
    row_bounds = np.r_[0, np.cumsum(cluster_sizes)]
    occ_bounds = np.r_[0, np.cumsum(dataset.sizes[rows], dtype=np.int64)][row_bounds]
    keys: list[np.ndarray] = [np.zeros(0, dtype=np.int64)]
    counts: list[np.ndarray] = [np.zeros(0, dtype=np.int64)]
    lo = 0
    while lo < len(clusters):
        hi = int(np.searchsorted(occ_bounds, occ_bounds[lo] + RESIDUAL_BATCH_OCCURRENCES, side="right")) - 1
        hi = min(max(hi, lo + 1), len(clusters))
        items, local = occurrences(dataset, rows[row_bounds[lo] : row_bounds[hi]])
        record_cluster = np.repeat(np.arange(lo, hi, dtype=np.int64), cluster_sizes[lo:hi])
        batch = record_cluster[local] * span + items
        wanted = term_keys[np.searchsorted(term_keys, lo * span) : np.searchsorted(term_keys, hi * span)]
        batch = sort_int(batch[in_sorted(wanted, batch)], runs=True)
        starts = run_starts(batch)
        keys.append(batch[starts])
        counts.append(np.diff(np.r_[starts, len(batch)]).astype(np.int64))
        lo = hi
    return np.concatenate(keys), np.concatenate(counts)


class _Groups:
    """Every group (simple cluster or joint cluster) met so far, by id.

    Residual terms (the terms of its members' term chunks none of its members
    publishes elsewhere, with their support among its records) and blocked terms
    (those published in a record or shared chunk of a member: a window holding
    the group cannot lift them) are flat tables of ``(owner, term)`` columns
    (``res_count`` beside the residual ones), sorted by owner then term (a new
    group gets the next id, so appending keeps them sorted), so that a pass
    works on arrays and never splits keys. ``refs`` names each group as a joint
    plan's member (``("c", cluster)`` or ``("j", plan)``)."""

    def __init__(self, dataset: Dataset, clusters: list[np.ndarray], chunks: list[ChunkedCluster]) -> None:
        self.span = max(dataset.n_items, 1)
        self.refs: list[tuple[str, int]] = [("c", i) for i in range(len(clusters))]
        owner, terms, _ = domain_table([[c.term_chunk] for c in chunks])
        term_keys = sort_int(owner * self.span + terms, runs=True)
        res_keys, self.res_count = _residual_supports(dataset, clusters, term_keys, self.span)
        self.res_owner, self.res_term = np.divmod(res_keys, self.span)
        owner, terms, _ = domain_table([c.record_chunks for c in chunks])
        self.blk_owner, self.blk_term = np.divmod(sort_int(owner * self.span + terms, runs=True), self.span)
        self.keep_only(np.arange(len(clusters), dtype=np.int64))

    def keep_only(self, groups: np.ndarray) -> None:
        """Forget the tables of every group not in ``groups``, and the blocked
        entries of terms that no longer are residual anywhere: no group ever
        gains a residual term, so they can stop nothing again."""
        live = np.zeros(len(self.refs), dtype=bool)
        live[groups] = True
        keep = live[self.res_owner]
        self.res_owner, self.res_term, self.res_count = self.res_owner[keep], self.res_term[keep], self.res_count[keep]
        residual = np.zeros(self.span, dtype=bool)
        residual[self.res_term] = True
        keep = live[self.blk_owner] & residual[self.blk_term]
        self.blk_owner, self.blk_term = self.blk_owner[keep], self.blk_term[keep]

    def joinable(self, active: np.ndarray, k: int) -> np.ndarray:
        """``active`` (the groups whose tables are kept, in walk order) without
        the groups no pass can join any more, whose tables are forgotten.

        When no residual support is k or more (VERPART never leaves one), a
        window lifts a term only where a second group holding it joins the
        window. A group none of whose residual terms another group holds sorts
        after every group holding such a shared term (its key's first term has
        one holder, theirs more), so the windows that lift all lie before it;
        and as no group ever gains a holder of a term, it stays so. Leaving it
        out changes neither the order of the others nor their windows."""
        if len(self.res_count) and int(self.res_count.max()) >= k:
            return active
        shared = np.bincount(self.res_term, minlength=self.span)[self.res_term] > 1
        joinable = np.zeros(len(self.refs), dtype=bool)
        joinable[self.res_owner[shared]] = True
        if joinable[active].all():
            return active
        active = active[joinable[active]]
        self.keep_only(active)
        return active

    def add(self, res: tuple[np.ndarray, np.ndarray, np.ndarray], blk: tuple[np.ndarray, np.ndarray]) -> None:
        """Append the tables of new groups (``(owner, term, count)`` and
        ``(owner, term)``, owners above every existing one, sorted)."""
        self.res_owner = np.concatenate((self.res_owner, res[0]))
        self.res_term = np.concatenate((self.res_term, res[1]))
        self.res_count = np.concatenate((self.res_count, res[2]))
        self.blk_owner = np.concatenate((self.blk_owner, blk[0]))
        self.blk_term = np.concatenate((self.blk_term, blk[1]))


class _Runs:
    """A table's ``(owner, term)`` columns (sorted by owner) as runs, one per group."""

    def __init__(self, owner: np.ndarray, term: np.ndarray, n_groups: int) -> None:
        self.owner, self.term = owner, term
        self.size = np.bincount(owner, minlength=n_groups)
        self.start = np.cumsum(self.size) - self.size

    def by_position(self, ordered: np.ndarray) -> np.ndarray:
        """Indexes of the entries of the groups ``ordered``, group by group in
        that order (within a group, ascending terms): the runs gathered, no sort."""
        return concat_ranges(self.start[ordered], self.size[ordered])


class _Pass:
    """The active groups' tables as one pass sees them: residual and blocked
    entries by group (:class:`_Runs`), and ``holders``, the number of groups
    holding each residual term."""

    def __init__(self, groups: _Groups) -> None:
        self.res = _Runs(groups.res_owner, groups.res_term, len(groups.refs))
        self.blk = _Runs(groups.blk_owner, groups.blk_term, len(groups.refs))
        self.holders = np.bincount(self.res.term, minlength=groups.span)


def _order(view: _Pass, active: np.ndarray) -> np.ndarray:
    """``active`` sorted by the groups' virtual term chunks (module docstring),
    ties in their current order.

    A term's place in the key order, (descending holder count, ascending id),
    becomes one integer rank; a group's key is its residual terms' ranks in
    ascending order, and the keys are compared as sequences, a prefix first,
    as the lists of pairs compare (:func:`privtool.arrays.lexicographic_order`)."""
    res = view.res
    present = np.flatnonzero(view.holders)
    rank_of = np.zeros(len(view.holders), dtype=np.int64)
    rank_of[present[np.lexsort((present, -view.holders[present]))]] = np.arange(len(present))
    shift = max(len(present) - 1, 1).bit_length()  # ranks below 2 ** shift: a mask takes them out of the keys
    # by owner, then rank: stable, as the keys ascend by owner (sort_int's ``runs``)
    ranks = sort_int((res.owner << shift) | rank_of[res.term], runs=True) & ((1 << shift) - 1)
    sizes = res.size[active]
    keys = ranks[concat_ranges(res.start[active], sizes)]
    offsets = np.r_[0, np.cumsum(sizes)].astype(np.int64)
    return active[lexicographic_order(np.zeros(len(active), dtype=np.int64), keys, offsets)]


def _lifting(term: np.ndarray, pos: np.ndarray, count: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """For the entries ``(term, pos, count)`` (by term, then position), those
    that lift their term in some window they end (:func:`_lifts`) and for each
    the smallest distance d (1 .. k - 1) such that it lifts in the window from
    ``pos - d``: 1 for a support of k or more, else the distance of the nearest
    predecessors (same term, distance below k) whose supports reach k with the
    entry's.

    Only the entries whose support is k or more or whose nearest predecessor
    is within k - 1 can lift; they are compared with their k - 1 predecessors
    (``depth``: how many entries of their term precede them), :data:`WALK_BLOCK`
    of them at a time, by gathers. A support added after an entry's
    predecessors stopped counting is never read: ``alive`` only falls."""
    first_of_term = np.ones(len(term), dtype=bool)
    np.not_equal(term[1:], term[:-1], out=first_of_term[1:])
    near = ~first_of_term
    near[1:] &= pos[1:] - pos[:-1] < k
    candidates = np.flatnonzero(near | (count >= k))
    term_start = np.maximum.accumulate(np.where(first_of_term, np.arange(len(term)), 0))
    found_entry: list[np.ndarray] = [np.zeros(0, dtype=np.int64)]
    found_from: list[np.ndarray] = [np.zeros(0, dtype=np.int64)]
    for first in range(0, len(candidates), WALK_BLOCK):
        mine = candidates[first : first + WALK_BLOCK]
        depth, mine_pos, total = mine - term_start[mine], pos[mine], count[mine]
        lifting_from = np.where(total >= k, 1, k)
        alive = total < k
        for b in range(1, k):
            other = np.maximum(mine - b, 0)  # below 0 only where depth < b: not alive
            gap = mine_pos - pos[other]
            alive &= (depth >= b) & (gap < k)
            total = total + count[other]
            reached = alive & (total >= k)
            lifting_from = np.where(reached, gap, lifting_from)
            alive &= ~reached
        hit = lifting_from < k
        found_entry.append(mine[hit])
        found_from.append(lifting_from[hit])
    return np.concatenate(found_entry), np.concatenate(found_from)


def _lifts(
    groups: _Groups, view: _Pass, ordered: np.ndarray, position: np.ndarray, k: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For every start position of the ``ordered`` groups, the length of the
    window that lifts (0: none) and the ``(start, term)`` pairs it lifts.

    The window from start s grows one group at a time, up to k groups; a term t
    is dropped from it once a group of the window blocks t. Adding the L-th
    group lifts t when that group holds t, no group among the first L blocks
    it and t's residual supports in them add up to k or more; the window stops
    at the smallest L lifting some term and lifts every term lifted at that L.

    With each term's entries in position order, the entry e at position p
    lifts t in the window from s = p - d (d = 1 .. k-1) when e's support plus
    those of t's entries in [s, p) reach k and no group in [s, p] blocks t;
    the supports' entries are e's predecessors within distance d (at most
    k - 1 of them, positions being distinct). As the predecessors' distances
    grow with their rank, the supports reach k from d at least the distance of
    the nearest predecessors whose supports reach k with e's (:func:`_lifting`);
    and a block at the nearest blocked position b <= p (found for the
    entries that lift only, by one binary search) rules out d >= p - b. An
    entry of support k or more (VERPART never leaves one: a chunker that puts frequent terms in term
    chunks does) lifts its term in every window it ends, whatever its
    predecessors."""
    n, res = len(ordered), view.res
    entries = res.by_position(ordered)  # every entry: one whose term no other group holds has no predecessor
    term, count = res.term[entries], groups.res_count[entries]
    pos = np.repeat(np.arange(n, dtype=np.int64), res.size[ordered])
    by_term = stable_order(term, len(view.holders))
    term, pos, count = term[by_term], pos[by_term], count[by_term]
    entry, lifting = _lifting(term, pos, count, k)
    lifted, at = term[entry], pos[entry]
    # the nearest position <= at where a group blocks the lifted term (-1: none)
    candidate = np.zeros(len(view.holders), dtype=bool)
    candidate[lifted] = True
    blocking = candidate[view.blk.term]
    blocked_keys = sort_int(view.blk.term[blocking] * n + position[view.blk.owner[blocking]])
    nearest = np.full(len(entry), -1, dtype=np.int64)
    if len(blocked_keys):
        before = search_sorted(blocked_keys, lifted * n + at, side="right") - 1
        key = blocked_keys[np.maximum(before, 0)]
        same = (before >= 0) & (key >= lifted * n)
        nearest[same] = key[same] - lifted[same] * n
    # entry e lifts in the windows from at - d, d = lifting .. min(k - 1, at - nearest - 1)
    windows = np.maximum(np.minimum(at - nearest - 1, k - 1) - lifting + 1, 0)
    d = concat_ranges(lifting, windows)
    start, lifted, length = np.repeat(at, windows) - d, np.repeat(lifted, windows), d + 1
    best = np.full(n, k + 1, dtype=np.int64)
    np.minimum.at(best, start, length)
    chosen = length == best[start]
    return np.where(best <= k, best, 0), start[chosen], lifted[chosen]


def _shared_chunks(
    dataset: Dataset, clusters: list[np.ndarray], plans: list[JointPlan], lifted: np.ndarray, span: int, k: int, m: int
) -> list[list[tuple[int, ...]]]:
    """VERPART's greedy over each joint cluster's lifted terms (``lifted``:
    keys ``joint * span + term``): the term domains of its shared chunks, for
    every joint in creation order.

    The lifted terms' occurrences among each joint's records are those of the
    projection the release publishes (:func:`.publish.project`, one chunk per
    joint over its lifted terms): every record is read once, however many
    joints hold it. Supports and bitsets of consecutive joints are then
    computed together (:func:`.verpart.cluster_terms`; for m = 2, pair counts
    instead, :func:`.verpart.pair_greedy_chunks`: a shared sub-record seldom
    holds two terms), about :data:`SHARED_BATCH_OCCURRENCES` lifted
    occurrences at a time. A joint that lifts one term needs none of this: the
    term's support among its records, its members' residual supports added
    up, is k or more, so its one shared chunk is that term."""
    if not len(lifted):
        return []
    joint, term = np.divmod(lifted, span)
    single = np.bincount(joint, minlength=len(plans)) == 1
    out: list[list[tuple[int, ...]]] = [[] for _ in plans]
    several = ~single[joint]
    if several.any():
        out = _projected_chunks(dataset, clusters, plans, joint[several], term[several], k, m)
    for plan, only in zip(joint[~several].tolist(), term[~several].tolist(), strict=True):
        out[plan] = [(only,)]
    return out


def _projected_chunks(
    dataset: Dataset,
    clusters: list[np.ndarray],
    plans: list[JointPlan],
    joint: np.ndarray,
    term: np.ndarray,
    k: int,
    m: int,
) -> list[list[tuple[int, ...]]]:
    """The shared chunk domains of every joint from the projection of its
    records on its lifted terms (rows ``joint``, ``term``; a joint without
    any gets none), as :func:`_shared_chunks` describes."""
    layout = cluster_layout(len(clusters), simple_members(plans))
    identity = np.arange(dataset.n_items, dtype=np.int64)
    row_joint, items, offsets = project(dataset, identity, clusters, layout, layout.joint_entries(joint, term, joint))
    by_joint = stable_order(row_joint, len(plans))
    record_sizes = np.diff(offsets)[by_joint]
    term = items[concat_ranges(offsets[:-1][by_joint], record_sizes)]
    row_bounds = np.searchsorted(row_joint[by_joint], np.arange(len(plans) + 1))
    occ_bounds = np.r_[0, np.cumsum(record_sizes)][row_bounds]
    out: list[list[tuple[int, ...]]] = []
    lo = 0
    while lo < len(plans):
        hi = int(np.searchsorted(occ_bounds, occ_bounds[lo] + SHARED_BATCH_OCCURRENCES, side="right")) - 1
        hi = min(max(hi, lo + 1), len(plans))
        unit = (np.diff(row_bounds[lo : hi + 1]), record_sizes[row_bounds[lo] : row_bounds[hi]])
        lifted_terms = term[occ_bounds[lo] : occ_bounds[hi]]
        if m == 2:
            out.extend(pair_greedy_chunks(*unit, lifted_terms, k))
        else:
            out.extend(list(greedy_chunks(terms, k, m)) for terms in cluster_terms(*unit, lifted_terms, k))
        lo = hi
    return out


def refine(
    dataset: Dataset, clusters: list[np.ndarray], chunks: list[ChunkedCluster], k: int, m: int
) -> list[JointPlan]:
    """Joint clusters (in creation order; members may be earlier joints) for the
    chunked ``clusters``; see the module docstring for the criterion.

    Each pass orders the active groups, finds for every start the window that
    would lift (:func:`_lifts`), then walks the starts: a start whose window
    lifts makes a joint cluster of the window and the walk resumes after it;
    otherwise the walk moves on by one group. Which window a start would lift
    depends only on the ordered groups, not on the walk, so the walk itself is
    a loop over the starts that would lift."""
    groups = _Groups(dataset, clusters, chunks)
    span = groups.span
    plans: list[JointPlan] = []
    lifted: list[np.ndarray] = [np.zeros(0, dtype=np.int64)]  # keys joint * span + term, ascending
    active = unique_int(groups.res_owner, runs=True)
    while len(active) > 1:
        groups.keep_only(active)
        active = groups.joinable(active, k)
        if len(active) < 2:
            break
        view = _Pass(groups)
        ordered = _order(view, active)
        position = np.full(len(groups.refs), -1, dtype=np.int64)
        position[ordered] = np.arange(len(ordered))
        length, lift_start, lift_term = _lifts(groups, view, ordered, position, k)
        starts, lengths = _walk(length)
        if not len(starts):
            break
        new_ids, res, blk = _join(groups, view, ordered, starts, lengths, lift_start, lift_term, plans, lifted)
        groups.add(res, blk)
        # the next pass's active groups, in walk order: each window replaced by its joint, if it has a residual
        walk = ordered.copy()
        walk[starts] = new_ids
        walk[concat_ranges(starts + 1, lengths - 1)] = -1
        active = walk[walk >= 0]
    for plan, shared in zip(
        plans, _shared_chunks(dataset, clusters, plans, np.concatenate(lifted), span, k, m), strict=True
    ):
        plan.shared_chunks = shared
    return plans


def _walk(length: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The windows of one pass's walk, as ``(starts, lengths)``: from the first
    position, a start whose window lifts (``length``: :func:`_lifts`) makes a
    joint cluster and the walk resumes after its window; otherwise the walk
    moves on by one. Only the starts that would lift are visited."""
    candidates = np.flatnonzero(length)
    starts: list[int] = []
    resume = 0
    for start, size in zip(candidates.tolist(), length[candidates].tolist(), strict=True):
        if start >= resume:
            starts.append(start)
            resume = start + size
    chosen = np.array(starts, dtype=np.int64)
    return chosen, length[chosen]


def _join(
    groups: _Groups,
    view: _Pass,
    ordered: np.ndarray,
    starts: np.ndarray,
    lengths: np.ndarray,
    lift_start: np.ndarray,
    lift_term: np.ndarray,
    plans: list[JointPlan],
    lifted_keys: list[np.ndarray],
) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """Make a joint cluster of each lifting window (``starts``, ``lengths``:
    :func:`_walk`) of one pass: its plan, its lifted terms (appended to ``lifted_keys`` as
    ``plan * span + term``, for the shared chunks), and
    its group, whose residual terms are the window's combined residual supports
    without the blocked and lifted terms, and whose blocked terms are the
    window's plus the lifted ones. The windows' entries are gathered from their
    groups' runs (:class:`_Runs`), not looked for in the whole tables. Returns
    the new groups' ids (-1 for a joint with no residual term left: it takes no
    further part) and their tables for :meth:`_Groups.add`, added once this
    function's temporaries are gone (the pass's peak)."""
    span = groups.span
    covered = concat_ranges(starts, lengths)
    window = np.repeat(np.arange(len(starts), dtype=np.int64), lengths)
    start_of = np.full(len(ordered), -1, dtype=np.int64)
    start_of[starts] = np.arange(len(starts))
    j = start_of[lift_start]
    lifted = unique_int(j[j >= 0] * span + lift_term[j >= 0])

    def of_windows(runs: _Runs) -> tuple[np.ndarray, np.ndarray]:
        """The entries of the windows' groups, and their keys ``window * span + term``."""
        members = ordered[covered]
        entries = runs.by_position(members)
        return entries, np.repeat(window, runs.size[members]) * span + runs.term[entries]

    entries, res_keys = of_windows(view.res)
    by_key = stable_order(res_keys, len(starts) * span)  # runs: each group's terms ascend
    res_keys, res_count = res_keys[by_key], groups.res_count[entries[by_key]]
    firsts = run_starts(res_keys)
    res_keys, res_count = res_keys[firsts], np.add.reduceat(res_count, firsts) if len(firsts) else res_count
    blocked = unique_int(np.r_[of_windows(view.blk)[1], lifted], runs=True)
    keep = ~in_sorted(blocked, res_keys, keys_sorted=True)
    res_keys, res_count = res_keys[keep], res_count[keep]
    first_id = len(groups.refs)
    lifted_keys.append(lifted + len(plans) * span)
    members = [groups.refs[g] for g in ordered[covered].tolist()]  # window by window
    ends = np.cumsum(lengths).tolist()
    for begin, end in zip([0, *ends[:-1]], ends, strict=True):
        plans.append(JointPlan(members[begin:end]))
        groups.refs.append(("j", len(plans) - 1))
    res_window, res_term = np.divmod(res_keys, span)
    blk_window, blk_term = np.divmod(blocked, span)
    has_residual = np.bincount(res_window, minlength=len(starts)) > 0
    new_ids = np.where(has_residual, first_id + np.arange(len(starts), dtype=np.int64), -1)
    return new_ids, (res_window + first_id, res_term, res_count), (blk_window + first_id, blk_term)
