"""The example plugin's components pass privtool's conformance kit: one test per
component and check (``pytest -q`` in this folder, with the package installed)."""

from privtool_example import Balanced, GlobalGeneralisation, GlobalSuppression, KeptItems

from privtool.testing import parametrize_with_checks

FANOUT = {"hierarchy": "4", "hierarchy_format": "fanout"}


@parametrize_with_checks([Balanced(), GlobalSuppression(), (GlobalGeneralisation(), FANOUT), KeptItems()])
def test_conformance(component, check):
    check(component)
