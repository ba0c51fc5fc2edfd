"""Entity resolution: do kg's nodes put the names of one thing together, and never two things into one?

    python bench/resolution.py                          # kg-gold dev and train-2 (about 10 seconds)
    python bench/resolution.py --store kg-store-5k      # and a built store's graph: hand sets, top-20 lists

**Gold** (nothing kg produces): kg-gold's annotations. Each gold entity is one thing in its abstract: its text and
the forms its annotators listed as aliases. Across abstracts, entities with the same canonical name (``text``) are
one thing; a short form used alone ("CNN", no long form in its abstract) is the thing the evaluated abstracts
define it as when they define it one way, its own thing when they never define it, and is left out of the scores
when they define it several ways ("RL": reinforcement / representation learning). The hand-checked lists in
``bench/data/resolution-sets.json`` (written from domain knowledge) add the sets of names that are one thing
though no annotator linked them ("MS COCO", "COCO"). Forms an annotator listed that shorten the entity's name
("forgetting" for "catastrophic forgetting") are coreference within one abstract, not names of the thing, and
are not scored.

The resolver under test sees what kg sees: a mention for each of those forms where the abstract writes it and the
abbreviations kg's own detector finds in the text; never the gold links.

Scored: B-cubed precision and recall of the resolver's nodes over the gold mentions; the names (forms, case
folded) on more than one node, split into names that are ambiguous in the gold (a short form defined two ways)
and the rest; and, with a probe paper for each name, how many hand-checked same-sets end on one node and how many
must-not-merge pairs end on one node (should be 0).

Two evaluations, so that the short forms kg learns from kg-gold (``kg/data/short_forms.tsv``) are never scored on
the abstracts they came from: **dev** (160 abstracts; kg's shipped table, learned from train and train-2) and
**train-2** (3,840 abstracts; a table learned from train alone). Baselines in the same run: exact names (case
folded), kg's canonical key alone, and the resolver kg shipped before (canonical keys plus each short form's most
common definition in the corpus).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from kg.canon import canonical_key, looks_like_acronym  # noqa: E402
from kg.extract.abbrev import find_abbreviations  # noqa: E402
from kg.extract.types import Extraction, Mention  # noqa: E402
from kg.resolve import Resolved, Resolver, letters, short_key  # noqa: E402

GOLD = ROOT.parent / "shared" / "data" / "eval" / "kg-gold"
SETS = ROOT / "bench" / "data" / "resolution-sets.json"


# -- the resolvers compared ----------------------------------------------------------------------------------------
class Exact:
    """Baseline: one node per name, case folded."""

    def __init__(self, papers: Iterable[tuple[str, Extraction]]) -> None:
        pass

    def resolve(self, ext: Extraction) -> Iterator[Resolved]:
        return (Resolved(" ".join(m.text.casefold().split())) for m in ext.entities)


class KeyOnly(Exact):
    """Baseline: kg's canonical key alone (case, plural, hyphen, accent variants)."""

    def resolve(self, ext: Extraction) -> Iterator[Resolved]:
        return (Resolved(canonical_key(m.text)) for m in ext.entities)


class Landed:
    """The resolver kg shipped before (15ed9d2): canonical keys, and a short form without a definition in its
    paper takes its most common definition in the corpus."""

    def __init__(self, papers: Iterable[tuple[str, Extraction]]) -> None:
        votes: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
        for _, ext in papers:
            for short, long in ext.abbreviations:
                votes[canonical_key(short), letters(short)][canonical_key(long)] += 1
        self.global_long = {s: min(c.items(), key=lambda kv: (-kv[1], kv[0]))[0] for s, c in votes.items() if s[0]}

    def _long(self, short: str, local: dict) -> str | None:
        k = (canonical_key(short), letters(short))
        return local.get(k) or self.global_long.get(k)

    def resolve(self, ext: Extraction) -> Iterator[Resolved]:
        local = {(canonical_key(s), letters(s)): canonical_key(lf) for s, lf in ext.abbreviations}
        for m in ext.entities:
            if m.short_form_of:
                yield Resolved(canonical_key(m.short_form_of))
                continue
            key = canonical_key(m.text)
            if looks_like_acronym(m.text):
                yield Resolved(self._long(m.text, local) or key)
                continue
            words = m.text.split()
            if len(words) > 1 and any(looks_like_acronym(w) for w in words):
                parts = [(self._long(w, local) or w) if looks_like_acronym(w) else w for w in words]
                yield Resolved(canonical_key(" ".join(parts)))
                continue
            yield Resolved(key)


# -- gold ------------------------------------------------------------------------------------------------------------
class _UF:
    def __init__(self) -> None:
        self.p: dict = {}

    def find(self, x):  # noqa: ANN001, ANN201
        self.p.setdefault(x, x)
        while self.p[x] != x:
            self.p[x] = self.p[self.p[x]]
            x = self.p[x]
        return x

    def union(self, a, b) -> None:  # noqa: ANN001
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.p[max(ra, rb)] = min(ra, rb)


def _shortening(form: str, text: str) -> bool:
    """True when one of ``form`` and ``text`` is the other with words left out ("forgetting" of "catastrophic
    forgetting", "language models" of "large language models"): within one abstract that is the same thing, but
    as names they are a term and its specialisation."""
    fw, tw = canonical_key(form).split(), canonical_key(text).split()
    if len(fw) > len(tw):
        fw, tw = tw, fw
    if len(fw) == len(tw):
        return False
    it = iter(tw)
    return all(w in it for w in fw)


def _find(text: str, form: str) -> int:
    i = text.find(form)
    return i if i >= 0 else text.casefold().find(form.casefold())


def load_gold(path: Path, sets: dict) -> tuple[list[tuple[str, Extraction]], list[tuple[str, int, str]], dict, set]:
    """The papers as the resolver sees them, the scored items (paper, mention index, form), each item's gold
    cluster, and the forms that are ambiguous in the gold."""
    papers, items = [], []
    inst_forms: dict[tuple[str, int], list[str]] = {}
    uf = _UF()
    bare: list[tuple[tuple[str, int], tuple[str, str]]] = []
    defined: dict[tuple[str, str], set] = defaultdict(set)
    entity_of: dict[tuple[str, int], tuple[str, int]] = {}
    for line in path.open(encoding="utf-8"):
        doc = json.loads(line)
        pid, text = doc["id"], doc["text"]
        ext = Extraction(sentences=[(0, len(text))],
                         abbreviations=[(a.short, a.long) for a in find_abbreviations(text)])
        for i, e in enumerate(doc["entities"]):
            inst = (pid, i)
            forms = [e["text"]] + [a for a in e.get("aliases", []) if looks_like_acronym(a)
                                   or not _shortening(a, e["text"])]
            has_long = not looks_like_acronym(e["text"]) or any(not looks_like_acronym(a) for a in forms[1:])
            for f in dict.fromkeys(forms):
                if looks_like_acronym(f):
                    if has_long:
                        defined[short_key(f)].add(inst)
                    else:
                        bare.append((inst, short_key(f)))
                else:
                    uf.union(inst, ("K", canonical_key(f)))
                at = _find(text, f)
                if at < 0:
                    continue
                entity_of[pid, len(ext.entities)] = inst
                items.append((pid, len(ext.entities), f))
                ext.entities.append(Mention(at, at + len(f), text[at:at + len(f)], e["type"],
                                            proposed=bool(e.get("proposed"))))
            inst_forms[inst] = forms
        papers.append((pid, ext))
    for names in sets["same"]:
        for a in names[1:]:
            uf.union(_set_node(names[0]), _set_node(a))
    # A short form used alone: the one thing the evaluated abstracts define it as, else its own.
    ambiguous = set()
    for inst, sk in bare:
        meanings = {uf.find(x) for x in defined.get(sk, ())}
        if len(meanings) > 1:
            ambiguous.add(inst)
        elif meanings:
            uf.union(inst, next(iter(meanings)))
        else:  # never defined: the same key across abstracts is one thing ("LLaMA", "Llama")
            uf.union(inst, ("K", sk[0]))
    gold = {}
    amb_forms = set()
    for pid, j, f in items:
        inst = entity_of[pid, j]
        if inst in ambiguous:
            amb_forms.add(" ".join(f.casefold().split()))
            continue
        gold[pid, j] = uf.find(inst)
    # A name is ambiguous where the gold puts it in two clusters ("SFT": supervised fine-tuning in one abstract,
    # shape from template in another), or leaves it out as a short form defined two ways.
    clusters_of: dict[str, set] = defaultdict(set)
    for pid, j, f in items:
        if (pid, j) in gold:
            clusters_of[" ".join(f.casefold().split())].add(gold[pid, j])
    amb_forms |= {f for f, cs in clusters_of.items() if len(cs) > 1}
    return papers, items, gold, amb_forms


def ambiguous_left_out(gold: dict, items: list) -> list:
    return [(pid, j) for pid, j, _ in items if (pid, j) not in gold]


def _set_node(name: str) -> tuple:
    return ("K", canonical_key(name))


# -- scoring ---------------------------------------------------------------------------------------------------------
def bcubed(gold: dict, system: dict) -> tuple[float, float]:
    g_size: Counter = Counter(gold.values())
    s_size: Counter = Counter(system[i] for i in gold)
    both: Counter = Counter((gold[i], system[i]) for i in gold)
    p = sum(both[gold[i], system[i]] / s_size[system[i]] for i in gold) / len(gold)
    r = sum(both[gold[i], system[i]] / g_size[gold[i]] for i in gold) / len(gold)
    return 100 * p, 100 * r


def run_resolver(make: Callable, papers: list[tuple[str, Extraction]]) -> dict:
    res = make(papers)
    out = {}
    for pid, ext in papers:
        for j, r in enumerate(res.resolve(ext)):
            out[pid, j] = r.key if r is not None else f"(none {pid} {j})"
    return out


def multi_names(items: list, system: dict) -> dict[str, set]:
    on: dict[str, set] = defaultdict(set)
    for pid, j, f in items:
        on[" ".join(f.casefold().split())].add(system[pid, j])
    return {f: nodes for f, nodes in on.items() if len(nodes) > 1}


def probes(make: Callable, papers: list[tuple[str, Extraction]], sets: dict) -> tuple[int, int, int, list]:
    """A probe paper for every hand-listed name (the name alone, no context): same-sets one node, of all; and
    the must-not-merge pairs that share a node."""
    names = sorted({n for s in sets["same"] for n in s} | {n for p in sets["different"] for n in p})
    probe = [(f"probe:{i}", Extraction(entities=[Mention(0, len(n), n, "method")], sentences=[(0, len(n))]))
             for i, n in enumerate(names)]
    res = make(papers + probe)
    node = {n: next(iter(res.resolve(ext))).key for n, (_, ext) in zip(names, probe, strict=True)}
    one = sum(len({node[n] for n in s}) == 1 for s in sets["same"])
    merged = [p for p in sets["different"] if node[p[0]] == node[p[1]]]
    return one, len(sets["same"]), len(merged), merged


RESOLVERS: dict[str, Callable] = {"exact name": Exact, "canonical key": KeyOnly, "kg before (15ed9d2)": Landed,
                                  "kg": Resolver}


def evaluate(name: str, path: Path, sets: dict, known: dict | None) -> None:
    t0 = time.perf_counter()
    papers, items, gold, amb = load_gold(path, sets)
    clusters = len(set(gold.values()))
    spans: dict = defaultdict(set)
    for (pid, _), c in gold.items():
        spans[c].add(pid)
    across = sum(len(v) > 1 for v in spans.values())
    print(f"\n{name}: {len(papers)} abstracts, {len(gold)} gold mentions in {clusters} clusters "
          f"({across} across abstracts), {len(ambiguous_left_out(gold, items))} mentions of short forms defined "
          f"two ways left out; {len(amb)} names the gold gives two meanings")
    print(f"  {'resolver':<22}{'B3 P':>7}{'B3 R':>7}{'B3 F1':>7}  {'names on >1 node':>16} (ambiguous)"
          f"  {'same-sets one node':>18}  {'different merged':>16}")
    for label, cls in RESOLVERS.items():
        make = (lambda ps, c=cls: c(ps, known=known)) if cls is Resolver and known is not None else cls
        system = run_resolver(make, papers)
        p, r = bcubed(gold, system)
        multi = multi_names(items, system)
        amb_multi = sum(f in amb for f in multi)
        one, total, n_merged, merged = probes(make, papers, sets)
        f1 = 2 * p * r / (p + r)
        print(f"  {label:<22}{p:7.1f}{r:7.1f}{f1:7.1f}  {len(multi):>16} ({amb_multi:>3})"
              f"  {one:>11} of {total:<4}  {n_merged:>16}" + (f"  {merged[:3]}" if merged else ""))
    print(f"  (in {time.perf_counter() - t0:.0f} s)")


# -- a built store ---------------------------------------------------------------------------------------------------
def store_report(store_dir: str, sets: dict, top: int) -> None:
    from kg.graph import derive_graph
    from kg.store.embedded import EmbeddedStore

    st = EmbeddedStore(store_dir)
    inputs = st.load_inputs()
    pairs = [(pid, inputs[pid].extraction) for pid in sorted(inputs)]
    print(f"\nstore {store_dir}: {len(pairs)} papers")
    tops = {}
    for label, cls in (("kg before (15ed9d2)", Landed), ("kg", Resolver)):
        t0 = time.perf_counter()
        g = derive_graph(inputs, related_k=0, resolver=cls(pairs))
        seconds = time.perf_counter() - t0
        ents = [d for _, d in g.nodes(data=True) if "aliases" in d]
        on: dict[str, set] = defaultdict(set)
        for d in ents:
            for f in {" ".join(x.split()) for x in (d["name"], *d["aliases"])}:
                on[f].add(d["id"])
        found = [[n for n in s if " ".join(n.split()) in on] for s in sets["same"]]
        found = [f for f in found if len(f) > 1]
        one = [f for f in found if len(set.union(*(on[" ".join(n.split())] for n in f))) == 1]
        merged = [p for p in sets["different"] if all(" ".join(n.split()) in on for n in p)
                  and on[" ".join(p[0].split())] & on[" ".join(p[1].split())]]
        multi = sum(len(v) > 1 for v in on.values())
        print(f"  {label:<22} {len(ents)} entities (resolved and derived in {seconds:.1f} s); "
              f"same-sets found (2+ names): {len(found)}, one node: {len(one)}; "
              f"different pairs on one node: {len(merged)} {merged[:3]}; names on >1 node: {multi}")
        split = [f for f in found if f not in one]
        for f in split[:12]:
            print(f"      split: {' / '.join(f)} -> "
                  + ", ".join(sorted({i for n in f for i in on[' '.join(n.split())]})))
        tops[label] = {ty: sorted((d for d in ents if d["type"] == ty), key=lambda d: (-d["paper_count"], d["name"]))
                       [:top] for ty in ("dataset", "method", "model")}
    if top:
        for ty in ("dataset", "method", "model"):
            print(f"\n  top {top} {ty}s (papers): before | now")
            for a, b in zip(tops["kg before (15ed9d2)"][ty], tops["kg"][ty], strict=False):
                print(f"    {a['name'][:34]:<34} {a['paper_count']:>5}   | {b['name'][:34]:<34} {b['paper_count']:>5}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--store", help="also report on this built store (its extraction log is re-resolved)")
    ap.add_argument("--top", type=int, default=20, help="with --store: the most used datasets, methods, models")
    ap.add_argument("--only", choices=["dev", "train-2"], help="one of the two evaluations")
    a = ap.parse_args()
    sets = json.loads(SETS.read_text(encoding="utf-8"))
    if a.only in (None, "dev"):
        evaluate("kg-gold dev (short forms learned from train + train-2)", GOLD / "dev.jsonl", sets, None)
    if a.only in (None, "train-2"):
        from learn_short_forms import learn

        from kg.resolve import short_key as sk_of

        known: dict = defaultdict(Counter)
        for short, long, n in learn([GOLD / "train.jsonl"]):
            known[sk_of(short)][canonical_key(long)] += n
        evaluate("kg-gold train-2 (short forms learned from train alone)", GOLD / "train-2.jsonl", sets, dict(known))
    if a.store:
        store_report(a.store, sets, a.top)


if __name__ == "__main__":
    main()
