"""Where the driver of `privtool verify` on a disassociated release spends its
time and memory, step by step (docs/results/scale.md, "Session 10: verify at
5M"): :mod:`disassociate_steps`'s wrapper with the verify stage's steps.

    python benchmarks/verify_steps.py verify safe.json --trail safe-trail.json -q --json \\
        --executor dask --workers 2

One line on stderr per step as it returns (wall and CPU seconds of this
process only: the Dask workers' share of a verifier is not counted), the last
with the command's user and system CPU, ``ru_maxrss`` and the load average.
"""

from __future__ import annotations

import sys

from disassociate_steps import Steps, main

VERIFY = "privtool.verifiers"
STEPS: Steps = (
    ("privtool.release", "read_release", ("privtool.cli.verify",)),
    ("privtool.trail", "read_trail", ("privtool.cli.verify",)),
    (f"{VERIFY}.structure", "check_structure", ("privtool.assess",)),
    (f"{VERIFY}.joint_tree", "joint_parents", (f"{VERIFY}.reconstruction_bounds", f"{VERIFY}.structure")),
    (f"{VERIFY}.reconstruction_bounds", "ClusterViews.__init__", ()),
    (f"{VERIFY}.reconstruction_bounds", "longest_record", ()),
    (f"{VERIFY}.reconstruction_bounds", "_weak_parts", ()),
    (f"{VERIFY}.reconstruction_bounds", "_Search.run", ()),
    (f"{VERIFY}.disassociated", "DisassociationGuarantee.verify", ()),
    (f"{VERIFY}.disassociated", "KmAnonymity.verify", ()),
    (f"{VERIFY}.disassociated", "CoverFreedom.verify", ()),
    ("privtool.assess", "assess", ("privtool.cli.verify",)),
)

if __name__ == "__main__":  # Dask's forked workers import this module: only the command runs it
    sys.exit(main(STEPS))
