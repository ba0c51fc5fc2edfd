"""Learn kg/data/short_forms.tsv: the short forms kg-gold's annotators recorded as an entity's aliases.

Each gold entity lists its other forms in the abstract; a short form among them ("CNNs" for "convolutional neural
networks") is a definition. A row is kept when at least ``--min`` abstracts give it, the short form's letters spell
the long form (the Schwartz-Hearst match kg's own detector uses; when they spell only its end, "VLMs" of "large
vision-language models", that end is the long form) and the two are different keys.

    python scripts/learn_short_forms.py [--gold ../shared/data/eval/kg-gold] [--files train.jsonl train-2.jsonl]
"""

from __future__ import annotations

import argparse
import json
from collections import Counter, defaultdict
from pathlib import Path

from kg.canon import canonical_key, looks_like_acronym
from kg.extract.abbrev import _best_long_form
from kg.resolve import short_key

OUT = Path(__file__).resolve().parent.parent / "kg" / "data" / "short_forms.tsv"


def learn(paths: list[Path], min_count: int = 2) -> list[tuple[str, str, int]]:
    counts: Counter[tuple[tuple[str, str], str]] = Counter()
    written: dict[tuple[tuple[str, str], str], Counter[tuple[str, str]]] = defaultdict(Counter)
    for path in paths:
        with path.open(encoding="utf-8") as fh:
            for line in fh:
                doc = json.loads(line)
                seen = set()
                for e in doc["entities"]:
                    long = e["text"]
                    for alias in e.get("aliases", []):
                        if not looks_like_acronym(alias) or looks_like_acronym(long):
                            continue
                        idx = _best_long_form(alias, long)
                        if idx is None:
                            continue
                        lf = long[idx:]
                        sk, lk = short_key(alias), canonical_key(lf)
                        if not sk[0] or not lk or sk[0] == lk or len(lk.split()) < 2:
                            continue
                        if (sk, lk) not in seen:  # one vote an abstract
                            seen.add((sk, lk))
                            counts[sk, lk] += 1
                        written[sk, lk][alias.rstrip("s") if alias.endswith("s") and alias[-2:-1].isupper()
                                        else alias, lf] += 1
    rows = []
    for (sk, lk), n in counts.items():
        if n >= min_count:
            (short, lf), _ = min(written[sk, lk].items(), key=lambda kv: (-kv[1], kv[0]))
            rows.append((short, lf, n))
    return sorted(rows, key=lambda r: (r[0].casefold(), r[0], -r[2], r[1]))


def write(rows: list[tuple[str, str, int]], out: Path, sources: list[str]) -> None:
    with out.open("w", encoding="utf-8") as fh:
        fh.write(f"# short form, long form, kg-gold abstracts that define it so ({', '.join(sources)}); "
                 "written by scripts/learn_short_forms.py\n")
        for short, lf, n in rows:
            fh.write(f"{short}\t{lf}\t{n}\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gold", default=str(Path(__file__).resolve().parents[2] / "shared/data/eval/kg-gold"))
    ap.add_argument("--files", nargs="+", default=["train.jsonl", "train-2.jsonl"])
    ap.add_argument("--min", type=int, default=2)
    ap.add_argument("--out", default=str(OUT))
    a = ap.parse_args()
    rows = learn([Path(a.gold) / f for f in a.files], a.min)
    write(rows, Path(a.out), a.files)
    print(f"{len(rows)} short forms -> {a.out}")


if __name__ == "__main__":
    main()
