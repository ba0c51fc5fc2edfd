"""Switch each rule-layer part of the extractor off in turn and score it on kg-gold dev (the README's ablation).

    OMP_NUM_THREADS=1 .venv/bin/python scripts/ablate_rules.py [MODEL_DIR] [--parts a,b] [--off a,b]

The dev abstracts are parsed once; each line re-runs only the rule layer on the parsed documents. Parts are
``ExtractorConfig`` fields (``fallback``, ``refine``, ``pairs``, ...; ``propmodel`` switches the learned proposed
classifier off); ``--off`` switches parts off for every line.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
GOLD = ROOT.parent / "shared" / "data" / "eval" / "kg-gold" / "dev.jsonl"
PARTS = ["use_names", "consistent", "fallback", "rule_relations", "refine", "known_names", "cuts", "pairs",
         "generic_filter", "formula_filter", "drop_fields", "gaz_types", "gaz_drop", "propmodel", "skip_short"]


def main() -> None:
    from kg.clean import clean_text
    from kg.evaluate_gold import TYPES, load_gold, prediction_rows, score_rows
    from kg.extract.pipeline import MODEL_DIR, Extractor, ExtractorConfig, load_nlp

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model", nargs="?", default=str(MODEL_DIR))
    ap.add_argument("--parts", default=",".join(PARTS))
    ap.add_argument("--off", default="")
    a = ap.parse_args()
    gold = load_gold(GOLD)
    ex = Extractor(load_nlp(a.model))
    cleaned = [clean_text(g["text"]) for g in gold]
    t0 = time.time()
    docs = list(ex.nlp.pipe([c.text for c in cleaned], batch_size=32))
    print(f"parsed {len(docs)} abstracts in {time.time() - t0:.0f} s")

    def run(tag: str) -> None:
        preds = [ex._from_doc(d, g["text"], c) for d, g, c in zip(docs, gold, cleaned, strict=True)]
        s = score_rows(gold, prediction_rows(gold, preds))
        per = " ".join(f"{t[:4]} {s[t]['p']:.0f}/{s[t]['r']:.0f}" for t in TYPES)
        print(f"{tag:24s} typed {s['typed']['f1']:5.1f} ({s['typed']['p']:.1f}/{s['typed']['r']:.1f}) "
              f"rel {s['relations']['f1']:.1f} prop {s['proposed']['p']:.0f}/{s['proposed']['r']:.0f} | {per}")

    propmodel = ex.propmodel

    def configure(off: list[str]) -> None:
        """The base configuration with the parts ``off`` switched off (``propmodel``: the learned classifier)."""
        ex.config = replace(ExtractorConfig(), **{p: False for p in off if p != "propmodel"})
        ex.propmodel = None if "propmodel" in off else propmodel

    off = [p for p in a.off.split(",") if p]
    configure(off)
    run("base" + (f" (off: {','.join(off)})" if off else ""))
    for p in [p for p in a.parts.split(",") if p and p not in off]:
        configure([*off, p])
        run(f"-{p}")
    configure([*off, "rule_layer"])
    run("rule layer off")


if __name__ == "__main__":
    main()
