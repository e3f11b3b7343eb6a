"""Headless Chromium for tests that look at HTML as a person would.

Debian's ``chromium`` is installed on first use when absent (CI runs as root on
a fresh machine); where it cannot be installed the calling test is skipped with
the reason.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
]


def chromium_binary() -> str:
    """Path of a working Chromium, installing Debian's package if needed."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found:
        return found
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        pytest.skip("Chromium is not installed and cannot be installed here (needs root and apt-get)")
    lock = Path(tempfile.gettempdir()) / "privtool-chromium-install.lock"
    with open(lock, "w") as handle:
        import fcntl

        fcntl.flock(handle, fcntl.LOCK_EX)  # xdist workers install once, one at a time
        found = shutil.which("chromium")
        if not found:
            env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
            for command in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", "chromium"]):
                done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=900)
                if done.returncode != 0:
                    pytest.skip(f"could not install Chromium ({' '.join(command)}: {done.stderr.strip()[-200:]})")
            found = shutil.which("chromium")
    if not found:
        pytest.skip("Chromium was installed but is not on PATH")
    return found


def _run(args: list[str], profile: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [chromium_binary(), *FLAGS, f"--user-data-dir={profile}", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


def dump_dom(html_file: Path) -> str:
    """The DOM of ``html_file`` after Chromium parsed it."""
    with tempfile.TemporaryDirectory() as profile:
        done = _run(["--dump-dom", html_file.resolve().as_uri()], Path(profile))
    assert done.returncode == 0, done.stderr
    return done.stdout


def screenshot(html_file: Path, png: Path, size: str = "1200,1800") -> Path:
    """A PNG screenshot of ``html_file`` rendered by Chromium."""
    with tempfile.TemporaryDirectory() as profile:
        done = _run([f"--screenshot={png}", f"--window-size={size}", html_file.resolve().as_uri()], Path(profile))
    assert done.returncode == 0 and png.is_file(), done.stderr
    return png
