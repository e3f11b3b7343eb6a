"""``exact``: the fewest removed item occurrences that hide every sensitive rule,
then the fewest lost non-sensitive rules, with OR-Tools CP-SAT.

Model (docs/algorithms/rule-hiding.md, "exact"). Let ``T*`` be the records that
fully support some sensitive rule and ``I_S`` the items of the sensitive rules.
One boolean ``keep[t, i]`` per occurrence of an item of ``I_S`` in a record of
``T*``; every other occurrence is kept. This loses no optimum: restoring a
removed occurrence outside ``T*`` or outside ``I_S`` never makes a sensitive rule
strong (it can only raise ``s(X)`` or leave the counts alone), so a minimum
solution removes nothing there. For a rule ``X => Y``,
``s(XY) = #(records with XY outside T*) + sum over t in T* with XY of AND(keep[t, i], i in XY n I_S)``
and ``s(X)`` likewise; "hidden" is the disjunction
``s(XY) <= MST - 1  or  q s(XY) - p s(X) <= -1`` (MCT = p/q, exact). Since
deletions never raise ``s(X)``, either way ``s(XY) <= s_D(XY) - min(N_sup, N_conf)``
(ALGORITHM-NOTES 2.2) holds; it is added as a cut, which gives the solver a
useful lower bound.

Stage 1 minimises the removals. The ``hint`` heuristic's solution is feasible,
so it is given to CP-SAT as a complete hint, its removal count bounds the
objective, and it is the result whenever CP-SAT finds nothing better within its
limits: ``exact`` never returns more removals than its hint. Stage 2 fixes the
removals at the stage-1 value (or at most it, when stage 1 was cut by a limit)
and minimises the number of non-sensitive rules of R(D) that are no longer
strong; only the rules whose counts involve a variable are modelled (the others
cannot be lost). Each stage has ``time_limit`` wall seconds and, when given,
``deterministic_time`` (CP-SAT's deterministic time: with one worker a limited
run is then reproducible); the notes in the trail say whether each stage was
proved optimal, what bound was proved and where the removals came from.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

from privtool.context import Context
from privtool.errors import NoSolution
from privtool.mining import association_rules
from privtool.params import Param

from .base import COMMON_PARAMS, RuleHidingSanitizer
from .fhsar import Fhsar
from .mdsrrc import Mdsrrc
from .mfi_relevance import MfiRelevance
from .workspace import IdRule, Workspace

HEURISTICS: dict[str, type[RuleHidingSanitizer]] = {"mfi-relevance": MfiRelevance, "fhsar": Fhsar, "mdsrrc": Mdsrrc}


class _Model:
    """The CP-SAT variables and count expressions over one workspace."""

    def __init__(self, workspace: Workspace) -> None:
        from ortools.sat.python import cp_model

        self.cp_model = cp_model
        self.model = cp_model.CpModel()
        self.workspace = workspace
        self.items = frozenset().union(*(rule.xy for rule in workspace.rules))
        rows = set()
        for rule in workspace.rules:
            rows.update(workspace.original_rows(rule.xy).tolist())
        self.rows = rows
        self.keep: dict[tuple[int, int], Any] = {}
        for t in sorted(rows):
            for item in workspace.dataset.record(t).tolist():
                if item in self.items:
                    self.keep[(t, item)] = self.model.new_bool_var(f"keep_{t}_{item}")
        self._ands: dict[tuple[int, frozenset[int]], Any] = {}
        self.disjuncts: list[tuple[Any, Any]] = []

    def _and(self, t: int, items: frozenset[int]) -> Any:
        key = (t, items)
        var = self._ands.get(key)
        if var is None:
            literals = [self.keep[(t, i)] for i in sorted(items)]
            if len(literals) == 1:
                var = literals[0]
            else:
                var = self.model.new_bool_var(f"and_{t}_{len(self._ands)}")
                self.model.add_bool_and(literals).only_enforce_if(var)
                self.model.add_bool_or([lit.negated() for lit in literals]).only_enforce_if(var.negated())
            self._ands[key] = var
        return var

    def count(self, itemset: frozenset[int]) -> tuple[Any, bool]:
        """``s(itemset)`` after sanitization as a linear expression, and whether
        it depends on any variable."""
        variable_items = itemset & self.items
        fixed, terms = 0, []
        for t in self.workspace.original_rows(itemset).tolist():
            if t in self.rows and variable_items:
                terms.append(self._and(t, variable_items))
            else:
                fixed += 1
        return fixed + sum(terms), bool(terms)

    def hint(self, removed: dict[int, set[int]]) -> dict[tuple[int, int], int]:
        """Hint a complete solution given as removed items per record: the keep
        literals (permuted within groups of identical records to satisfy
        :meth:`break_symmetry`), every AND literal and every disjunct, so that
        CP-SAT can take it as its first solution without search. Returns the
        hinted keep values (the same number of removals)."""
        values = {key: int(key[1] not in removed.get(key[0], ())) for key in self.keep}
        for members in self.identical_groups():
            record_items = [i for i in self.workspace.dataset.record(members[0]).tolist() if i in self.items]
            patterns = sorted(([values[(t, i)] for i in record_items] for t in members), key=sum)
            for t, pattern in zip(members, patterns, strict=False):
                for i, value in zip(record_items, pattern, strict=False):
                    values[(t, i)] = value
        for key, var in self.keep.items():
            self.model.add_hint(var, values[key])
        for (t, items), var in self._ands.items():
            if len(items) > 1:
                self.model.add_hint(var, int(all(values[(t, i)] for i in items)))
        thresholds = self.workspace.thresholds
        p, q = thresholds.min_confidence.numerator, thresholds.min_confidence.denominator
        for rule, (by_support, by_confidence) in zip(self.workspace.rules, self.disjuncts, strict=False):
            sxy = sum(
                all(values.get((t, i), 1) for i in rule.xy) for t in self.workspace.original_rows(rule.xy).tolist()
            )
            sx = sum(all(values.get((t, i), 1) for i in rule.x) for t in self.workspace.original_rows(rule.x).tolist())
            self.model.add_hint(by_support, int(sxy <= thresholds.min_support - 1))
            self.model.add_hint(by_confidence, int(q * sxy - p * sx <= -1))
        return values

    def removed(self) -> Any:
        return sum(1 - var for var in self.keep.values())

    def identical_groups(self) -> list[list[int]]:
        """Records of ``T*`` with identical content, in record order."""
        groups: dict[tuple[int, ...], list[int]] = {}
        for t in sorted(self.rows):
            groups.setdefault(tuple(self.workspace.dataset.record(t).tolist()), []).append(t)
        return [members for members in groups.values() if len(members) > 1]

    def break_symmetry(self) -> int:
        """Records with identical content are interchangeable in both stages, so
        among them removals may be assumed non-increasing in record order (any
        solution can be permuted into that form). Returns the constraints added."""
        added = 0
        for members in self.identical_groups():
            for first, second in itertools.pairwise(members):
                items = [i for i in self.workspace.dataset.record(first).tolist() if i in self.items]
                self.model.add(sum(self.keep[(first, i)] for i in items) <= sum(self.keep[(second, i)] for i in items))
                added += 1
        return added


def _removals(keep_values: dict[tuple[int, int], int]) -> int:
    return sum(1 - value for value in keep_values.values())


def _bound(value: float) -> int | None:
    """CP-SAT's proven lower bound on the removals, None when it has none."""
    return round(value) if math.isfinite(value) else None


def solver_for(params: dict[str, Any], seed: int) -> Any:
    """A CP-SAT solver with the run's limits: ``time_limit`` wall seconds and,
    when given, ``deterministic_time`` (CP-SAT's deterministic time, which makes
    a limited run with one worker reproducible); one search worker unless
    ``solver_workers`` says otherwise."""
    from ortools.sat.python import cp_model

    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = float(params["time_limit"])
    if params.get("deterministic_time") is not None:
        solver.parameters.max_deterministic_time = float(params["deterministic_time"])
    solver.parameters.num_workers = int(params["solver_workers"])
    solver.parameters.linearization_level = 2
    solver.parameters.random_seed = seed & 0x7FFFFFFF
    return solver


def limits_text(params: dict[str, Any]) -> str:
    text = f"--time-limit {params['time_limit']} s"
    if params.get("deterministic_time") is not None:
        text += f" / --deterministic-time {params['deterministic_time']}"
    return text


class Exact(RuleHidingSanitizer):
    name = "exact"
    summary = "the optimum: fewest removed occurrences, then fewest lost rules, by OR-Tools CP-SAT (small data)"
    params = (
        *COMMON_PARAMS,
        Param("time_limit", float, 60.0, "wall-clock seconds for each of the two solver stages", min=0.1),
        Param(
            "deterministic_time",
            float,
            None,
            "CP-SAT deterministic time limit for each stage (with one worker the result is then reproducible)",
            min=0.0,
        ),
        Param("second_objective", bool, True, "after the fewest removals, minimise the lost non-sensitive rules"),
        Param("solver_workers", int, 1, "CP-SAT search workers (1 is deterministic)", min=1),
        Param(
            "hint",
            str,
            "mfi-relevance",
            "heuristic whose solution starts the search and stands if CP-SAT finds nothing better (none: no start)",
            choices=("none", *HEURISTICS),
        ),
    )

    def hide(self, workspace: Workspace, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        m = _Model(workspace)
        model, cp_model = m.model, m.cp_model
        thresholds = workspace.thresholds
        p, q = thresholds.min_confidence.numerator, thresholds.min_confidence.denominator
        for index, rule in enumerate(workspace.rules):
            sxy, _ = m.count(rule.xy)
            sx, _ = m.count(rule.x)
            # A cut that makes the LP bound useful: deletions never raise s(X),
            # so at least N = min(N_sup, N_conf) supporting records must lose an
            # item of XY (ALGORITHM-NOTES 2.2), whichever way the rule is hidden.
            model.add(sxy <= len(workspace.original_rows(rule.xy)) - workspace.to_hide(index))
            by_support, by_confidence = model.new_bool_var(""), model.new_bool_var("")
            model.add(sxy <= thresholds.min_support - 1).only_enforce_if(by_support)
            model.add(q * sxy - p * sx <= -1).only_enforce_if(by_confidence)
            model.add_bool_or([by_support, by_confidence])
            m.disjuncts.append((by_support, by_confidence))
        symmetry = m.break_symmetry()
        removed = m.removed()
        start = self._start(m, params, ctx)
        if start is not None:
            # the heuristic's solution is feasible: no optimum removes more
            model.add(removed <= _removals(start))
        model.minimize(removed)
        solver = solver_for(params, ctx.seed)
        status = solver.solve(model)
        found = status in (cp_model.OPTIMAL, cp_model.FEASIBLE)
        notes: dict[str, Any] = {
            "variables": len(m.keep),
            "symmetry_constraints": symmetry,
            "removal_status": solver.status_name(status),
            "removal_optimal": status == cp_model.OPTIMAL,
            "removal_bound": _bound(solver.best_objective_bound),
        }
        if start is not None:
            notes["hint_removals"] = _removals(start)
        if found and (start is None or round(solver.objective_value) <= _removals(start)):
            keep_values = {key: solver.value(var) for key, var in m.keep.items()}
            notes["removal_source"] = "solver"
        elif start is not None:
            # CP-SAT found nothing within its limits: the heuristic's solution stands
            keep_values = start
            notes["removal_source"] = f"hint ({params['hint']})"
        else:
            raise NoSolution(
                f"exact found no solution within {limits_text(params)} ({solver.status_name(status)}) "
                "and has no --hint; raise the limit, give a --hint or use a heuristic sanitizer."
            )
        notes["removals"] = _removals(keep_values)
        if params["second_objective"]:
            keep_values = self._fewest_lost(m, solver, status, keep_values, params, notes)
        for (t, item), value in sorted(keep_values.items()):
            if not value:
                workspace.remove(t, item)
        return notes

    @staticmethod
    def _start(m: _Model, params: dict[str, Any], ctx: Context) -> dict[tuple[int, int], int] | None:
        """The keep values of the hint heuristic's solution, hinted to CP-SAT
        (None without a hint)."""
        if params["hint"] == "none":
            return None
        workspace = m.workspace
        start = Workspace(workspace.dataset, workspace.rules, workspace.thresholds)
        HEURISTICS[params["hint"]]().hide(start, {}, ctx)
        if start.strong_rules():
            raise RuntimeError(f"the --hint heuristic {params['hint']!r} left a sensitive rule strong")
        return m.hint(start.removed)

    @staticmethod
    def _fewest_lost(
        m: _Model, solver: Any, status: int, keep_values: dict, params: dict[str, Any], notes: dict
    ) -> dict:
        cp_model, model, workspace = m.cp_model, m.model, m.workspace
        thresholds = workspace.thresholds
        p, q = thresholds.min_confidence.numerator, thresholds.min_confidence.denominator
        best = notes["removals"]
        removed = m.removed()
        model.add(removed == best) if status == cp_model.OPTIMAL else model.add(removed <= best)
        sensitive = {rule.rule for rule in workspace.rules}
        lost = []
        for mined in association_rules(workspace.dataset, thresholds):
            if mined.rule in sensitive:
                continue
            rule = IdRule.of(mined.rule, workspace.dataset)
            sxy, varies_xy = m.count(rule.xy)
            sx, varies_x = m.count(rule.x)
            if not (varies_xy or varies_x):
                continue
            gone = model.new_bool_var("")
            model.add(sxy >= thresholds.min_support).only_enforce_if(gone.negated())
            model.add(q * sxy - p * sx >= 0).only_enforce_if(gone.negated())
            lost.append(gone)
        notes["modelled_rules"] = len(lost)
        model.minimize(sum(lost))
        model.clear_hints()
        removed_items: dict[int, set[int]] = {}
        for (t, item), value in keep_values.items():
            if not value:
                removed_items.setdefault(t, set()).add(item)
        m.hint(removed_items)
        second = solver_for(params, solver.parameters.random_seed)
        status2 = second.solve(model)
        notes["lost_status"] = second.status_name(status2)
        if status2 not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            return keep_values
        notes["lost_optimal"] = status2 == cp_model.OPTIMAL
        notes["lost_rules"] = round(second.objective_value)
        return {key: second.value(var) for key, var in m.keep.items()}
