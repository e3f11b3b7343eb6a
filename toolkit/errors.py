"""The error contract of privtool (docs/design.md, "Error contract").

Every user error is a :class:`UserError` whose message is one sentence naming the
file, line or parameter at fault; the CLI prints it and exits with code 2.
A guarantee that does not hold is not an error but a result: ``verify`` and
``audit`` report it and exit with code 1 (:data:`EXIT_GUARANTEE_FAILED`).
Code of a plugin that raises, returns what its contract forbids or declares
something malformed is a :class:`PluginFault`: one sentence naming the plugin,
the component and the fault, exit code 3 (:data:`EXIT_INTERNAL`), the traceback
only when asked for (DESIGN.md, "Error contract").
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_GUARANTEE_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 3


def line_at(data: bytes, offset: int) -> int:
    """The 1-based line of byte ``offset`` of a text file whose lines end in
    LF, CRLF or a lone CR (every text format reads the three alike)."""
    head = data[:offset]
    return head.count(b"\n") + head.count(b"\r") - head.count(b"\r\n") + 1


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
        self.problem = message
        self.path = path
        self.line = line


class OutputError(UserError):
    """An output cannot be written as asked (e.g. a label its format cannot hold)."""


class ParameterError(UserError, ValueError):
    """A parameter is missing, of the wrong type or out of range, or a name
    (of a method, a component, an option) is unknown. A :class:`ValueError`
    too, so that Python callers of :mod:`privtool` can catch it as one."""


class NoSolution(ParameterError):
    """A method found no result within the budget its parameters set (a solver
    time limit): exit 2 for a single run, a recorded outcome in ``compare``."""


class PluginError(UserError):
    """Plugins clash (two claim one component name) or a component is unknown."""


class UnknownComponent(PluginError, ParameterError):
    """No registered plugin provides a component of this kind and name (an
    unknown ``--method``, ``--sanitizer``, ``--attack``...): a plugin error and
    a parameter error alike."""


class MissingEvidence(UserError):
    """A metric, attack or verifier needs evidence (the original data, the trail)
    that was not given, or the evidence given cannot support it (an original
    without a single pair, say); callers may report it as skipped instead of failing."""


class PluginFault(Exception):
    """Plugin (or internal) code failed: it raised, returned something its
    contract forbids, or declared something malformed.

    ``plugin`` is the plugin's name (what ``-p no:NAME`` disables),
    ``component`` names the component or hook (``metric 'boom'``,
    ``hook privtool_metrics``), ``problem`` says what went wrong. The message is
    one sentence; ``details`` keeps the formatted traceback of the original
    exception (text, so that a fault raised in a worker process survives
    pickling), shown by the CLI only under ``--traceback``."""

    exit_code = EXIT_INTERNAL

    def __init__(self, plugin: str, component: str, problem: str, details: str = "") -> None:
        self.plugin, self.component, self.problem, self.details = plugin, component, problem, details
        self.message = f"plugin {plugin!r}: {component} {problem}".rstrip(".") + "."
        super().__init__(self.message)

    def __reduce__(self) -> tuple[type[PluginFault], tuple[str, str, str, str]]:
        return (type(self), (self.plugin, self.component, self.problem, self.details))

    def __str__(self) -> str:
        return self.message


class TimedOut(Exception):
    """Work reached :attr:`privtool.context.Context.deadline`. Not an error of
    the user or of a plugin: it passes every guard, and the assessment engine
    reports the verifier's certificate as undecided (``details["timed_out"]``)."""
