"""Headless Chromium for tests that look at HTML as a person would.

Tests never install system packages: ``.ci/run`` installs Debian's
``chromium``. Where no Chromium is on the PATH the calling test is skipped with
the reason, except under CI (the ``CI`` environment variable set), where a
missing browser fails the test, so that CI can never skip the browser checks
silently.
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
    """Path of Chromium; skips the test without one (fails it under CI)."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found:
        return found
    reason = "Chromium is not installed (Debian: apt-get install chromium; .ci/run installs it)"
    if os.environ.get("CI"):
        pytest.fail(f"{reason}, and CI must run the browser checks")
    pytest.skip(reason)


def _run(args: list[str], profile: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [chromium_binary(), *FLAGS, f"--user-data-dir={profile}", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


def dump_dom(html_file: Path) -> str:
    """The DOM of ``html_file`` after Chromium parsed it."""
    with tempfile.TemporaryDirectory(dir=html_file.parent) as profile:
        done = _run(["--dump-dom", html_file.resolve().as_uri()], Path(profile))
    assert done.returncode == 0, done.stderr
    return done.stdout


def screenshot(html_file: Path, png: Path, size: str = "1200,1800") -> Path:
    """A PNG screenshot of ``html_file`` rendered by Chromium."""
    with tempfile.TemporaryDirectory(dir=png.parent) as profile:
        done = _run([f"--screenshot={png}", f"--window-size={size}", html_file.resolve().as_uri()], Path(profile))
    assert done.returncode == 0 and png.is_file(), done.stderr
    return png
