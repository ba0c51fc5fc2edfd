"""Conformance table per TCK folder: `python -m tests.tck.report [--failures] [--kinds] [--update]`."""

from __future__ import annotations

import argparse
import sys
from collections import Counter, defaultdict

from .deviations import HERE, file_for, load_deviations
from .gherkin import Scenario, load_scenarios
from .runner import FEATURES, Outcome, run_scenario, skip_reason


def run_all() -> list[tuple[Scenario, Outcome]]:
    return [(sc, run_scenario(sc)) for sc in load_scenarios(FEATURES) if skip_reason(sc) is None]


def skipped() -> Counter[str]:
    """Scenarios outside the read-only suite, by reason."""
    return Counter(r for sc in load_scenarios(FEATURES) if (r := skip_reason(sc)) is not None)


def table(results: list[tuple[Scenario, Outcome]], deviations: dict) -> str:
    """Markdown table: read-only scenarios, passed, listed deviations and unlisted failures per folder."""
    per: dict[str, Counter[str]] = defaultdict(Counter)
    for sc, out in results:
        c = per[sc.folder]
        c["scenarios"] += 1
        if out.status == "pass":
            c["passed"] += 1
        elif sc.id in deviations:
            c["deviations"] += 1
        else:
            c["failing"] += 1
    lines = ["| TCK folder | scenarios | passed | deviations | other failures |", "|---|--:|--:|--:|--:|"]

    def row(name: str, c: Counter[str]) -> str:
        pct = 100 * c["passed"] / c["scenarios"] if c["scenarios"] else 0.0
        return (f"| {name} | {c['scenarios']} | {c['passed']} ({pct:.1f} %) | {c['deviations']} | "
                f"{c['failing']} |")

    for folder in sorted(per):
        lines.append(row(folder, per[folder]))
    outside: Counter[str] = Counter()
    for folder, c in per.items():
        if not folder.startswith("expressions/temporal"):
            outside.update(c)
    lines.append(row("**all but expressions/temporal**", outside))
    total: Counter[str] = Counter()
    for c in per.values():
        total.update(c)
    lines.append(row("**all**", total))
    return "\n".join(lines)


def update(results: list[tuple[Scenario, Outcome]], deviations: dict) -> None:
    """Rewrite the deviation files: drop entries that pass, add every unlisted failure (reason = detail)."""
    files: dict[str, list[str]] = defaultdict(list)
    headers: dict[str, list[str]] = {}
    for path in sorted(HERE.glob("deviations*.txt")):
        headers[path.name] = [ln for ln in path.read_text(encoding="utf-8").splitlines() if ln.startswith("#")]
    for sc, out in results:
        if out.status == "pass":
            continue
        dev = deviations.get(sc.id)
        reason = dev.reason if dev is not None and dev.kind == out.kind else out.detail.replace("|", "/")[:160]
        files[file_for(sc.id)].append(f"{sc.id} | {out.kind} | {reason}")
    for name in set(files) | set(headers):
        head = headers.get(name) or ["# Expected TCK deviations: `scenario-id | kind | reason`, one a line."]
        (HERE / name).write_text("\n".join(head + files.get(name, [])) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--failures", action="store_true", help="list unlisted failures and deviations that pass")
    ap.add_argument("--kinds", action="store_true", help="count failures by kind, outside and inside temporal")
    ap.add_argument("--update", action="store_true", help="rewrite the deviation lists from this run")
    args = ap.parse_args(argv)
    deviations = load_deviations()
    results = run_all()
    print(table(results, deviations))
    print("\nNot run: " + ", ".join(f"{n} {reason}" for reason, n in sorted(skipped().items())) + ".")
    if args.kinds:
        kinds = Counter((sc.folder.startswith("expressions/temporal"), out.kind)
                        for sc, out in results if out.status != "pass")
        for (temporal, kind), n in sorted(kinds.items()):
            print(f"{'temporal' if temporal else 'other':8} {kind:18} {n}")
    bad = 0
    for sc, out in results:
        dev = deviations.get(sc.id)
        if out.status != "pass" and (dev is None or dev.kind != out.kind):
            bad += 1
            if args.failures:
                print(f"FAIL {sc.id} [{out.kind}] {out.detail}")
        elif out.status == "pass" and dev is not None:
            bad += 1
            if args.failures:
                print(f"PASSES NOW (remove from {dev.source}) {sc.id}")
    if args.update:
        update(results, deviations)
    return 1 if bad and not args.update else 0


if __name__ == "__main__":
    sys.exit(main())
