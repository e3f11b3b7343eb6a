"""The synthetic generator: shape invariants, determinism, streaming output, bad options."""

from __future__ import annotations

import gzip

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from privtool.context import Context
from privtool.io import read_dataset
from privtool.synth import SynthSpec, generate, make_patterns


def _concat(spec: SynthSpec, seed: int, block_records: int) -> tuple[np.ndarray, list[np.ndarray]]:
    blocks = list(generate(spec, seed, block_records))
    sizes = np.concatenate([b.sizes for b in blocks])
    return sizes, [b.items for b in blocks]


@settings(max_examples=25, deadline=None)
@given(
    records=st.integers(1, 300),
    items=st.integers(1, 60),
    data=st.data(),
)
def test_every_record_respects_the_spec(records: int, items: int, data: st.DataObject) -> None:
    max_size = data.draw(st.integers(1, items))
    avg = data.draw(st.floats(1, max_size))
    spec = SynthSpec(
        records=records,
        items=items,
        avg_size=avg,
        max_size=max_size,
        n_patterns=data.draw(st.integers(1, 30)),
        pattern_size=data.draw(st.floats(1, 6)),
        noise=data.draw(st.floats(0, 1)),
        size_distribution=data.draw(st.sampled_from(["poisson", "lognormal"])),
    )
    blocks = list(generate(spec, data.draw(st.integers(0, 2**40)), block_records=64))
    assert [b.n_records for b in blocks[:-1]] == [64] * (len(blocks) - 1)
    assert sum(b.n_records for b in blocks) == records
    for block in blocks:
        assert block.n_items == items
        assert block.sizes.min() >= 1
        assert block.sizes.max() <= max_size
        for i in range(block.n_records):
            row = block.record(i)
            assert np.all(np.diff(row) > 0)


def test_same_seed_same_records_other_seed_other_records() -> None:
    spec = SynthSpec(records=3000, items=200, avg_size=5, max_size=40)
    a = list(generate(spec, 7, 1000))
    b = list(generate(spec, 7, 1000))
    c = list(generate(spec, 8, 1000))
    assert all(x == y for x, y in zip(a, b, strict=True))
    assert any(x != y for x, y in zip(a, c, strict=True))


def test_average_size_close_to_target_and_popularity_skewed() -> None:
    spec = SynthSpec(records=8000, items=500, avg_size=8, max_size=60, skew=1.0)
    sizes, items = _concat(spec, 1, 8192)
    assert abs(sizes.mean() - 8) < 0.4
    supports = np.bincount(np.concatenate(items), minlength=500)
    uniform = SynthSpec(records=8000, items=500, avg_size=8, max_size=60, skew=0.0)
    _, uniform_items = _concat(uniform, 1, 8192)
    uniform_supports = np.bincount(np.concatenate(uniform_items), minlength=500)
    # Zipf popularity concentrates the occurrences on the head of the items.

    def top(s: np.ndarray) -> float:
        return float(np.sort(s)[-10:].sum() / s.sum())

    assert top(supports) > 2 * top(uniform_supports)


def test_patterns_follow_the_previous_one_when_correlated() -> None:
    def shared(correlation: float) -> float:
        spec = SynthSpec(items=1000, n_patterns=400, pattern_size=6, correlation=correlation, skew=0.0)
        p = make_patterns(spec, Context(seed=3))
        rows = [set(p.items[p.indptr[j] : p.indptr[j + 1]].tolist()) for j in range(400)]
        return float(np.mean([len(rows[j] & rows[j - 1]) / len(rows[j]) for j in range(1, 400)]))

    assert shared(0.0) < 0.05 < 0.2 < shared(0.5)


def test_cli_writes_gzip_fimi_that_reads_back_identical(tmp_path, run_cli, registry) -> None:
    out = tmp_path / "synth.dat.gz"
    args = (
        "synth",
        "--records",
        "1500",
        "--items",
        "300",
        "--avg-size",
        "6",
        "--max-size",
        "30",
        "--seed",
        "5",
        "-q",
        "-o",
        out,
    )
    result = run_cli(*args)
    assert result.code == 0, result.err
    first = out.read_bytes()
    assert run_cli(*args).code == 0
    assert out.read_bytes() == first  # byte-identical, gzip header included
    assert gzip.decompress(first).count(b"\n") == 1500
    dataset = read_dataset(registry, out)
    spec = SynthSpec(records=1500, items=300, avg_size=6, max_size=30)
    expected = [r for block in generate(spec, 5) for r in block.to_label_records()]
    assert dataset.to_label_records() == expected
    stats = run_cli("stats", out, "--json")
    assert '"records": 1500' in stats.out


def test_like_preset_is_overridable(tmp_path, run_cli, registry) -> None:
    out = tmp_path / "pos.dat"
    assert run_cli("synth", "--like", "bms-pos", "--records", "2000", "-q", "-o", out).code == 0
    dataset = read_dataset(registry, out)
    assert dataset.n_records == 2000
    assert dataset.sizes.max() <= 164


def test_bad_options_exit_2_with_one_line(tmp_path, run_cli) -> None:
    cases = [
        (("--max-size", "50", "--items", "10"), "--max-size (50) cannot exceed --items (10)"),
        (("--records", "0"), "--records must be at least 1"),
        (("--avg-size", "99"), "--avg-size must be between 1 and --max-size"),
        (("--size-distribution", "zipf"), "--size-distribution"),
        (("--like", "nope"), "--like"),
    ]
    for args, message in cases:
        result = run_cli("synth", *args, "-o", tmp_path / "x.dat")
        assert result.code == 2
        assert message in result.err
        assert len(result.err.strip().splitlines()) == 1
        assert "Traceback" not in result.err
    assert not (tmp_path / "x.dat").exists()
    missing_dir = run_cli("synth", "--records", "5", "-o", tmp_path / "nodir" / "x.dat")
    assert missing_dir.code == 2 and "does not exist" in missing_dir.err


def test_blocks_written_in_every_format_read_back_as_one_dataset(tmp_path, registry) -> None:
    from privtool.io import write_dataset_blocks

    spec = SynthSpec(records=250, items=40, avg_size=3, max_size=10, n_patterns=20)
    blocks = list(generate(spec, 2, block_records=100))
    expected = [r for block in blocks for r in block.to_label_records()]
    for fmt in registry.all("format"):
        path = tmp_path / f"blocks.{fmt.extensions[0]}.gz"
        write_dataset_blocks(registry, iter(blocks), path, fmt.name)
        assert read_dataset(registry, path, fmt.name).to_label_records() == expected, fmt.name
