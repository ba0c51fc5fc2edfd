"""Minimal Gherkin reader for the openCypher TCK: features, backgrounds, outlines, doc strings, tables."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

_STEP = re.compile(r"^(Given|When|Then|And|But)\s+(.*)$")
_NUMBER = re.compile(r"^\[(\d+)\]")


@dataclass
class Step:
    keyword: str  # Given/When/Then; And/But take the keyword of the step before
    text: str
    doc: str | None = None  # the """ doc string """ after the step
    table: list[list[str]] | None = None  # rows of cells, header row first


@dataclass
class Scenario:
    """One runnable scenario; an outline yields one per Examples row (`example` counts from 1)."""

    feature: str  # path under features/ without `.feature`, e.g. clauses/match/Match5
    name: str
    line: int
    steps: list[Step] = field(default_factory=list)
    tags: frozenset[str] = frozenset()
    example: int = 0

    @property
    def number(self) -> str:
        m = _NUMBER.match(self.name)
        return m.group(1) if m else self.name

    @property
    def id(self) -> str:
        """Stable id used by the deviation list: `clauses/match/Match5[11]`, outline rows `...[6]#2`."""
        base = f"{self.feature}[{self.number}]"
        return f"{base}#{self.example}" if self.example else base

    @property
    def folder(self) -> str:
        return self.feature.rsplit("/", 1)[0]


def _cells(line: str) -> list[str]:
    inner = line.strip()[1:-1]
    # A cell may hold an escaped bar `\|`; split only on bare ones.
    parts = re.split(r"(?<!\\)\|", inner)
    return [p.strip().replace("\\|", "|").replace("\\\\", "\\") for p in parts]


def _substitute(text: str, values: dict[str, str]) -> str:
    return re.sub(r"<([^<>\s]+)>", lambda m: values.get(m.group(1), m.group(0)), text)


def parse_feature(path: Path, root: Path) -> list[Scenario]:
    """Every scenario of one .feature file, outlines expanded, background steps prepended."""
    rel = path.relative_to(root).with_suffix("").as_posix()
    lines = path.read_text(encoding="utf-8").splitlines()
    background: list[Step] = []
    out: list[Scenario] = []
    current: Scenario | None = None
    outline = False
    examples: list[list[str]] | None = None
    tags: set[str] = set()
    target: list[Step] | None = None
    last_kw = "Given"

    def finish() -> None:
        nonlocal current, examples
        if current is None:
            return
        if not outline:
            out.append(current)
        else:
            header, *rows = examples or [[]]
            for k, row in enumerate(rows, 1):
                values = dict(zip(header, row, strict=False))
                steps = [
                    Step(s.keyword, _substitute(s.text, values),
                         None if s.doc is None else _substitute(s.doc, values),
                         None if s.table is None else [[_substitute(c, values) for c in r] for r in s.table])
                    for s in current.steps
                ]
                out.append(Scenario(rel, current.name, current.line, steps, current.tags, k))
        current, examples = None, None

    i = 0
    while i < len(lines):
        raw = lines[i]
        line = raw.strip()
        i += 1
        if not line or line.startswith("#"):
            continue
        if line.startswith("@"):
            tags.update(line.split())
            continue
        if line.startswith("Feature:"):
            continue
        if line.startswith("Background:"):
            target = background
            continue
        if line.startswith(("Scenario:", "Scenario Outline:")):
            finish()
            outline = line.startswith("Scenario Outline:")
            name = line.split(":", 1)[1].strip()
            current = Scenario(rel, name, i, list(background), frozenset(tags))
            tags = set()
            last_kw = background[-1].keyword if background else "Given"
            target = current.steps
            continue
        if line.startswith("Examples:"):
            examples = []
            target = None
            continue
        if line.startswith("|"):
            if examples is not None and target is None:
                examples.append(_cells(line))
            elif target:
                step = target[-1]
                step.table = (step.table or []) + [_cells(line)]
            continue
        if line.startswith('"""'):
            indent = len(raw) - len(raw.lstrip())
            body: list[str] = []
            while i < len(lines) and not lines[i].strip().startswith('"""'):
                body.append(lines[i][indent:] if lines[i][:indent].isspace() else lines[i].lstrip())
                i += 1
            i += 1
            if target:
                target[-1].doc = "\n".join(body)
            continue
        m = _STEP.match(line)
        if m and target is not None:
            kw = m.group(1)
            if kw in ("And", "But"):
                kw = last_kw
            last_kw = kw
            target.append(Step(kw, m.group(2)))
            continue
        raise ValueError(f"{path}:{i}: cannot read line {line!r}")
    finish()
    return out


def load_scenarios(root: Path) -> list[Scenario]:
    """All scenarios under `root` (the TCK's features/ folder), in path order."""
    scenarios: list[Scenario] = []
    for path in sorted(root.rglob("*.feature")):
        scenarios.extend(parse_feature(path, root))
    return scenarios
