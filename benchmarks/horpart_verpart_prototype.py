"""A bare numpy HORPART + VERPART: the cost reference for disassociation.

Not part of privtool: the smallest program that does the two stages every
disassociation needs (Terrovitis et al., PVLDB 2012, HORPART §3.1 and VERPART
§3.2), written without the toolkit (no registry, no context, no release), so
that ``benchmarks/refine_speed.py`` can say how far privtool's whole
``anonymize`` command, with and without REFINE, is from it.

* Reading: the FIMI file (optionally gzip) parsed with one ``split`` and
  ``numpy``; records as CSR arrays (``indptr``, ``items``).
* HORPART: a stack of parts; a part with more than ``max_cluster_size`` records
  is split on its most frequent term not yet used on its path (ties to the
  smallest id); a term every record holds is skipped; a part is final when it
  is small enough or no term is left. No small-cluster strategy: a side with
  fewer than k records is kept as a cluster (VERPART puts all its terms in
  the term chunk).
* VERPART: supports of every (cluster, term) pair in one sort; per cluster,
  terms with support >= k in descending support (ties to the smaller id) are
  placed greedily: a term joins the current chunk when every pair it forms
  with a member is shared by 0 or at least k records (m = 2; for larger m the
  check walks the subsets of the chunk, as VERPART does); record sets are
  Python-int bitsets.

Run directly it prints one JSON line: records, clusters, record chunks, and
the CPU seconds of reading and of HORPART + VERPART::

    python benchmarks/horpart_verpart_prototype.py ../shared/data/bms-webview-2.dat.gz --k 5 --m 2 --max-cluster-size 30
"""

from __future__ import annotations

import argparse
import gzip
import json
import time
from pathlib import Path

import numpy as np


def read_fimi(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """CSR arrays of a FIMI file (one record per line, integer items, sorted)."""
    raw = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
    lines = raw.decode("ascii").splitlines()
    sizes = np.fromiter((line.count(" ") + 1 if line else 0 for line in lines), dtype=np.int64, count=len(lines))
    items = np.array(" ".join(lines).split(), dtype=np.int64)
    _, items = np.unique(items, return_inverse=True)
    indptr = np.zeros(len(lines) + 1, dtype=np.int64)
    np.cumsum(sizes, out=indptr[1:])
    return indptr, items.astype(np.int64)


def gather(indptr: np.ndarray, items: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Item ids of ``rows``, concatenated."""
    sizes = indptr[rows + 1] - indptr[rows]
    ends = np.cumsum(sizes)
    return items[np.arange(int(ends[-1]) if len(ends) else 0) + np.repeat(indptr[rows] - (ends - sizes), sizes)]


def horpart(indptr: np.ndarray, items: np.ndarray, n_items: int, k: int, max_size: int) -> list[np.ndarray]:
    """Clusters of record positions (ascending within each)."""
    n = len(indptr) - 1
    by_item = np.argsort(items, kind="stable")
    item_rows = np.repeat(np.arange(n), np.diff(indptr))[by_item]
    item_ptr = np.searchsorted(items[by_item], np.arange(n_items + 1))
    owner = np.zeros(n, dtype=np.int64)
    saved: list[np.ndarray] = []
    # a part: [id, rows (may list records that left it), size, counts, ignored terms]
    stack: list[list] = [[0, np.arange(n), n, np.bincount(items, minlength=n_items), []]]
    next_id = 0

    def own_rows(part: list) -> np.ndarray:
        part[1] = part[1][owner[part[1]] == part[0]]
        return part[1]

    while stack:
        part = stack.pop()
        pid, _, size, counts, ignored = part
        final = True
        while size > max_size:
            term = int(np.argmax(counts))
            support = int(counts[term])
            if support == size:  # every record holds it: not a split
                counts[term] = 0
                ignored.append(term)
                continue
            if support < k:  # no split leaves k records on the term's side
                break
            holders = item_rows[item_ptr[term] : item_ptr[term + 1]]
            taken = holders[owner[holders] == pid]
            taken_counts = np.bincount(gather(indptr, items, taken), minlength=n_items)
            taken_counts[ignored] = 0
            counts -= taken_counts
            taken_counts[term] = 0
            ignored.append(term)
            part[2] = size - support
            next_id += 1
            owner[taken] = next_id
            stack.append(part)
            stack.append([next_id, taken, support, taken_counts, list(ignored)])
            final = False
            break
        if not final:
            continue
        rows = own_rows(part)
        if len(rows) >= k:
            saved.append(rows)
        elif stack:  # too small: joins the next part waiting
            target = stack[-1]
            extra = np.bincount(gather(indptr, items, rows), minlength=n_items)
            extra[target[4]] = 0
            target[3] += extra
            target[1] = np.concatenate([own_rows(target), rows])
            target[2] += len(rows)
            owner[rows] = target[0]
        elif saved:
            saved[-1] = np.concatenate([saved[-1], rows])
        else:
            saved.append(rows)
    return [np.sort(rows) for rows in saved]


def fits(bits: int, chunk: list[int], k: int, m: int) -> bool:
    """Whether the chunk's bitsets plus ``bits`` stay k^m-anonymous."""
    stack = [(bits, 0, m - 1)]
    while stack:
        common, start, room = stack.pop()
        for i in range(start, len(chunk)):
            both = common & chunk[i]
            if both and both.bit_count() < k:
                return False
            if both and room > 1:
                stack.append((both, i + 1, room - 1))
    return True


def verpart(
    indptr: np.ndarray, items: np.ndarray, clusters: list[np.ndarray], k: int, m: int
) -> list[list[tuple[int, ...]]]:
    """Record-chunk domains of every cluster."""
    rows = np.concatenate(clusters)
    sizes = indptr[rows + 1] - indptr[rows]
    cluster_of_row = np.repeat(np.arange(len(clusters)), [len(c) for c in clusters])
    local = np.arange(len(rows)) - np.repeat(
        np.cumsum([0] + [len(c) for c in clusters[:-1]]), [len(c) for c in clusters]
    )
    occ = gather(indptr, items, rows)
    span = int(occ.max()) + 1
    key = np.repeat(cluster_of_row, sizes) * span + occ
    order = np.argsort(key, kind="stable")
    key, occ_row = key[order], np.repeat(local, sizes)[order]
    starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
    support = np.diff(np.r_[starts, len(key)])
    out: list[list[tuple[int, ...]]] = [[] for _ in clusters]
    frequent = np.flatnonzero(support >= k)
    owner = (key[starts[frequent]] // span).tolist()
    term = (key[starts[frequent]] % span).tolist()
    supp = support[frequent].tolist()
    row_lists = np.split(occ_row, starts[1:])
    by_cluster: dict[int, list[tuple[int, int, int]]] = {}
    for g, c, t, s in zip(frequent.tolist(), owner, term, supp, strict=True):
        bits = 0
        for r in row_lists[g].tolist():
            bits |= 1 << r
        by_cluster.setdefault(c, []).append((-s, t, bits))
    for c, terms in by_cluster.items():
        terms.sort()
        while terms:
            chunk_bits: list[int] = []
            chunk_terms: list[int] = []
            rest = []
            for entry in terms:
                if fits(entry[2], chunk_bits, k, m):
                    chunk_bits.append(entry[2])
                    chunk_terms.append(entry[1])
                else:
                    rest.append(entry)
            out[c].append(tuple(sorted(chunk_terms)))
            terms = rest
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("data", type=Path)
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--m", type=int, default=2)
    parser.add_argument("--max-cluster-size", type=int, default=30)
    opts = parser.parse_args()
    start = time.process_time()
    indptr, items = read_fimi(opts.data)
    read = time.process_time()
    clusters = horpart(indptr, items, int(items.max()) + 1, opts.k, opts.max_cluster_size)
    chunks = verpart(indptr, items, clusters, opts.k, opts.m)
    done = time.process_time()
    print(
        json.dumps(
            {
                "records": len(indptr) - 1,
                "clusters": len(clusters),
                "record_chunks": sum(len(c) for c in chunks),
                "read_cpu_s": round(read - start, 3),
                "algorithm_cpu_s": round(done - read, 3),
            }
        )
    )


if __name__ == "__main__":
    main()
