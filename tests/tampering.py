"""Tampering with a release as a careful adversary would: after changing its
content, recount the statistics a release publishes, so that the verifiers
(not the structural check that stats match content) must find the change."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from privtool.publishable import content_stats
from privtool.release import release_from_json


def recount(obj: dict[str, Any]) -> dict[str, Any]:
    """Set ``obj["stats"]``'s content-derived counts to what the content holds; return ``obj``."""
    obj["stats"].update(content_stats(release_from_json(obj)))
    return obj


def write_tampered(obj: dict[str, Any], path: Path) -> Path:
    """Write the release JSON ``obj`` to ``path`` with its stats recounted."""
    path.write_text(json.dumps(recount(obj)))
    return path
