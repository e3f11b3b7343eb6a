"""How cost grows: the scale run's stages over several sizes, time and peak memory per record.

    python benchmarks/scale_growth.py run --label after --records 500000,1000000,2000000,5000000 --base-records 100000
    python benchmarks/scale_growth.py plot benchmarks/out/growth/before.json benchmarks/out/growth/after.json \\
        --png docs/results/scale-growth.png

``run`` makes (once) a ``privtool synth --like bms-pos --records N --seed 1``
file per size under ``DIR/data/``, then runs, per size and in the order given,
the pipeline of ``benchmarks/scale_dask.py`` (disassociate with REFINE,
sanitize with safe-disassociation, verify without the original,
faithfulness), each stage as the real command line with ``--executor dask
--workers W``, measured as there: wall and CPU seconds (the stage process and
its Dask workers), peak resident memory of the stage process and of its
largest worker (sampled ``VmHWM``), the load average before and after. The
results go to ``DIR/LABEL.json`` after every stage, so an interrupted run
keeps what finished (``--resume`` skips the stages already there). Outputs
of the stages go to ``DIR/LABEL/N/``; the data files are shared by the labels.
``--base-records N`` first runs the same stages on N records (default 100,000;
0: none) and records them as the run's *base*: what a stage costs whatever
its input (interpreter, imports, the Dask cluster, bounded buffers).

``plot`` draws time and peak memory per record against the number of records
(log x, one line per stage, one line style per results file) and prints, per
file and stage, the flatness ratio (the largest per-record figure over the
smallest across the sizes), the pipeline's wall time per size, and the stage
process's memory per million records (least-squares slope of its peak against N).

With a base in the file it also draws and prints the *marginal* cost per
record: what the records beyond the base's cost, ``(x(N) - x(base)) / (N -
base records)`` for wall time, CPU time and peak memory (peaks being the larger
of the main process's and the largest worker's as in the raw figure). A stage
costs ``a + b N`` plus whatever grows faster; the raw figure ``a / N + b``
falls with N whatever the code does (an interpreter with numpy, Dask and
privtool imported is about 85 MiB), the marginal one is ``b`` at every size
unless something grows faster than linearly, which is what flatness is for. A
base of 100,000 records holds the bounded buffers (slabs, units, batches in
flight) that a tiny input never fills; with 10,000 they stay in the marginal
figure as a fixed part that falls with N.

``--repeat R`` runs the base and every size R times, the whole sequence
again each time (so a slow spell of the machine falls on every size, not on
one), and every figure then stands for the R runs of its stage: the least
wall and CPU time (disturbances only add time, as with ``timeit``) and the
highest peaks; the summary lists every run's wall time beside it.
"""

from __future__ import annotations

import argparse
import calendar
import json
import math
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

from scale_dask import STAGES, executor_options, stage, stage_commands

PIPELINE = STAGES[1:]  # synth excluded
MIB = 1024 * 1024


def git_head() -> str:
    """The commit of the privtool being measured (the installed package's checkout), or ``unknown``."""
    import privtool

    where = Path(privtool.__file__).resolve().parent
    done = subprocess.run(["git", "-C", str(where), "rev-parse", "HEAD"], capture_output=True, text=True)
    return done.stdout.strip() or "unknown"


def load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text()) if path.exists() else {}


def run(opts: argparse.Namespace) -> None:
    out = opts.json or opts.dir / f"{opts.label}.json"
    record = load(out) if opts.resume else {}
    record.update({"label": opts.label, "workers": opts.workers, "commit": opts.commit or git_head()})
    record.setdefault("sizes", {})
    if opts.base_records:
        base = record.setdefault("base", {"records": opts.base_records, "stages": []})
        if base["records"] != opts.base_records:
            raise SystemExit(f"{out} holds a base of {base['records']} records, not {opts.base_records}.")
    for repeat in range(opts.repeat):
        if opts.base_records:
            run_size(opts, record, out, opts.base_records, record["base"], repeat)
        for records in (int(n) for n in opts.records.split(",") if n):
            run_size(opts, record, out, records, record["sizes"].setdefault(str(records), {"stages": []}), repeat)
    out.write_text(json.dumps(record, indent=1) + "\n")


def run_size(
    opts: argparse.Namespace, record: dict[str, Any], out: Path, records: int, size: dict[str, Any], repeat: int
) -> None:
    """The stages of ``opts.stages`` that ``size`` holds at most REPEAT runs of, on RECORDS records,
    saved to OUT after each."""
    executor = executor_options(opts.workers, None)
    data = opts.dir / "data" / f"pos-{records}.dat"
    work = opts.dir / opts.label / str(records)
    work.mkdir(parents=True, exist_ok=True)
    data.parent.mkdir(parents=True, exist_ok=True)
    commands = stage_commands(data, work, records, executor)
    if not data.exists():
        size["synth"] = stage("synth", commands["synth"], work)
    done = Counter(s["stage"] for s in size["stages"])
    for name in opts.stages.split(","):
        if done[name] > repeat:
            continue
        left = opts.deadline - time.time() if opts.deadline else None
        if left is not None and left <= 0:
            break
        result = stage(name, commands[name], work, left)
        if name in ("verify", "faithfulness") and result.get("finished", True):
            report = json.loads((work / f"{name}.out").read_text())
            result["verdict"] = report["verdict"]  # faithfulness alone: INCOMPLETE, the claims need the rest
            result["certificates"] = {c["guarantee"]: c["holds"] for c in report["certificates"]}
        size["stages"].append(result)
        out.write_text(json.dumps(record, indent=1) + "\n")
        if not result.get("finished", True):
            break
    print(f"{records} records: {sum(s['wall_s'] for s in size['stages']):.1f} s wall", flush=True)


def stage_peak_mib(stage_result: dict[str, Any]) -> float:
    """A stage's peak: the larger of its main process's and its largest worker's (MiB)."""
    return max(stage_result["peak_mib"], stage_result.get("peak_worker_mib", 0.0))


def flatness(values: Sequence[float]) -> float:
    """The largest of per-record figures over the smallest (1.0: perfectly flat)."""
    return max(values) / min(values)


def marginal(value: float, base_value: float, records: int, base_records: int) -> float:
    """What each record beyond the base's costs: ``(value - base_value) / (records - base_records)``."""
    return (value - base_value) / (records - base_records)


class Row(NamedTuple):
    """One stage at one size: raw figures per record, then the marginal ones (NaN without a base)."""

    records: int
    wall_us: float
    cpu_us: float
    peak_bytes: float
    marginal_wall_us: float
    marginal_cpu_us: float
    marginal_peak_bytes: float


RAW = ("wall_us", "cpu_us", "peak_bytes")
MARGINAL = ("marginal_wall_us", "marginal_cpu_us", "marginal_peak_bytes")


def combined(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """One stage's figures over its runs: the least wall and CPU time, the highest peaks,
    the first run's load before and the last's after, and ``runs_wall_s``, every run's wall time."""
    return {
        **runs[0],
        "wall_s": min(r["wall_s"] for r in runs),
        "cpu_s": min(r["cpu_s"] for r in runs),
        "peak_mib": max(r["peak_mib"] for r in runs),
        "peak_worker_mib": max(r.get("peak_worker_mib", 0.0) for r in runs),
        "load_after": runs[-1]["load_after"],
        "runs_wall_s": [r["wall_s"] for r in runs],
    }


def finished_stages(size: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """A size's stages that ran to the end, by name, each :func:`combined` over its runs."""
    runs: dict[str, list[dict[str, Any]]] = {}
    for s in size.get("stages", []):
        if s.get("finished", True):
            runs.setdefault(s["stage"], []).append(s)
    return {name: combined(stage_runs) for name, stage_runs in runs.items()}


def per_record(record: dict[str, Any]) -> dict[str, list[Row]]:
    """Per stage, one :class:`Row` per size (ascending); peaks as :func:`stage_peak_mib`."""
    base = finished_stages(record.get("base", {}))
    base_records = record.get("base", {}).get("records", 0)
    table: dict[str, list[Row]] = {}
    for n, size in sorted(record["sizes"].items(), key=lambda kv: int(kv[0])):
        records = int(n)
        for name, s in finished_stages(size).items():
            figures = (s["wall_s"] * 1e6, s["cpu_s"] * 1e6, stage_peak_mib(s) * MIB)
            if name in base:
                b = base[name]
                at_base = (b["wall_s"] * 1e6, b["cpu_s"] * 1e6, stage_peak_mib(b) * MIB)
                extra = [marginal(x, x0, records, base_records) for x, x0 in zip(figures, at_base, strict=True)]
            else:
                extra = [math.nan] * 3
            table.setdefault(name, []).append(Row(records, *(x / records for x in figures), *extra))
    return table


def slope_mib_per_million(points: list[tuple[int, float]]) -> float:
    """Least-squares slope of peak MiB against millions of records."""
    xs = [n / 1e6 for n, _ in points]
    ys = [y for _, y in points]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    den = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / den if den else float("nan")


def summary(record: dict[str, Any]) -> str:
    """Markdown: one row per stage and size, then the flatness ratios and the driver's memory per million records."""
    lines = [
        f"### {record['label']} (commit {record['commit'][:7]}, {record['workers']} workers)",
        "",
        "| records | stage | wall s | CPU s | peak main MiB | peak worker MiB | wall us/rec | CPU us/rec"
        " | peak B/rec | load before -> after | every run's wall s |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|---|---|",
    ]
    for n, size in sorted(record["sizes"].items(), key=lambda kv: int(kv[0])):
        records = int(n)
        finished = finished_stages(size)
        unfinished = [s for s in size["stages"] if not s.get("finished", True)]
        for s in [*finished.values(), *unfinished]:
            stopped = "" if s.get("finished", True) else " (stopped unfinished)"
            runs = ", ".join(f"{wall:.1f}" for wall in s.get("runs_wall_s", [s["wall_s"]]))
            lines.append(
                f"| {records:,} | {s['stage']}{stopped} | {s['wall_s']:.1f} | {s['cpu_s']:.1f} | {s['peak_mib']:,.0f} |"
                f" {s.get('peak_worker_mib', 0.0):,.0f} | {s['wall_s'] / records * 1e6:.1f} |"
                f" {s['cpu_s'] / records * 1e6:.1f} | {stage_peak_mib(s) * MIB / records:,.0f} |"
                f" {s['load_before'][0]:.1f} -> {s['load_after'][0]:.1f} | {runs} |"
            )
        if set(finished) >= set(PIPELINE):
            total = sum(finished[name]["wall_s"] for name in PIPELINE)
            lines.append(f"| {records:,} | **pipeline** | **{total:.1f}** | | | | | | | | |")
    based = f"{record['base']['records']:,} records" if "base" in record else "no base run"
    lines += [
        "",
        f"| stage | sizes | flatness wall/rec | flatness CPU/rec | flatness peak/rec | base ({based}): wall s, peak MiB"
        " | marginal flatness wall/rec | marginal flatness CPU/rec | marginal flatness peak/rec"
        " | main MiB per 1M records |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    base = finished_stages(record.get("base", {}))
    for name, rows in per_record(record).items():
        if len(rows) < 2:
            continue
        mains = [(r.records, finished_stages(record["sizes"][str(r.records)])[name]["peak_mib"]) for r in rows]
        sizes = ", ".join(f"{r.records / 1e6:g}M" for r in rows)
        raw = " | ".join(f"{flatness([getattr(r, f) for r in rows]):.2f}" for f in RAW)
        if name in base:
            at_base = f"{base[name]['wall_s']:.1f} s, {stage_peak_mib(base[name]):,.0f} MiB"
            extra = " | ".join(f"{flatness([getattr(r, f) for r in rows]):.2f}" for f in MARGINAL)
        else:
            at_base, extra = "-", "- | - | -"
        lines.append(f"| {name} | {sizes} | {raw} | {at_base} | {extra} | {slope_mib_per_million(mains):,.0f} |")
    return "\n".join(lines)


def plot(paths: list[Path], png: Path) -> None:
    """Time (wall and CPU) and peak memory per record against records, one line per stage and results file."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    records = [load(path) for path in paths]
    based = any("base" in record for record in records)
    fields = RAW + MARGINAL if based else RAW
    rows_of_panels = 2 if based else 1
    fig, grid = plt.subplots(rows_of_panels, 3, figsize=(15, 4.5 * rows_of_panels), layout="constrained", squeeze=False)
    axes = list(grid.flat)
    styles = ["--", "-", ":", "-."]
    colours = {name: f"C{i}" for i, name in enumerate(PIPELINE)}
    sizes: set[int] = set()
    for record, style in zip(records, styles, strict=False):
        print(summary(record) + "\n")
        for name, rows in per_record(record).items():
            xs = [r.records for r in rows]
            sizes.update(xs)  # a size with no finished stage gets no tick
            label = f"{name} ({record['label']})"
            for ax, field in zip(axes, fields, strict=False):  # NaN (no base): no marginal line
                ys = [getattr(r, field) for r in rows]
                ax.plot(xs, ys, style, marker="o", color=colours.get(name, "k"), label=label)
    titles = (
        "wall time per record (us)",
        "CPU time per record (us, stage + workers)",
        "peak memory per record (bytes, main or worker)",
        "marginal wall time per record (us)",
        "marginal CPU time per record (us)",
        "marginal peak memory per record (bytes)",
    )
    for ax, title in zip(axes, titles, strict=False):
        ax.set_xscale("log")
        ax.set_xticks(sorted(sizes), [f"{n / 1e6:g}M" for n in sorted(sizes)])
        ax.minorticks_off()
        ax.set_ylim(bottom=0)
        ax.set_xlabel("records (synth --like bms-pos)")
        ax.set_title(title, fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside right upper", fontsize=8)
    fig.suptitle(f"How cost grows: privtool pipeline, --executor dask --workers 2 ({time.strftime('%Y-%m-%d')})")
    png.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(png, dpi=110)
    print(f"wrote {png}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    running = commands.add_parser("run", help="Run the stages over the sizes.")
    running.add_argument("--records", default="500000,1000000,2000000,5000000", help="Comma-separated sizes, in order.")
    running.add_argument("--label", default="after", help="Names the results file and the output folder.")
    running.add_argument("--workers", type=int, default=2)
    running.add_argument("--base-records", type=int, default=100_000, help="Size of the base run, first (0: none).")
    running.add_argument("--dir", type=Path, default=Path("benchmarks/out/growth"))
    running.add_argument("--json", type=Path, default=None, help="Results file (default DIR/LABEL.json).")
    running.add_argument("--stages", default=",".join(PIPELINE), help="Comma-separated subset of the pipeline.")
    running.add_argument("--resume", action="store_true", help="Keep the results file's stages and skip them.")
    running.add_argument(
        "--repeat", type=int, default=1, help="Run the whole sequence (base and sizes) this many times; see above."
    )
    running.add_argument(
        "--deadline",
        type=lambda t: calendar.timegm(time.strptime(time.strftime("%Y-%m-%d ") + t, "%Y-%m-%d %H:%M")),
        default=None,
        help="HH:MM UTC today: a stage still running then is stopped and recorded as unfinished.",
    )
    running.add_argument("--commit", default=None, help="Record this commit (default: the installed privtool's HEAD).")
    plotting = commands.add_parser("plot", help="Plot and summarise results files.")
    plotting.add_argument("results", type=Path, nargs="+")
    plotting.add_argument("--png", type=Path, default=Path("docs/results/scale-growth.png"))
    opts = parser.parse_args()
    if opts.command == "run":
        run(opts)
    else:
        plot(opts.results, opts.png)


if __name__ == "__main__":
    sys.exit(main())
