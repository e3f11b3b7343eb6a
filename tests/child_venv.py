"""Child virtual environments for tests that install packages (plugins) and run
privtool in a separate interpreter.

A child sees the environment the tests run in, never the base interpreter: its
site-packages holds a ``.pth`` file that adds every site-packages directory of
``sys.executable`` with :func:`site.addsitedir`, so their own ``.pth`` files
(an editable install of privtool among them) take effect too. Nothing is
installed into the running environment, and nothing is downloaded: packages
are built without isolation with the setuptools of the running environment.
"""

from __future__ import annotations

import site
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class ChildVenv:
    """A virtual environment under a test's temporary directory."""

    path: Path

    @property
    def python(self) -> Path:
        return self.path / "bin" / "python"

    def run(self, *args: object, check: bool = True, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        """Run the child's Python with ``args``; on failure with ``check`` raise
        an AssertionError that shows both output streams."""
        done = subprocess.run([str(self.python), *map(str, args)], capture_output=True, text=True, timeout=timeout)
        if check and done.returncode != 0:
            raise AssertionError(f"{args} exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
        return done

    def privtool(self, *args: object, check: bool = True) -> subprocess.CompletedProcess[str]:
        """``python -m privtool ARGS`` in the child."""
        return self.run("-m", "privtool", *args, check=check)

    def install(self, source: Path, *options: str) -> None:
        """pip-install the project at ``source`` into the child (no dependencies,
        no build isolation: the running environment's setuptools builds it);
        ``options`` go to pip just before ``source`` (``"-e"`` for an editable
        install)."""
        self.run("-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation", *options, source)


def make_child_venv(path: Path) -> ChildVenv:
    """A child virtual environment at ``path`` that sees the running environment."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True, timeout=120)
    child = ChildVenv(path)
    purelib = child.run("-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])").stdout.strip()
    parents = [p for p in site.getsitepackages() if Path(p).is_dir()]
    lines = "".join(f"import site; site.addsitedir({p!r})\n" for p in parents)
    (Path(purelib) / "_running_environment.pth").write_text(lines, encoding="utf-8")
    return child
