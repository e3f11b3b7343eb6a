"""Issue 16, "Data destroyed or lost": outputs never clobber inputs or each
other, a release and its trail are written as a unit, and the temporary files
of a killed run are removed by the next run."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from privtool import atomic
from privtool.atomic import atomic_open, atomic_unit, remove_stale_temporaries, write_texts_atomic
from privtool.errors import InputError

DATA = "a b c\na b\na c\nb c\na b c\na b\na c\nb c\na\nb\n"


def one_line_error(result, *fragments: str) -> None:
    assert result.code == 2, (result.code, result.out, result.err)
    lines = result.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("privtool: error: "), result.err
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    data = tmp_path / "d.basket"
    data.write_text(DATA)
    release, trail = tmp_path / "rel.json", tmp_path / "trail.json"
    return {"data": data, "release": release, "trail": trail, "dir": tmp_path}


def _made_release(run_cli, files: dict[str, Path]) -> None:
    result = run_cli(
        "anonymize", files["data"], "--method", "disassociation", "--k", "2", "--m", "1", "-q",
        "--executor", "serial", "-o", files["release"], "--trail", files["trail"],
    )  # fmt: skip
    assert result.code == 0, result.err


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


CLASHES = {
    "anonymize -o DATA": (
        ["anonymize", "{data}", "--method", "disassociation", "--k", "2", "-o", "{data}"],
        "is the input DATA",
    ),
    "anonymize --trail DATA": (
        ["anonymize", "{data}", "--method", "disassociation", "--k", "2", "-o", "{dir}/new.json", "--trail", "{data}"],
        "is the input DATA",
    ),
    "anonymize -o X --trail X": (
        ["anonymize", "{data}", "--method", "disassociation", "--k", "2",
         "-o", "{dir}/p.json", "--trail", "{dir}/p.json"],
        "are the same file",
    ),
    "anonymize -o through ..": (
        ["anonymize", "{data}", "--method", "disassociation", "--k", "2", "-o", "{dir}/nowhere/../d.basket"],
        "is the input DATA",
    ),
    "hide -o DATA": (
        ["hide", "{data}", "--sensitive", "1", "--min-support", "2", "--min-confidence", "0.1", "-o", "{data}"],
        "is the input DATA",
    ),
    "hide --release DATA": (
        ["hide", "{data}", "--sensitive", "1", "--min-support", "2", "--min-confidence", "0.1",
         "-o", "{dir}/s.basket", "--release", "{data}"],
        "is the input DATA",
    ),
    "hide --trail = -o": (
        ["hide", "{data}", "--sensitive", "1", "--min-support", "2", "--min-confidence", "0.1",
         "-o", "{dir}/s.basket", "--trail", "{dir}/s.basket"],
        "are the same file",
    ),
    "hierarchy build -o DATA": (["hierarchy", "build", "{data}", "--fanout", "2", "-o", "{data}"], "is the input DATA"),
    "audit -o RELEASE": (["audit", "{release}", "--format", "md", "-o", "{release}"], "is the input RELEASE"),
    "audit -o TRAIL": (
        ["audit", "{release}", "--trail", "{trail}", "--format", "json", "-o", "{trail}"],
        "is the input --trail",
    ),
    "audit -o ORIGINAL": (
        ["audit", "{release}", "--original", "{data}", "--format", "html", "-o", "{data}"],
        "is the input --original",
    ),
    "sanitize -o RELEASE": (
        ["sanitize", "{release}", "--sanitizer", "safe-disassociation", "-o", "{release}"],
        "is the input RELEASE",
    ),
    "sanitize --trail-out TRAIL": (
        ["sanitize", "{release}", "--sanitizer", "safe-disassociation", "--trail", "{trail}",
         "-o", "{dir}/safe.json", "--trail-out", "{trail}"],
        "is the input --trail",
    ),
    "convert IN IN": (["convert", "{data}", "{data}"], "is the input IN"),
    "compare into DATA's folder": (
        ["compare", "{data}", "--method", "disassociation", "--k", "2", "-o", "{dir}"],
        "lies in the output folder",
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(CLASHES))
def test_an_output_never_overwrites_an_input(run_cli, files: dict[str, Path], case: str) -> None:
    _made_release(run_cli, files)
    before = _snapshot(files["dir"])
    args, message = CLASHES[case]
    result = run_cli(*(a.format(**{k: str(v) for k, v in files.items()}) for a in args))
    one_line_error(result, message)
    assert _snapshot(files["dir"]) == before


def test_links_to_the_input_are_the_input(run_cli, files: dict[str, Path]) -> None:
    symlink, hardlink = files["dir"] / "sym.basket", files["dir"] / "hard.basket"
    symlink.symlink_to(files["data"])
    os.link(files["data"], hardlink)
    for target in (symlink, hardlink):
        result = run_cli("anonymize", files["data"], "--method", "disassociation", "--k", "2", "-o", target)
        one_line_error(result, "is the input DATA")
    assert files["data"].read_text() == DATA


def test_a_failed_trail_write_leaves_no_release(run_cli, files: dict[str, Path]) -> None:
    """The trail cannot be written (its directory does not exist, or /proc
    refuses it): exit 2 and neither file is created; an existing release is
    left as it was."""
    for bad_trail in (files["dir"] / "missing" / "t.json", Path("/proc/privtool-trail.json")):
        result = run_cli(
            "anonymize", files["data"], "--method", "disassociation", "--k", "2", "-q",
            "-o", files["release"], "--trail", bad_trail,
        )  # fmt: skip
        assert result.code == 2 and "Traceback" not in result.err, result.err
        assert not files["release"].exists()
    files["release"].write_text("old")
    result = run_cli(
        "anonymize", files["data"], "--method", "disassociation", "--k", "2", "-q",
        "-o", files["release"], "--trail", "/proc/privtool-trail.json",
    )  # fmt: skip
    assert result.code == 2
    assert files["release"].read_text() == "old"
    assert _snapshot(files["dir"]).keys() == {"d.basket", "rel.json"}


def test_output_errors_are_one_sentence(run_cli, files: dict[str, Path]) -> None:
    base = ["anonymize", files["data"], "--method", "disassociation", "--k", "2", "-q"]
    one_line_error(run_cli(*base, "-o", files["dir"]), "expected an output file name, found a directory")
    one_line_error(run_cli(*base, "-o", "/proc/privtool.json"), "/proc/privtool.json: cannot write the file")
    one_line_error(run_cli(*base, "-o", files["dir"] / "no" / "r.json"), "the output directory does not exist")


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes in a read-only directory")
def test_an_unwritable_directory_is_one_sentence(run_cli, files: dict[str, Path]) -> None:
    locked = files["dir"] / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    try:
        result = run_cli("anonymize", files["data"], "--method", "disassociation", "--k", "2", "-o", locked / "r.json")
        one_line_error(result, "cannot write the file (Permission denied)")
    finally:
        locked.chmod(0o755)


def test_a_unit_is_all_new_or_all_old_when_a_rename_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    first.write_text("old a")
    second.write_text("old b")
    real_replace = os.replace

    def failing_replace(src, dst):  # the second target refuses its rename
        if Path(dst) == second:
            raise PermissionError(13, "Permission denied")
        return real_replace(src, dst)

    monkeypatch.setattr(atomic.os, "replace", failing_replace)
    with pytest.raises(InputError, match=r"b\.json: cannot write the file"):
        write_texts_atomic([(first, "new a"), (second, "new b")])
    monkeypatch.undo()
    assert (first.read_text(), second.read_text()) == ("old a", "old b")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json", "b.json"]
    write_texts_atomic([(first, "new a"), (tmp_path / "c.json", "new c")])
    assert (first.read_text(), (tmp_path / "c.json").read_text()) == ("new a", "new c")


def test_an_exception_inside_a_unit_writes_nothing(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError), atomic_unit() as unit:
        unit.write_text(tmp_path / "a.txt", "a")
        unit.open(tmp_path / "b.bin", "wb").write(b"b")
        raise RuntimeError("stop")
    assert list(tmp_path.iterdir()) == []


KILLED_WRITER = """
import os, signal, sys
from privtool.atomic import atomic_open
with atomic_open(sys.argv[1]) as handle:
    handle.write("half")
    handle.flush()
    os.kill(os.getpid(), signal.SIGKILL)
"""


def test_the_next_run_removes_the_temporaries_of_a_killed_run(tmp_path: Path) -> None:
    target = tmp_path / "out.json"
    killed = subprocess.run([sys.executable, "-c", KILLED_WRITER, str(target)], check=False)
    assert killed.returncode == -signal.SIGKILL
    left = [p for p in tmp_path.iterdir()]
    assert len(left) == 1 and left[0].name.startswith(".out.json.privtool-"), left
    alive = tmp_path / f".out.json.privtool-{os.getppid()}-keep.tmp"  # a live writer's file stays
    alive.write_text("busy")
    other = tmp_path / ".other.json.privtool-999999999-x.tmp"  # another target's: not this run's business
    other.write_text("x")
    with atomic_open(target) as handle:
        handle.write("whole")
    assert target.read_text() == "whole"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([alive.name, other.name, "out.json"])
    assert remove_stale_temporaries(tmp_path / "other.json") == [other]
