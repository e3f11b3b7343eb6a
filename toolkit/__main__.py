"""``python -m privtool``: the same command line as the ``privtool`` script."""

from privtool.cli import entry_point

if __name__ == "__main__":
    entry_point()
