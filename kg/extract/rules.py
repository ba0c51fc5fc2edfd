"""The rule layer: entity candidates from abbreviations, names and noun chunks, typed; contributions; relations."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kg.canon import canonical_key
from kg.extract import lexicon as lx
from kg.extract.abbrev import find_abbreviations
from kg.extract.results import doc_arrays

if TYPE_CHECKING:  # spaCy is imported where a pipeline is loaded, not by everything that reads a store
    from spacy.tokens import Doc, Span, Token

_VERSION = re.compile(r"(?<=[a-z])\d[\d.]*[a-z]?$")
_SIZE = re.compile(r"\d(?:\.\d+)?\s?[BMK]\b|\b\d+[bm]\b")
NAME_SUFFIX = re.compile(
    r"-(?:based|style|like|level|aware|guided|free|specific|driven|inspired|augmented|enhanced|oriented|centric|"
    r"conditioned|dependent|invariant|equivariant|scale|sized|tuned|generated|powered|only|wise|type|"
    r"pretrained|pre-trained|trained|finetuned|fine-tuned)$",
    re.IGNORECASE,
)
_BAD_CHARS = re.compile(r"[_^=<>|\\{}\[\]@#]|\d\s*[+*/]\s*\d")
PROPOSE_VERBS = {"propose", "introduce", "present", "develop", "design", "devise", "formulate", "construct",
                 "build", "create", "establish", "offer", "release", "curate", "collect", "contribute"}
NAMING_WORDS = {"called", "named", "dubbed", "termed", "coined", "namely", "titled"}
EVAL_CUES = re.compile(r"\b(evaluat\w*|experiment\w*|benchmark\w*|achiev\w*|outperform\w*|result\w*|test\w*|"
                       r"accurac\w*|performance|state-of-the-art|sota|empirical\w*|validat\w*)\b", re.I)
_COMPARE = re.compile(r"\b(outperform\w*|surpass\w*|compar\w+ (?:to|with|against)|than|versus|vs\.?|"
                      r"improv\w+ (?:over|upon)|beat\w*|exceed\w*|against|relative to)\b", re.I)
_USED_FOR = re.compile(r"^\W*(?:\w+\W+){0,4}?(?:for|to|towards|in)\W+(?:\w+\W+){0,2}$", re.I)
_USING = re.compile(r"\b(using|with|via|by|through|based on|leveraging|employing|adopting|applying)\b", re.I)
_ON = re.compile(r"\b(on|across|over|using|in)\b", re.I)
_ISA_APPOS = re.compile(r"^\s*,\s*(?:a|an)\s+(?:[\w-]+\s+){0,2}$", re.I)
_ISA_SUCH = re.compile(r"^\s*,?\s*(?:such as|including|e\.g\.,?|like|especially|particularly)\s*$", re.I)
_ISA_IS = re.compile(r"^\s*(?:is|are|as|being)\s+(?:a|an|one of the|a kind of|a type of|a form of|an instance of)"
                     r"\s+(?:[\w-]+\s+){0,2}$", re.I)
# "X, a novel benchmark for ...": the appositive's head word types a new name.
_APPOS_HEAD = re.compile(r"^\s*(?:,|:|\(|is|are)\s*(?:a|an|the)\s+(?:[\w-]+\s+){0,4}?"
                         r"(benchmarks?|datasets?|corpus|suite|models?|LLMs?|framework|method|algorithm|approach|"
                         r"technique|estimator|optimizer|architecture|metric|measure|score|task|problem)\b", re.I)
_PART_HAS = re.compile(r"\b(consist\w* of|compris\w*|contain\w*|incorporat\w*|integrat\w*|equipp\w* with|"
                       r"compos\w* of|augment\w* with|built on|built upon)\b", re.I)
_PART_IN = re.compile(r"^\s*(?:in|of|within|inside)\s+(?:the|a|an|each)?\s*$", re.I)
_PART_HEADS = {"layer", "module", "component", "block", "head", "encoder", "decoder", "attention", "loss", "term",
               "embedding", "unit", "gate", "branch", "stage", "submodule", "regularizer", "kernel"}
TYPE_PRIORITY = {"dataset": 0, "model": 1, "metric": 2, "task": 3, "method": 4, "concept": 5}


@dataclass(slots=True)
class Candidate:
    start: int  # offsets into the cleaned text
    end: int
    type: str
    priority: int
    short_form_of: str | None = None


def is_name_token(t: str) -> bool:
    """Name-shaped: ``ImageNet``, ``LLaDA-8B``, ``CIFAR-10``, ``t-SNE``, ``BERT``; not ``The`` or ``x2``."""
    if len(t) < 2 or t in lx.NOT_NAMES or not t[0].isalpha():
        return False
    rest = t[1:]
    # (islower first: most words are lower-case, and it answers for them without a character loop)
    if not rest.islower() and any(c.isupper() for c in rest):
        return sum(c.isalpha() for c in t) >= 2
    return (t[0].isupper() or "-" in t) and any(c.isdigit() for c in t)


def name_like(toks: list[Token]) -> bool:
    """No lower-case word, a name-shaped one among them, and no "-based" at the end: "GSM8K", "CMU Kids",
    "MiD 2017", "Llama-3.1-8B-Instruct"; not "Large Language" (title case), "SSM-based" or "baseline CodeGen"."""
    return all(not t.text.islower() and t.text[0].isalnum() for t in toks) and any(
        is_name_token(t.text) for t in toks) and not NAME_SUFFIX.search(toks[-1].text)


def known_type(key: str) -> str | None:
    """The type of a canonical key that is a known name (lexicon), else None."""
    for ty, names in lx.KNOWN_BY_TYPE:
        if key in names:
            return ty
    return None


def type_of(text: str, *, is_name: bool = False) -> str:
    """The entity type of a phrase, from known names, then its head word, then its shape."""
    key = canonical_key(text)
    words = key.split()
    if not words:
        return "concept"
    known = known_type(key)
    if known:
        return known
    head = words[-1]
    two = " ".join(words[-2:])
    if head in lx.DATASET_HEADS or two in lx.DATASET_HEADS:
        return "dataset"
    if is_name or any(c.isupper() for c in text):
        # A known family with its version joined on ("gemini1.5 pro", "claude3 opus" from "Claude 3 Opus")
        first = (words[0], _VERSION.sub("", words[0]))
        if _SIZE.search(text) or any(w in lx.KNOWN_MODELS for w in first):
            return "model"
        if any(w in lx.KNOWN_DATASETS for w in first) or text.endswith(
                ("Bench", "bench", "QA", "-QA", "Eval", "Arena")):
            return "dataset"
    if head in lx.METRIC_HEADS and len(words) <= 4 and head not in ("divergence", "risk", "rate", "error"):
        return "metric"
    if head in lx.TASK_HEADS or two in lx.TASK_HEADS:
        return "task"
    if head in lx.MODEL_HEADS:
        return "model"
    if head in lx.METHOD_HEADS or two in lx.METHOD_HEADS:
        return "method"
    if head in ("rate", "error") and len(words) >= 2:
        return "metric"
    if is_name:
        return "method"
    return "concept"


_STRONG_MODEL_HEADS = {"model", "llm", "lm", "lrm", "vlm", "mllm", "lvlm", "network", "transformer"}
_STRONG_METRIC_HEADS = {"accuracy", "precision", "recall", "f1", "auc", "perplexity", "bleu", "rouge"}


def strong_type(text: str) -> str | None:
    """The type a phrase's own words settle beyond doubt (a known name, or a head like "models" or
    "dataset"), whatever a tagger said in context; None when they don't."""
    key = canonical_key(text)
    words = key.split()
    if not words:
        return None
    known = known_type(key)
    if known:
        return known
    head, two = words[-1], " ".join(words[-2:])
    if head in lx.DATASET_HEADS or two in lx.DATASET_HEADS or text.endswith(("Bench", "bench")):
        return "dataset"
    if head in _STRONG_MODEL_HEADS:
        return "model"
    if head in _STRONG_METRIC_HEADS:
        return "metric"
    return None


def _trim_chunk(span: Span) -> tuple[int, int] | None:
    """Token range of a noun chunk without leading determiners and evaluative adjectives, or None if generic."""
    toks = list(span)
    i = 0
    while i < len(toks) and (toks[i].lower_ in lx.STRIP_LEADING or toks[i].tag_ in ("JJR", "JJS") or toks[i].pos_ in (
            "DET", "PRON", "NUM", "PUNCT", "CCONJ", "PART", "ADV", "SYM", "X") or not toks[i].text[0].isalnum()):
        i += 1
    j = len(toks)
    while j > i and toks[j - 1].pos_ in ("PUNCT", "PART"):
        j -= 1
    rest = toks[i:j]
    if not rest or len(rest) > 6:
        return None
    if any(t.pos_ == "PRON" or _BAD_CHARS.search(t.text) for t in rest):
        return None
    if all(t.lower_ in lx.GENERIC_WORDS or t.lower_ in lx.STRIP_LEADING or t.is_stop for t in rest):
        return None
    if not any(t.is_alpha and len(t) > 1 for t in rest):
        return None
    if len(rest) == 1 and rest[0].pos_ not in ("NOUN", "PROPN"):
        return None
    # "valuable information", "reduced problem": a generic head with only adjectives says nothing.
    if rest[-1].lower_ in lx.GENERIC_WORDS and all(t.pos_ == "ADJ" for t in rest[:-1]):
        return None
    return rest[0].i, rest[-1].i + 1


class RuleExtractor:
    """Finds typed entity mentions, contributions and relations in a parsed (cleaned) document."""

    def candidates(self, doc: Doc) -> tuple[list[Candidate], list[tuple[str, str]]]:
        text = doc.text
        cands: list[Candidate] = []
        abbrevs: list[tuple[str, str]] = []
        defined: dict[str, tuple[str, str]] = {}  # short form -> (long form, type)
        for ab in find_abbreviations(text):
            ty = type_of(ab.long)
            if ab.short.rstrip("s") in defined:
                continue
            defined[ab.short.rstrip("s") if ab.short.endswith("s") and ab.short[-2:-1].isupper() else ab.short] = (
                ab.long, ty)
            abbrevs.append((ab.short, ab.long))
            cands.append(Candidate(ab.long_start, ab.long_end, ty, 4))
        for short, (long, ty) in defined.items():
            for m in re.finditer(r"(?<![\w-])" + re.escape(short) + r"s?(?![\w-])", text):
                cands.append(Candidate(m.start(), m.end(), ty, 4, short_form_of=long))

        # Token attributes read once as lists (shared with the results step), not through a Token object each
        d = doc_arrays(doc)
        words, lower, pos, idx, url = d.orth, d.lower, d.pos, d.idx, d.url
        # Name-shaped tokens, with "-based" style suffixes cut off.
        for i, t in enumerate(words):
            if url[i]:  # "https://github.com/org/MI-Peaks" is a link, not a name
                continue
            cut = NAME_SUFFIX.search(t)
            core = t[: cut.start()] if cut else t
            if is_name_token(core):
                cands.append(Candidate(idx[i], idx[i] + len(core), "", 2))
        # Title-case sequences of two or more words: "Straight-Through Estimator".
        for sent in doc.sents:
            run: list[int] = []
            for i in [*range(sent.start, sent.end), -1]:
                ok = i >= 0 and words[i][:1].isupper() and pos[i] in ("PROPN", "NOUN", "ADJ") and (
                    i != sent.start or pos[i] == "PROPN") and lower[i] not in lx.STRIP_LEADING
                if ok:
                    run.append(i)
                    continue
                if len(run) >= 2:
                    cands.append(Candidate(idx[run[0]], idx[run[-1]] + len(words[run[-1]]), "", 3))
                run = []
        # Noun chunks, trimmed; a chunk that is a name plus a type word ("the CIFAR-10 dataset") types the name.
        for chunk in doc.noun_chunks:
            rng = _trim_chunk(chunk)
            if rng is None:
                continue
            span = doc[rng[0] : rng[1]]
            cands.append(Candidate(span.start_char, span.end_char, type_of(span.text), 1))
            if len(span) >= 2 and is_name_token(span[0].text) and canonical_key(span[-1].text) in (
                    lx.DATASET_HEADS | lx.MODEL_HEADS | {"method", "algorithm", "framework", "metric", "task"}):
                head_type = type_of("x " + span[-1].text)
                name_end = span[-2].idx + len(span[-2].text)
                cands.append(Candidate(span.start_char, name_end, head_type if head_type != "concept" else "", 3))
        return cands, abbrevs

    @staticmethod
    def select(cands: list[Candidate], text: str) -> list[Candidate]:
        """Non-overlapping candidates, preferring higher priority, then longer spans."""
        taken = bytearray(len(text) + 1)
        chosen: list[Candidate] = []
        for c in sorted(cands, key=lambda c: (-c.priority, -(c.end - c.start), c.start)):
            if c.end <= c.start or any(taken[c.start : c.end]):
                continue
            taken[c.start : c.end] = b"\x01" * (c.end - c.start)
            if not c.type:
                c.type = type_of(text[c.start : c.end], is_name=True)
                m = _APPOS_HEAD.match(text[c.end : c.end + 80])
                if m and c.type == "method":
                    c.type = type_of("x " + m.group(1)) if type_of("x " + m.group(1)) != "concept" else "method"
            chosen.append(c)
        chosen.sort(key=lambda c: c.start)
        return chosen

    @staticmethod
    def proposed(doc: Doc, chosen: list[Candidate]) -> set[int]:
        """Indexes of candidates a sentence says the paper proposes or introduces."""
        out: set[int] = set()
        starts = [c.start for c in chosen]
        text = doc.text  # spaCy joins every token each time it is read: once per document
        for tok in doc:
            if tok.lemma_ not in PROPOSE_VERBS or tok.pos_ != "VERB":
                continue
            subj = [c for c in tok.children if c.dep_ in ("nsubj", "nsubjpass")]
            by_us = any(s.lower_ in ("we", "paper", "work", "study", "article", "i") for s in subj) or (
                any(s.dep_ == "nsubjpass" for s in subj) and any(c.lower_ == "here" for c in tok.children))
            if not by_us:
                continue
            objs = [c for c in tok.children if c.dep_ in ("dobj", "attr", "oprd", "xcomp", "ccomp")]
            if not objs:
                continue
            lo = min(o.left_edge.idx for o in objs)
            hi = max(o.right_edge.idx + len(o.right_edge) for o in objs)
            inside = [i for i, s in enumerate(starts) if lo <= s < hi and chosen[i].end <= hi]
            if not inside:
                continue
            # Something named earlier in the abstract is context, not the contribution.
            earlier = {canonical_key(text[c.start : c.end]) for c in chosen if c.end <= tok.sent.start_char}
            fresh = [i for i in inside if canonical_key(text[chosen[i].start : chosen[i].end]) not in earlier
                     and not chosen[i].short_form_of]
            inside = fresh or inside
            named = [i for i in inside if is_name_token(text[chosen[i].start : chosen[i].end].split()[0])
                     or chosen[i].priority >= 3]
            # "we propose a framework, called X": the name is the contribution.
            follow = [i for i in inside if i > 0 and re.search(
                r"\b(" + "|".join(NAMING_WORDS) + r")\W*$", text[chosen[i - 1].end : chosen[i].start])]
            out.add((follow or named or inside)[0])
        return out

    @staticmethod
    def relations(text: str, chosen: list[Candidate], sent_of: list[int], proposed: set[int],
                  sent_bounds: list[tuple[int, int]]) -> list[tuple[int, int, str]]:
        rels: dict[tuple[int, int], str] = {}
        n = len(chosen)
        for i in range(n):
            a = chosen[i]
            for j in range(i + 1, min(n, i + 4)):
                b = chosen[j]
                if sent_of[i] != sent_of[j] or a.short_form_of or b.short_form_of:
                    continue
                between = text[a.end : b.start]
                if len(between) > 80:
                    break
                ta, tb = a.type, b.type
                if j == i + 1 and (_ISA_APPOS.match(between) or _ISA_IS.match(between)) and tb in (
                        "method", "model", "dataset", "task", "concept", "metric") and ta != "metric" and tb == ta:
                    rels[(i, j)] = "IS_A"
                elif j == i + 1 and _ISA_SUCH.match(between) and ta == tb:
                    rels[(j, i)] = "IS_A"
                elif ta in ("method", "model") and tb in ("method", "model") and _COMPARE.search(between):
                    rels[(i, j)] = "COMPARED_WITH"
                elif ta in ("method", "model") and tb == "task" and _USED_FOR.match(between):
                    rels[(i, j)] = "USED_FOR"
                elif ta == "task" and tb in ("method", "model") and _USING.search(between):
                    rels[(j, i)] = "USED_FOR"
                elif ta in ("method", "model") and tb == "dataset" and _ON.search(between):
                    rels[(i, j)] = "EVALUATED_ON"
                elif ta in ("method", "model") and tb in ("method", "model") and _PART_HAS.search(between):
                    rels[(j, i)] = "PART_OF"
                elif (ta in ("method", "concept") and tb in ("method", "model") and _PART_IN.match(between)
                      and canonical_key(text[a.start : a.end]).split()[-1] in _PART_HEADS):
                    rels[(i, j)] = "PART_OF"
        # A sentence that reports experiments on a dataset without naming the method: the paper's contribution.
        contrib = [i for i in sorted(proposed) if chosen[i].type in ("method", "model")]
        if contrib:
            head = contrib[0]
            for j, c in enumerate(chosen):
                if c.type == "dataset" and sent_of[j] != sent_of[head] and not c.short_form_of:
                    s, e = sent_bounds[sent_of[j]]
                    if EVAL_CUES.search(text[s:e]) and not any(
                            k[1] == j and v == "EVALUATED_ON" for k, v in rels.items()):
                        rels[(head, j)] = "EVALUATED_ON"
        return [(h, t, ty) for (h, t), ty in sorted(rels.items())]
