"""Where a build's time goes: `kg build` on a slice of the arXiv corpus under cProfile, one process.

    python bench/profile_build.py              # the first 1,000 abstracts
    python bench/profile_build.py --n 3000 --top 30

Prints the build's own phase timings, the profile's time grouped by where the code lives (spaCy and thinc,
kg's extraction rules, graph derivation, the store, ...), and the functions with the most time of their own.
"""

from __future__ import annotations

import argparse
import cProfile
import gzip
import pstats
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
CORPUS = ROOT.parent / "shared" / "data" / "corpus" / "arxiv-csai-2024-2026.jsonl.gz"

GROUPS = [  # first match wins: (label, substring of the code's file path)
    ("spaCy / thinc (tokenizer, tagger, parser, NER, matcher)", "spacy/"),  # Cython files have relative names
    ("spaCy / thinc (tokenizer, tagger, parser, NER, matcher)", "thinc/"),
    ("numpy / scipy (related papers, model maths)", "/numpy/"),
    ("numpy / scipy (related papers, model maths)", "/scipy/"),
    ("kg extraction rules and relation model", "/kg/extract/"),
    ("kg text cleaning and reading", "/kg/clean"),
    ("kg text cleaning and reading", "/kg/readers"),
    ("kg graph derivation (canonical nodes, evidence edges)", "/kg/graph"),
    ("kg graph derivation (canonical nodes, evidence edges)", "/kg/canon"),
    ("kg related papers", "/kg/related"),
    ("kg store (extraction log, graph.jsonl, snapshot)", "/kg/store/"),
    ("kg store (extraction log, graph.jsonl, snapshot)", "/kg/cache"),
    ("C built-ins (str, list, dict methods, orjson; called from all the above)", "~"),
]


def group_of(filename: str) -> str:
    for label, part in GROUPS:
        if part in filename:
            return label
    return "other Python (networkx, stdlib)"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=1000, help="abstracts from the start of the corpus")
    ap.add_argument("--top", type=int, default=25, help="functions to list")
    args = ap.parse_args()

    from kg.build import build
    from kg.extract.pipeline import Extractor
    from kg.store.embedded import EmbeddedStore

    with tempfile.TemporaryDirectory(prefix="kg-profile-") as tmp:
        src = Path(tmp) / "slice.jsonl"
        with gzip.open(CORPUS, "rb") as fin, open(src, "wb") as fout:
            for i, line in enumerate(fin):
                if i >= args.n:
                    break
                fout.write(line)
        t0 = time.perf_counter()
        extractor = Extractor()  # loaded outside the profile: a fixed cost, not per abstract
        load_s = time.perf_counter() - t0
        prof = cProfile.Profile()
        with EmbeddedStore(Path(tmp) / "store", writable=True) as store:
            prof.enable()
            summary = build([src], store, extractor=lambda: extractor)
            prof.disable()
    stats = pstats.Stats(prof)
    total = sum(v[2] for v in stats.stats.values())  # type: ignore[attr-defined]
    by_group: dict[str, float] = defaultdict(float)
    for (filename, _, _), (_, _, tottime, _, _) in stats.stats.items():  # type: ignore[attr-defined]
        by_group[group_of(filename)] += tottime
    print(f"{args.n:,} abstracts; model load {load_s:.1f} s (not profiled)")
    print(f"phases: extraction {summary.extract_seconds:.1f} s, derive {summary.derive_seconds:.1f} s, "
          f"save {summary.save_seconds:.1f} s (under the profiler, which slows Python code more than C code)")
    print(f"\n{'where the time goes (own time)':<76} {'s':>7} {'share':>6}")
    for label, t in sorted(by_group.items(), key=lambda kv: -kv[1]):
        print(f"{label:<76} {t:7.1f} {100 * t / total:5.1f}%")
    print(f"\ntop {args.top} functions by own time")
    stats.sort_stats("tottime").print_stats(args.top)


if __name__ == "__main__":
    main()
