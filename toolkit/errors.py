"""The error contract of privtool (docs/design.md, "Error contract").

Every user error is a :class:`UserError` whose message is one sentence naming the
file, line or parameter at fault; the CLI prints it and exits with code 2.
A guarantee that does not hold is not an error but a result: ``verify`` and
``audit`` report it and exit with code 1 (:data:`EXIT_GUARANTEE_FAILED`).
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_GUARANTEE_FAILED = 1
EXIT_USAGE = 2


class UserError(Exception):
    """Bad input or bad parameters: one clear sentence, exit code 2, no traceback."""

    exit_code = EXIT_USAGE

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class InputError(UserError):
    """A file could not be read or does not hold what its format promises.

    ``path`` and ``line`` (1-based), when known, are folded into the message.
    """

    def __init__(self, message: str, path: object | None = None, line: int | None = None) -> None:
        where = ""
        if path is not None:
            where = f"{path}"
            if line is not None:
                where += f", line {line}"
            where += ": "
        super().__init__(where + message)
        self.path = path
        self.line = line


class OutputError(UserError):
    """An output cannot be written as asked (e.g. a label its format cannot hold)."""


class ParameterError(UserError):
    """A parameter is missing, of the wrong type or out of range."""


class NoSolution(ParameterError):
    """A method found no result within the budget its parameters set (a solver
    time limit): exit 2 for a single run, a recorded outcome in ``compare``."""


class PluginError(UserError):
    """Plugins clash (two claim one component name) or a component is unknown."""


class MissingEvidence(UserError):
    """A metric, attack or verifier needs evidence (the original data, the trail)
    that was not given, or the evidence given cannot support it (an original
    without a single pair, say); callers may report it as skipped instead of failing."""
