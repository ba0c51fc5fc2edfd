"""The openCypher TCK as a test suite: every read-only scenario passes or is a listed deviation."""

from __future__ import annotations

import pytest

from .deviations import load_deviations
from .gherkin import load_scenarios
from .runner import FEATURES, KINDS, run_scenario, skip_reason

if not FEATURES.is_dir():  # pragma: no cover - the TCK lives in ../shared/tck next to the checkout
    pytest.skip(f"openCypher TCK not found at {FEATURES}", allow_module_level=True)

ALL = load_scenarios(FEATURES)
SCENARIOS = [sc for sc in ALL if skip_reason(sc) is None]
DEVIATIONS = load_deviations()


@pytest.mark.parametrize("sc", SCENARIOS, ids=lambda sc: sc.id)
def test_scenario(sc) -> None:
    out = run_scenario(sc)
    dev = DEVIATIONS.get(sc.id)
    if dev is None:
        assert out.status == "pass", f"{out.kind}: {out.detail}"
    elif out.status == "pass":
        pytest.fail(f"{sc.id} passes now: remove it from the deviation list ({dev.source})")
    else:
        assert out.kind == dev.kind, (
            f"listed ({dev.source}) as '{dev.kind}' but now fails as '{out.kind}': {out.detail}"
        )


def test_deviation_list_is_sound() -> None:
    ids = {sc.id for sc in SCENARIOS}
    for dev in DEVIATIONS.values():
        assert dev.id in ids, f"{dev.source}: {dev.id} is not a read-only TCK scenario"
        assert dev.kind in KINDS, f"{dev.source}: unknown kind {dev.kind!r} (one of {', '.join(KINDS)})"
