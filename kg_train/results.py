"""Training the reported-results extractor (kg.extract.results) on kg-gold results train, selected on its dev.

    python -m kg_train.results [--out kg/extract/model/results.json] [--cache DIR]

Parses every abstract with the shipped extractor (its entity mentions are slot candidates), labels each candidate
number with the gold result it is (matched on the number, then on the sentence naming the gold's metric or
dataset), fits the value classifier and one slot classifier per field, then picks the value threshold and the slot
thresholds on dev by the reference scorer's full-tuple F1 (value F1 as the tie-break), the dataset slot's by its own
level, value + dataset. Needs scikit-learn.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import pickle
import random
import sys
from bisect import bisect_right
from collections import Counter
from pathlib import Path
from typing import Any

from kg.canon import canonical_key
from kg.clean import clean_text
from kg.extract.results import (
    SLOTS,
    ResultModel,
    candidate_features,
    candidates_for,
    first_proposed,
    number_of,
    phrases,
    unstated_features,
    value_features,
    value_spans,
)

GOLD = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "eval" / "kg-gold-results"
FOLDS = 5


def scorer(gold_dir: Path) -> Any:
    spec = importlib.util.spec_from_file_location("score_results", gold_dir / "score_results.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


class _Capture:
    """Stands in for the result model while parsing: keeps what the extractor would hand it."""

    def __init__(self) -> None:
        self.got: list[tuple[Any, list[tuple[int, int, str, bool]]]] = []

    def find(self, doc: Any, mentions: list[tuple[int, int, str, bool]]) -> list[Any]:
        self.got.append((doc, mentions))
        return []


def parse(rows: list[dict[str, Any]], cache: Path | None, name: str) -> list[tuple[Any, list[Any]]]:
    """(doc, mentions) per row, from the shipped extractor (cached as a pickle under ``cache``)."""
    if cache is not None and (cache / f"{name}.pkl").exists():
        return pickle.loads((cache / f"{name}.pkl").read_bytes())  # noqa: S301 - our own cache
    from kg.extract.pipeline import Extractor

    ex = Extractor()
    cap = _Capture()
    ex.resmodel = cap  # type: ignore[assignment]
    for _ in ex.extract_many(r["text"] for r in rows):
        pass
    out = cap.got
    if cache is not None:
        cache.mkdir(parents=True, exist_ok=True)
        (cache / f"{name}.pkl").write_bytes(pickle.dumps(out))
    return out


def _sent_of(doc: Any) -> Any:
    starts = [s.start_char for s in doc.sents]
    return lambda c: max(0, bisect_right(starts, c) - 1)


def match(doc: Any, text: str, gold: list[dict[str, Any]]) -> dict[tuple[int, int], dict[str, Any]]:
    """Gold results on candidate values (cleaned offsets): same number, preferring the occurrence whose sentence
    holds the gold's metric, dataset or system text, then the first free one."""
    spans = value_spans(doc.text)
    sents = list(doc.sents)
    sent_of = _sent_of(doc)
    used: dict[tuple[int, int], dict[str, Any]] = {}
    for g in gold:
        n = number_of(g["value"])
        opts = [sp for sp in spans if sp not in used and number_of(doc.text[sp[0]:sp[1]]) == n]
        if not opts:
            continue

        def score(sp: tuple[int, int], g: dict[str, Any] = g) -> tuple[int, int]:
            st = sents[sent_of(sp[0])].text.casefold()
            hits = sum(1 for f in SLOTS if g[f] and clean_text(g[f]).text.casefold() in st)
            return (-hits, sp[0])

        used[min(opts, key=score)] = g
    return used


def known_names(rows: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    out: dict[str, Counter[str]] = {f: Counter() for f in SLOTS}
    for r in rows:
        for g in r["results"]:
            for f in SLOTS:
                if g[f]:
                    out[f][canonical_key(clean_text(g[f]).text)] += 1
    return {f: dict(c) for f, c in out.items()}


Group = tuple[list[list[str]], int]  # every option's features ("unstated" last) and the gold option's index


def examples(rows: list[dict[str, Any]], parsed: list[Any], known_of: Any
             ) -> tuple[list[list[str]], list[str], dict[str, tuple[list[list[str]], list[str]]],
                        dict[str, list[Group]]]:
    """Value examples (features, "score" | "gain" | "NONE"), per slot (features, "1" | "0") for the phrases of
    each matched gold result, and per slot the listwise groups (the phrases and "unstated", which one is gold);
    ``known_of(i)`` gives the gazetteer row ``i`` may see."""
    vx: list[list[str]] = []
    vy: list[str] = []
    sx: dict[str, tuple[list[list[str]], list[str]]] = {f: ([], []) for f in SLOTS}
    groups: dict[str, list[Group]] = {f: [] for f in SLOTS}
    for i, (r, (doc, mentions)) in enumerate(zip(rows, parsed, strict=True)):
        gold = match(doc, r["text"], r["results"])
        sent_of = _sent_of(doc)
        spans = value_spans(doc.text)
        per: Counter[int] = Counter(sent_of(s) for s, _ in spans)
        cands = None
        for s, e in spans:
            g = gold.get((s, e))
            vx.append(value_features(doc, s, e, per[sent_of(s)]))
            vy.append(g["kind"] if g else "NONE")
            if g is None:
                continue
            if cands is None:
                cands = phrases(doc, mentions)
                first = first_proposed(cands)
            keys = {f: canonical_key(clean_text(g[f]).text) if g[f] else None for f in SLOTS}
            known = known_of(i)
            near = candidates_for(cands, s, e, sent_of)
            crows = candidate_features(doc, s, e, g["kind"], near, known, sent_of, first)
            for p, feats, _ in crows:
                for f in SLOTS:
                    if keys[f] is not None and not any(q.key == keys[f] for q in near):
                        continue  # the gold text is no candidate: nothing to learn from this one
                    sx[f][0].append(feats)
                    sx[f][1].append("1" if p.key == keys[f] else "0")
            unstated = unstated_features(doc, s, e, g["kind"], crows, sent_of)
            for f in SLOTS:
                opts = [feats for _, feats, _ in crows] + [unstated]
                if keys[f] is None:
                    groups[f].append((opts, len(crows)))
                else:
                    gi = next((j for j, (p, _, _) in enumerate(crows) if p.key == keys[f]), None)
                    if gi is not None:
                        groups[f].append((opts, gi))
    return vx, vy, sx, groups


def fit_listwise(groups: list[Group], *, l2: float, min_count: int) -> dict[str, Any]:
    """A conditional logit: one weight vector scores every option of a group; maximise the gold option's
    log-probability (softmax within each group) with an L2 penalty (L-BFGS); needs scipy."""
    import numpy as np
    from scipy.optimize import minimize
    from scipy.sparse import csr_matrix

    counts = Counter(x for opts, _ in groups for o in opts for x in set(o))
    names = sorted(x for x, n in counts.items() if n >= min_count)
    index = {x: i for i, x in enumerate(names)}
    indptr, cols, starts, gold = [0], [], [], []
    for opts, gi in groups:
        starts.append(len(indptr) - 1)
        gold.append(len(indptr) - 1 + gi)
        for o in opts:
            cols += sorted({index[x] for x in o if x in index})
            indptr.append(len(cols))
    X = csr_matrix((np.ones(len(cols)), cols, indptr), shape=(len(indptr) - 1, len(names)))
    st = np.array(starts)
    gold_rows = np.array(gold)
    sizes = np.diff(np.append(st, X.shape[0]))
    owner = np.repeat(np.arange(len(st)), sizes)

    def loss(w: Any) -> tuple[float, Any]:
        z = X @ w
        m = np.maximum.reduceat(z, st)
        ez = np.exp(z - m[owner])
        se = np.add.reduceat(ez, st)
        lse = m + np.log(se)
        nll = float(np.sum(lse - z[gold_rows])) + 0.5 * l2 * float(w @ w)
        p = ez / se[owner]
        p[gold_rows] -= 1.0
        return nll, X.T @ p + l2 * w

    res = minimize(loss, np.zeros(len(names)), jac=True, method="L-BFGS-B", options={"maxiter": 500})
    w = res.x
    return {"listwise": True, "null_bias": 0.0,
            "weights": {n: round(float(v), 4) for n, v in zip(names, w, strict=True) if abs(v) >= 0.005}}


def predict(model: ResultModel, rows: list[dict[str, Any]], parsed: list[Any]) -> dict[str, dict[str, Any]]:
    out = {}
    for r, (doc, mentions) in zip(rows, parsed, strict=True):
        clean = clean_text(r["text"])
        assert clean.text == doc.text
        res = []
        for s, e, kind, slots in model.find(doc, mentions):
            spans = {"value": (s, e), **slots}
            texts = {}
            for f, sp in spans.items():
                a, b = clean.span_to_original(*sp) if sp is not None else (0, 0)
                texts[f] = r["text"][a:b] if sp is not None else None
            res.append({**texts, "kind": kind})
        out[r["id"]] = {"id": r["id"], "results": res}
    return out


def main(argv: list[str] | None = None) -> None:
    from kg_train.fit import fit_softmax, save_model

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gold", type=Path, default=GOLD)
    ap.add_argument("--out", type=Path, default=Path("kg/extract/model/results.json"))
    ap.add_argument("--cache", type=Path, default=None, help="keep the parsed abstracts here between runs")
    ap.add_argument("--C", type=float, default=0.3)
    ap.add_argument("--slot-C", type=float, default=0.3, help="binary slot models' C")
    ap.add_argument("--slots", choices=("binary", "listwise"), default="binary",
                    help="binary: a probability per phrase, the best kept above a threshold (shipped); listwise: "
                         "phrases and 'unstated' scored together (dev full 30.2 against 31.3: not shipped)")
    ap.add_argument("--l2", type=float, default=1.0, help="listwise slot models' L2 penalty")
    args = ap.parse_args(argv)
    sc = scorer(args.gold)
    train = [json.loads(x) for x in (args.gold / "train.jsonl").open(encoding="utf-8")]
    dev = [json.loads(x) for x in (args.gold / "dev.jsonl").open(encoding="utf-8")]
    ptrain, pdev = parse(train, args.cache, "train"), parse(dev, args.cache, "dev")
    rng = random.Random(0)
    fold = [rng.randrange(FOLDS) for _ in train]
    # the gazetteer feature for a train abstract comes from the other folds (else it would mark every gold name)
    fold_known = [known_names([r for r, k in zip(train, fold, strict=True) if k != j]) for j in range(FOLDS)]
    vx, vy, sx, groups = examples(train, ptrain, lambda i: fold_known[fold[i]])
    print(f"values: {len(vy)} candidates, {Counter(vy)}", flush=True)
    value = fit_softmax(vx, vy, C=args.C, min_count=2, seed=0, max_iter=1000, min_weight=0.01)
    slots = {}
    for f in SLOTS:
        if args.slots == "listwise":
            slots[f] = fit_listwise(groups[f], l2=args.l2, min_count=2)
            n_null = sum(1 for opts, gi in groups[f] if gi == len(opts) - 1)
            print(f"{f}: {len(groups[f])} groups ({n_null} unstated), {len(slots[f]['weights'])} features",
                  flush=True)
            continue
        X, y = sx[f]
        slots[f] = fit_softmax(X, y, C=args.slot_C, min_count=2, seed=0, max_iter=1000, min_weight=0.01)
        print(f"{f}: {len(y)} pairs, {y.count('1')} positive, {len(slots[f]['weights'])} features", flush=True)
    data: dict[str, Any] = {"value": value, "value_threshold": 0.5, "slots": slots,
                            "thresholds": {f: 0.5 for f in SLOTS}, "known": known_names(train)}
    gold_dev = {r["id"]: r for r in dev}

    def full(d: dict[str, Any]) -> tuple[float, float, float]:
        s = sc.score(gold_dev, predict(ResultModel(d), dev, pdev))
        return s["full"][2], s["value+dataset"][2], s["value"][2]

    vres = {vt: full({**data, "value_threshold": vt}) for vt in (0.3, 0.4, 0.5, 0.6)}
    data["value_threshold"] = max(vres, key=lambda vt: vres[vt])
    print(f"value thresholds (full, value+dataset, value F1): {vres} -> {data['value_threshold']}", flush=True)
    data["null_mass"] = {f: 0.0 for f in SLOTS}
    data["min_share"] = {f: 0.0 for f in SLOTS}
    for f in SLOTS if args.slots == "listwise" else ():
        nres = {}
        for nb in (-1.0, -0.5, 0.0, 0.5, 1.0):
            nres[nb] = full({**data, "slots": {**data["slots"], f: {**data["slots"][f], "null_bias": nb}}})
        data["slots"][f]["null_bias"] = max(nres, key=lambda nb: nres[nb])
        print(f"{f}: unstated bias {nres} -> {data['slots'][f]['null_bias']}", flush=True)
    for f in SLOTS if args.slots == "binary" else ():
        grid = [(t, m, sh) for t in (0.1, 0.2, 0.3, 0.4, 0.5) for m, sh in ((0.0, 0.0), (0.5, 0.3), (1.0, 0.3),
                                                                            (0.5, 0.5), (1.0, 0.2))]
        res = {g: full({**data, "thresholds": {**data["thresholds"], f: g[0]},
                        "null_mass": {**data["null_mass"], f: g[1]}, "min_share": {**data["min_share"], f: g[2]}})
               for g in grid}
        # the dataset slot has a level of its own (value + dataset): chosen by it, the full tuple breaking ties;
        # system and metric by the full tuple, which is the only level that scores them
        t, m, sh = max(grid, key=lambda g: (res[g][1], res[g][0]) if f == "dataset" else res[g])
        data["thresholds"][f], data["null_mass"][f], data["min_share"][f] = t, m, sh
        print(f"{f}: threshold, unstated mass, share -> {(t, m, sh)}: {res[(t, m, sh)]}", flush=True)
    if args.slots == "binary":
        # a dataset phrase below the threshold is kept when it dominates the value's candidates (the one dataset
        # the abstract names, in another sentence): the least probability and share, or off
        dom = [None] + [(lo, hi) for lo in (0.05, 0.1, 0.2) for hi in (0.6, 0.7, 0.8, 0.9)]
        dres = {g: full({**data, "dominant": {"dataset": list(g)} if g else {}}) for g in dom}
        best = max(dom, key=lambda g: (dres[g][1], dres[g][0]))
        data["dominant"] = {"dataset": list(best)} if best else {}
        print(f"dataset: dominant (probability, share) -> {best}: {dres[best]}", flush=True)
    save_model(data, args.out)
    s = sc.score(gold_dev, predict(ResultModel(data), dev, pdev))
    for level, (p, r, f1, ng, npred) in s.items():
        print(f"dev {level:14} P {p:5.1f} R {r:5.1f} F1 {f1:5.1f}  (gold {ng}, pred {npred})")
    print(f"wrote {args.out} ({args.out.stat().st_size // 1024} KB)")


if __name__ == "__main__":
    sys.exit(main())
