"""Is ``privtool verify`` as fast on a bad release as on a good one (issue 16, item 5)?

Usage (from the repository root)::

    python benchmarks/verify_altered.py --data ../shared/data/bms-webview-1.dat.gz \\
        --data ../shared/data/bms-webview-2.dat.gz [--repeat 3] [--layout dumps|canonical] \\
        [--out benchmarks/out/verify-altered]

For each dataset it makes the release (``privtool anonymize DATA --method
disassociation --k 5 --m 2 --max-cluster-size 30``, unless OUT already holds
it) and three altered copies, then times ``privtool verify`` (every verifier,
``--executor serial`` so that one process does all the work and its CPU time is
the measure) on each:

* ``good``: the release as made (privtool's canonical file);
* ``good, dumps`` (``--layout dumps`` only): the same release written with
  ``json.dumps``, which pays the same reading cost as the altered copies;
* ``chunk cut``: its largest record chunk cut to its first sub-record;
* ``term moved``: the first term of the first cluster with a term chunk and a
  record chunk moved into that record chunk's first sub-record;
* ``k + 5``: the good release verified with ``--k 10``.

The altered copies have their ``stats`` recounted from the content
(:func:`privtool.publishable.content_stats`), as a careful tamperer would, so
that the verifiers (not a count mismatch) have to find what is wrong. They are
written with ``json.dumps`` (``--layout dumps``, the default: another JSON
writer's layout, which privtool reads with the validating reader) or with
privtool's own writer (``--layout canonical``: canonical layout and orders,
read by the fast reader like the good release).

Each command runs in this process through ``privtool.cli.main``, the cases of a
dataset in rounds (each once per round, ``--repeat`` rounds); the CPU time
(``time.process_time``, the best of the rounds) is the figure, since the
machine is shared; wall time is printed beside it. Two ratios follow: the CPU
time over the canonical good release's, and over the good release's *in the
layout of the file verified* (the fair reference for "as fast on bad input as
on good": ``good, dumps`` for the dumps copies, the canonical good release for
the canonical files, ``k + 5`` included). Prints one JSON line per case and the
Markdown table of docs/results/verify.md.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import time
from pathlib import Path

from privtool.cli import main as privtool
from privtool.publishable import content_stats
from privtool.release import release_from_json, write_release

K, M = 5, 2


def make_release(data: Path, out: Path) -> Path:
    release = out / f"{data.name.split('.')[0]}.json"
    if not release.exists():
        code = privtool([
            "anonymize", str(data), "--method", "disassociation", "--k", str(K), "--m", str(M),
            "--max-cluster-size", "30", "-o", str(release), "--executor", "serial", "-q",
        ])  # fmt: skip
        if code != 0:
            raise SystemExit(f"anonymize {data} exited {code}")
    return release


def cut_largest_chunk(obj: dict) -> str:
    """Cut the record chunk with the most sub-records to its first one."""
    size, i, j = max(
        (len(chunk), i, j) for i, c in enumerate(obj["clusters"]) for j, chunk in enumerate(c["record_chunks"])
    )
    obj["clusters"][i]["record_chunks"][j] = obj["clusters"][i]["record_chunks"][j][:1]
    return f"cluster {obj['clusters'][i]['id']} record chunk {j}: {size} sub-records -> 1"


def move_a_term(obj: dict) -> str:
    """Move the first term of the first cluster with a term chunk and a record
    chunk into that record chunk's first sub-record."""
    for cluster in obj["clusters"]:
        if cluster["term_chunk"] and cluster["record_chunks"]:
            term = cluster["term_chunk"].pop(0)
            cluster["record_chunks"][0][0].append(term)
            return f"term {term!r} of cluster {cluster['id']} into its record chunk 0"
    raise SystemExit("no cluster has both a term chunk and a record chunk")


def unchanged(obj: dict) -> str:
    """Leave the release as it is (its copy in another layout)."""
    return "as made, written with json.dumps"


def altered(release: Path, name: str, change, layout: str) -> tuple[Path, str]:
    obj = json.loads(release.read_text())
    what = change(obj)
    obj["stats"].update(content_stats(release_from_json(obj)))
    path = release.with_name(f"{release.stem}-{name}-{layout}.json")
    if layout == "canonical":
        write_release(release_from_json(obj), path)
    else:
        path.write_text(json.dumps(obj))
    return path, what


def verify_once(release: Path, extra: list[str]) -> tuple[float, float, dict]:
    """CPU and wall seconds of one ``privtool verify`` of ``release``, and its
    exit code and certificates."""
    out = io.StringIO()
    wall, cpu = time.perf_counter(), time.process_time()
    with contextlib.redirect_stdout(out):
        code = privtool(["verify", str(release), *extra, "--executor", "serial", "-q", "--json"])
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    report = {"exit": code, **json.loads(out.getvalue())}
    certificates = {
        c["guarantee"]: {
            "holds": c["holds"],
            "seconds": c["seconds"],
            "timed_out": c["details"].get("timed_out", False),
        }
        for c in report.get("certificates", [])
    }
    return cpu, wall, {"exit": report["exit"], "certificates": certificates}


def timed_cases(cases: list[tuple[Path, list[str]]], repeat: int) -> list[dict]:
    """The best CPU and wall seconds of ``repeat`` verifications of each case,
    run in rounds (every case once per round), so that a drift of the machine
    or of this process weighs on every case alike."""
    best = [{"cpu_seconds": float("inf"), "wall_seconds": float("inf")} for _ in cases]
    for _ in range(repeat):
        for found, (path, extra) in zip(best, cases, strict=True):
            cpu, wall, report = verify_once(path, extra)
            found.update(
                report, cpu_seconds=min(found["cpu_seconds"], cpu), wall_seconds=min(found["wall_seconds"], wall)
            )
    return [
        {**found, "cpu_seconds": round(found["cpu_seconds"], 3), "wall_seconds": round(found["wall_seconds"], 3)}
        for found in best
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", action="append", required=True, type=Path)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/out/verify-altered"))
    parser.add_argument(
        "--layout", choices=("dumps", "canonical"), default="dumps", help="How the altered copies are written."
    )
    options = parser.parse_args()
    options.out.mkdir(parents=True, exist_ok=True)
    rows = []
    for data in options.data:
        release = make_release(data, options.out)
        cases = [("good", release, [], "as made", "canonical")]
        changes = [("chunk cut", cut_largest_chunk), ("term moved", move_a_term)]
        if options.layout == "dumps":
            changes.insert(0, ("good", unchanged))
        for name, change in changes:
            path, what = altered(release, name.replace(" ", "-"), change, options.layout)
            cases.append((f"{name}, dumps" if change is unchanged else name, path, [], what, options.layout))
        cases.append(("k + 5", release, ["--k", str(K + 5)], f"verified with --k {K + 5}", "canonical"))
        good_cpu: dict[str, float] = {}
        results = timed_cases([(path, extra) for _, path, extra, _, _ in cases], options.repeat)
        for (name, _, _, what, layout), result in zip(cases, results, strict=True):
            good_cpu.setdefault(layout, result["cpu_seconds"])  # the good release comes first in each layout
            row = {"data": data.name, "case": name, "layout": layout, "change": what, **result,
                   "ratio": round(result["cpu_seconds"] / good_cpu["canonical"], 2),
                   "ratio_same_layout": round(result["cpu_seconds"] / good_cpu[layout], 2)}  # fmt: skip
            print(json.dumps(row))
            rows.append(row)
    print(
        "\n| data | case | file layout | change | exit | CPU s | wall s | CPU / good | CPU / good, same layout |"
        "\n|---|---|---|---|---:|---:|---:|---:|---:|"
    )
    for row in rows:
        print(
            f"| {row['data']} | {row['case']} | {row['layout']} | {row['change']} | {row['exit']} | "
            f"{row['cpu_seconds']} | {row['wall_seconds']} | {row['ratio']} | {row['ratio_same_layout']} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
