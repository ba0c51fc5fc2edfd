"""How far the relation steps get when the entities are right: kg-gold dev, gold mentions in, relations scored.

The shipped extractor's relation steps (rule patterns, the within-sentence classifier, the cross-sentence one)
are given the gold entities of each abstract (every occurrence of each text and alias, the gold types and
``proposed`` flags) instead of the extractor's own, and the relations are scored as ``kg eval`` scores them.
The distance from this figure to the end-to-end one is what entity errors cost; the distance from this figure
to the annotators' 72-83 is the relation classifiers' own.

``--own`` gives the relation steps the extractor's own mentions instead (its spans, types and ``proposed``
flags, as at run time: the end-to-end figure), and ``--fix`` corrects one or more kinds of entity error in them
from the gold, to show what each costs: ``spurious`` drops the mentions that name no gold entity, ``missed``
adds the gold occurrences of the entities the extractor did not find (where they overlap none of its mentions),
``types`` and ``proposed`` give each mention that names a gold entity that entity's type and flag (``proposed``
unflags the others). Usage::

    python scripts/relation_ceiling.py [--model DIR] [--no-docrel] [--no-rules]
    python scripts/relation_ceiling.py --own [--fix spurious,missed,types,proposed]
"""

from __future__ import annotations

import argparse
from typing import Any

from kg_train.train_gold import GOLD, forms, project


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
        out.append(_row(row["id"], doc.text, chosen, proposed, rels))
    return out


FIXES = ("spurious", "missed", "types", "proposed")


def corrected(text: str, row: dict, chosen: list[Any], proposed: set[int],
              fixes: set[str]) -> tuple[list[Any], set[int]]:
    """The extractor's mentions ``chosen`` (sorted by start) and the indexes of its proposed ones, with the kinds
    of entity error named in ``fixes`` (FIXES) corrected from the gold ``row``."""
    from kg.evaluate_gold import gold_key
    from kg.extract.rules import Candidate

    ents = row["entities"]
    named: dict[str, int] = {}
    for i, e in enumerate(ents):
        for f in forms(e):
            named.setdefault(gold_key(f), i)
    items = []
    for j, c in enumerate(chosen):
        g = named.get(gold_key(text[c.start : c.end]))
        if g is None and "spurious" in fixes:
            continue
        ty = ents[g]["type"] if g is not None and "types" in fixes else c.type
        prop = (g is not None and bool(ents[g].get("proposed"))) if "proposed" in fixes else j in proposed
        items.append((Candidate(c.start, c.end, ty, c.priority, c.short_form_of), prop, g))
    if "missed" in fixes:
        found = {g for _, _, g in items}
        for s, e, ty, g in project(text, ents):
            if g not in found and not any(s < c.end and c.start < e for c, _, _ in items):
                items.append((Candidate(s, e, ty, 0, None), bool(ents[g].get("proposed")), g))
        items.sort(key=lambda x: x[0].start)
    return [c for c, _, _ in items], {j for j, (_, p, _) in enumerate(items) if p}


def own_mention_rows(ext: Any, rows: list[dict], fixes: set[str] = frozenset()) -> list[dict]:
    """Prediction rows from ``ext``'s relation steps over its own mentions of each row (``corrected`` by
    ``fixes``); entities are the mentions the relation steps see."""
    from kg.extract.pipeline import sentence_of

    out: list[dict] = []
    steps = ext._relations

    def relations(doc: Any, chosen: list[Any], sent_of: list[int], proposed: set[int],
                  sents: list[tuple[int, int]]) -> list[tuple[int, int, str]]:
        row = rows[len(out)]
        chosen, proposed = corrected(doc.text, row, chosen, proposed, fixes)
        rels = steps(doc, chosen, sentence_of(chosen, sents), proposed, sents)
        out.append(_row(row["id"], doc.text, chosen, proposed, rels))
        return []

    ext._relations = relations
    try:
        for i, _ in enumerate(ext.extract_many([r["text"] for r in rows], [r.get("title") for r in rows])):
            if len(out) == i:  # no mention, no relation step
                out.append({"id": rows[i]["id"], "entities": [], "relations": []})
    finally:
        del ext._relations
    return out


def _row(id_: str, text: str, chosen: list[Any], proposed: set[int], rels: list[tuple[int, int, str]]) -> dict:
    ents = [{"text": text[c.start : c.end], "type": c.type, "proposed": j in proposed} for j, c in enumerate(chosen)]
    return {"id": id_, "entities": ents, "relations": [{"head": h, "tail": t, "type": ty} for h, t, ty in rels
                                                       if ents[h]["text"] != ents[t]["text"]]}


def main() -> None:
    from kg.evaluate_gold import load_gold, score_rows
    from kg.extract.pipeline import MODEL_DIR, Extractor, ExtractorConfig, load_nlp

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default=str(MODEL_DIR), help="extractor package (default: the shipped one)")
    ap.add_argument("--no-docrel", action="store_true", help="without the cross-sentence classifier")
    ap.add_argument("--no-rules", action="store_true", help="without the rule layer's relation patterns")
    ap.add_argument("--own", action="store_true", help="the extractor's own mentions instead of the gold ones")
    ap.add_argument("--fix", default="", help=f"with --own: kinds of entity error to correct, of {','.join(FIXES)}")
    args = ap.parse_args()
    fixes = {f for f in args.fix.split(",") if f}
    if fixes - set(FIXES) or (fixes and not args.own):
        ap.error(f"--fix takes {', '.join(FIXES)} (comma-separated), with --own")
    ext = Extractor(load_nlp(args.model), config=ExtractorConfig(rule_relations=not args.no_rules))
    if args.no_docrel:
        ext.docrel = None
    gold = load_gold(GOLD / "dev.jsonl")
    if args.own:
        what = "own entities" + (f", {', '.join(sorted(fixes))} fixed" if fixes else "")
        r = score_rows(gold, own_mention_rows(ext, gold, fixes))["relations"]
    else:
        what = "gold entities"
        r = score_rows(gold, gold_mention_rows(ext, gold))["relations"]
    print(f"kg-gold dev, {what}: relations F1 {r['f1']} (P {r['p']} / R {r['r']}), "
          f"{r['pred']} predicted, {r['gold']} gold")


if __name__ == "__main__":
    main()
