"""The kg-gold teacher: all-MiniLM-L6-v2 fine-tuned on kg-gold train's six types, then run over arXiv abstracts.

Used by scripts/train_gold.py (steps ``teacher`` and ``silver``); needs ``pip install -e '.[train,teacher]'``. The
teacher is too slow to ship, so its labels on arXiv abstracts (none of them a kg-gold train or dev abstract) join
kg-gold train as the fast NER's training data. Sentences are those of spaCy's rule sentencizer over kg's own
tokens (whitespace tokens left out), so teacher and student see the same words.
"""

from __future__ import annotations

import gzip
import json
import random
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

TYPES = ["method", "model", "dataset", "task", "metric", "concept"]
TAGS = ["O"] + [f"{p}-{t}" for t in TYPES for p in "BI"]
MAX_WORDS = 120  # longer sentences (lists, tables flattened into text) are cut into pieces of this many words


def sentences(doc: Any) -> Iterator[tuple[dict, list[int]]]:
    """(sentence, token indices into ``doc``) per sentence of ``doc``: words, entities and missing spans (word
    offsets) from the doc's NER annotation, as kg_train/teacher.py reads them."""
    from spacy.pipeline import Sentencizer

    Sentencizer()(doc)
    for sent in doc.sents:
        idx = [t.i for t in sent if not t.is_space]
        for k in range(0, len(idx), MAX_WORDS):
            part = idx[k : k + MAX_WORDS]
            if not part:
                continue
            pos = {ti: w for w, ti in enumerate(part)}
            ents, missing = [], []
            cut = set()  # an entity the sentence boundary cuts ("non-i.i.d. data"): its words here are unknown
            for e in doc.ents:
                if e.start in pos and e.end - 1 in pos:
                    ents.append([pos[e.start], pos[e.end - 1] + 1, e.label_])
                elif e.start in pos or e.end - 1 in pos:
                    cut |= {t for t in range(e.start, e.end) if t in pos}
            run = None
            for w, ti in enumerate(part):
                if doc[ti].ent_iob_ == "" or ti in cut:
                    run = [w, w + 1] if run is None else [run[0], w + 1]
                elif run is not None:
                    missing.append(run)
                    run = None
            if run is not None:
                missing.append(run)
            yield {"words": [doc[ti].text for ti in part], "ents": ents, "missing": missing}, part


def docbin_sentences(path: Path, nlp: Any) -> list[dict]:
    from spacy.tokens import DocBin

    return [s for doc in DocBin().from_disk(path).get_docs(nlp.vocab) for s, _ in sentences(doc)]


def train(work: Path, out: Path, *, steps: int, threads: int) -> None:
    """Fine-tune on build/gold/train.spacy's sentences, select on dev.spacy's (strict span F1 on kg's tokens)."""
    import spacy

    from kg_train.teacher import fine_tune

    nlp = spacy.blank("en")
    tr = docbin_sentences(work / "train.spacy", nlp)
    dev = docbin_sentences(work / "dev.spacy", nlp)
    print(f"teacher data: {len(tr)} train sentences, {len(dev)} dev sentences", flush=True)
    fine_tune(lambda enc: [enc(s) for s in tr], {"kg_gold_dev": dev}, out, tags=TAGS, steps=steps, threads=threads,
              freeze_embeddings=True)


def _opening(text: str) -> str:
    """The first 200 letters and digits of ``text``, lower-cased: the same abstract under another id."""
    return "".join(c for c in text.lower() if c.isalnum())[:200]


def corpus_sample(corpus: Path, n: int, exclude: list[dict], seed: int) -> list[dict]:
    """``n`` corpus records drawn with ``seed``, none of them one of the kg-gold rows ``exclude`` (by id, or by
    the abstract's opening: some gold abstracts are in the corpus under another id)."""
    ids = {r["id"] for r in exclude}
    openings = {_opening(r["text"]) for r in exclude}
    with gzip.open(corpus, "rt", encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh]
    rows = [r for r in rows if r.get("id") not in ids and (r.get("abstract") or "").strip()
            and _opening(r["abstract"]) not in openings]
    random.Random(seed).shuffle(rows)
    return rows[:n]


def label_docs(model_dir: Path, texts: Iterable[str], nlp: Any, threads: int) -> list[Any]:
    """kg-tokenised docs of the cleaned ``texts`` with the teacher's entities set on them."""
    from spacy.tokens import Span
    from spacy.util import filter_spans

    from kg.clean import clean_text
    from kg_train.teacher import label

    docs = [nlp.make_doc(clean_text(t).text) for t in texts]
    sents, where = [], []
    for d, doc in enumerate(docs):
        for s, idx in sentences(doc):
            sents.append(s["words"])
            where.append((d, idx))
    labelled = label(model_dir, sents, TAGS, threads)
    spans: dict[int, list] = {}
    for lab, (d, idx) in zip(labelled, where, strict=True):
        for a, b, ty in lab["ents"]:
            spans.setdefault(d, []).append(Span(docs[d], idx[a], idx[b - 1] + 1, label=ty))
    for d, doc in enumerate(docs):
        doc.set_ents(filter_spans(spans.get(d, [])), default="outside")
    return docs
