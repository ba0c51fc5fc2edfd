"""The checked-in list of expected TCK deviations: `deviations*.txt`, one `id | kind | reason` a line."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Deviation:
    id: str
    kind: str  # the runner's failure kind the scenario must still show (see runner.KINDS)
    reason: str
    source: str  # file:line, for messages


def load_deviations(folder: Path = HERE) -> dict[str, Deviation]:
    """Every listed deviation by scenario id; a malformed line or a duplicate id raises ValueError."""
    out: dict[str, Deviation] = {}
    for path in sorted(folder.glob("deviations*.txt")):
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            parts = [p.strip() for p in line.split("|", 2)]
            where = f"{path.name}:{n}"
            if len(parts) != 3 or not all(parts):
                raise ValueError(f"{where}: expected `scenario-id | kind | reason`, got {line!r}")
            if parts[0] in out:
                raise ValueError(f"{where}: {parts[0]} is listed twice (also {out[parts[0]].source})")
            out[parts[0]] = Deviation(parts[0], parts[1], parts[2], where)
    return out


def file_for(scenario_id: str) -> str:
    """Which list a new entry goes to: temporal scenarios have their own file."""
    return "deviations-temporal.txt" if scenario_id.startswith("expressions/temporal/") else "deviations.txt"
