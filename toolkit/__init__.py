"""privtool: publish transactional (set-valued) data without letting anyone
single out a person from a few known items, and prove it.

The public entry points are the ``privtool`` command line and the modules
named in ``docs/``; see ``docs/design.md`` for the data flow.
"""

from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as _version

try:
    __version__ = _version("privtool")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0.0.0+unknown"

__all__ = ["__version__"]
