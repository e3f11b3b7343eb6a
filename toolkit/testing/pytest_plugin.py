"""The conformance kit's pytest plugin (entry point ``pytest11``: pytest loads it
wherever privtool is installed).

It gives tests a ``privtool_registry`` fixture (every installed plugin, loaded
once per session) and stops the process pool and Dask cluster that the kit's
executor checks share, once the session ends.
"""

from __future__ import annotations

from typing import Any

import pytest

from ..registry import Registry, load_registry


@pytest.fixture(scope="session")
def privtool_registry() -> Registry:
    """The registry of every installed privtool plugin."""
    return load_registry()


def pytest_sessionfinish(session: Any, exitstatus: int) -> None:
    from .checks import close_executors

    close_executors()
