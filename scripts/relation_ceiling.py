"""How far the relation steps get when the entities are right: kg-gold dev, gold mentions in, relations scored.

The shipped extractor's relation steps (rule patterns, the within-sentence classifier, the cross-sentence one)
are given the gold entities of each abstract (every occurrence of each text and alias, the gold types and
``proposed`` flags) instead of the extractor's own, and the relations are scored as ``kg eval`` scores them.
The distance from this figure to the end-to-end one is what entity errors cost; the distance from this figure
to the annotators' 72-83 is the relation classifiers' own. Usage::

    python scripts/relation_ceiling.py [--model DIR] [--no-docrel] [--no-rules]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from train_gold import GOLD, project  # noqa: E402


def gold_mention_rows(ext: Any, rows: list[dict]) -> list[dict]:
    """Prediction rows (as kg.evaluate_gold.prediction_rows gives them) from ``ext``'s relation steps over each
    row's gold mentions."""
    from kg.clean import clean_text
    from kg.extract.pipeline import sentence_of
    from kg.extract.rules import Candidate

    out = []
    docs = ext.nlp.pipe([clean_text(r["text"]).text for r in rows], batch_size=32)
    for row, doc in zip(rows, docs, strict=True):
        spans = project(doc.text, row["entities"])
        chosen = [Candidate(s, e, ty, 0, None) for s, e, ty, _ in spans]
        sents = [(s.start_char, s.end_char) for s in doc.sents]
        sent_of = sentence_of(chosen, sents)
        proposed = {j for j, (_, _, _, i) in enumerate(spans) if row["entities"][i].get("proposed")}
        rels = ext._relations(doc, chosen, sent_of, proposed, sents)
        ents = [{"text": doc.text[c.start : c.end], "type": c.type, "proposed": j in proposed}
                for j, c in enumerate(chosen)]
        out.append({"id": row["id"], "entities": ents,
                    "relations": [{"head": h, "tail": t, "type": ty} for h, t, ty in rels
                                  if ents[h]["text"] != ents[t]["text"]]})
    return out


def main() -> None:
    from kg.evaluate_gold import load_gold, score_rows
    from kg.extract.pipeline import MODEL_DIR, Extractor, load_nlp

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default=str(MODEL_DIR), help="extractor package (default: the shipped one)")
    ap.add_argument("--no-docrel", action="store_true", help="without the cross-sentence classifier")
    ap.add_argument("--no-rules", action="store_true", help="without the rule layer's relation patterns")
    args = ap.parse_args()
    ext = Extractor(load_nlp(args.model))
    if args.no_docrel:
        ext.docrel = None
    if args.no_rules:
        ext.rule_relations = False
    gold = load_gold(GOLD / "dev.jsonl")
    r = score_rows(gold, gold_mention_rows(ext, gold))["relations"]
    print(f"kg-gold dev, gold entities: relations F1 {r['f1']} (P {r['p']} / R {r['r']}), "
          f"{r['pred']} predicted, {r['gold']} gold")


if __name__ == "__main__":
    main()
