"""Extraction speed on the seed abstracts, one process: the default extractor beside en_core_web_sm (full).

    OMP_NUM_THREADS=1 .venv/bin/python bench/extract_speed.py [--rounds 3] [--repeat 2] [PATH ...]

Every pipeline parses the same texts in the same run; rounds are interleaved and the best round of each is
reported (the machine is shared, so the best round is the least disturbed one). Words are whitespace-separated.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("paths", nargs="*", default=[str(ROOT / "seeds")])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=2, help="Parse the texts this many times per round.")
    a = ap.parse_args()

    import spacy

    from kg.clean import clean_text
    from kg.extract.pipeline import DEFAULT_MODEL, RULES_MODEL, Extractor, load_nlp
    from kg.readers import PaperRecord, read_papers

    texts = [r.abstract for r in read_papers(a.paths) if isinstance(r, PaperRecord)] * a.repeat
    words = sum(len(t.split()) for t in texts)
    default = Extractor()
    rules = Extractor(load_nlp(RULES_MODEL))
    sm_full = spacy.load(RULES_MODEL)
    runs = {
        f"default extractor ({'trained+rules' if default.trained else 'rules'}, all of extract)":
            lambda: list(default.extract_many(texts)),
        "  its spaCy pipeline only (" + ",".join(default.nlp.pipe_names) + ")":
            lambda: list(default.nlp.pipe([clean_text(t).text for t in texts])),
        "rule-only extractor": lambda: list(rules.extract_many(texts)),
        "en_core_web_sm, full (" + ",".join(sm_full.pipe_names) + ")": lambda: list(sm_full.pipe(texts)),
    }
    default.extract(texts[0]), rules.extract(texts[0]), sm_full(texts[0])  # warm up
    best = {k: float("inf") for k in runs}
    for _ in range(a.rounds):
        for name, run in runs.items():
            t0 = time.perf_counter()
            run()
            best[name] = min(best[name], time.perf_counter() - t0)
    print(f"{len(texts)} abstracts, {words} words, best of {a.rounds} rounds; default model: {DEFAULT_MODEL}")
    for name, secs in best.items():
        print(f"{name:<92} {words / secs:>8.0f} words/s")


if __name__ == "__main__":
    main()
