"""Corpus-level entity resolution: which mentions, across all papers, name one thing.

After extraction every mention has a canonical key (``kg.canon``: case, plural, hyphen and accent variants are one
key). Resolution joins keys further, and says why each form joined its node:

- **Spelling variants**: British and American spelling, ``nets`` for ``networks``, the same letters with or without
  spaces ("MS COCO", "MSCOCO"), "convolutional neural network" and "convolutional network". Only the same letters
  meet: a different version or size ("GPT-4" / "GPT-4o", "CIFAR-10" / "CIFAR-100") never does.
- **Short forms**: a paper's own definition ("convolutional neural networks (CNNs)") always wins. A short form used
  without one takes the meaning the corpus gives it (every paper's definitions pooled, and the short forms kg-gold's
  annotators recorded, ``kg/data/short_forms.tsv``) when it has one. A short form with several meanings ("RL":
  reinforcement learning, representation learning) is resolved by the paper's context (the entities it shares with
  the papers that define each meaning), and otherwise stays a node of its own: never a global guess.
- **Overrides**: a user's file (``split: A | B``, ``merge: A = B``) undoes or adds a join.

A term and its specialisation ("Q-learning", "deep Q-learning") keep different letters, so nothing here joins them.
Deterministic for papers given in one order (derive_graph gives them in id order): every choice breaks ties by
sorted keys.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from functools import lru_cache
from importlib import resources
from pathlib import Path

from kg.canon import canonical_key, looks_like_acronym
from kg.clean import plain_name
from kg.errors import InputError
from kg.extract.types import Extraction, Mention

# -- spelling variants ---------------------------------------------------------------------------------------------
_BRITISH = [
    (re.compile(r"is(ation|ations|ed|er|ers|ing)$"), r"iz\1"),  # normalisation, optimiser, regularised
    (re.compile(r"^(analy|paraly|cataly)s(e|ed|es|ing|er)$"), r"\1z\2"),  # analyse
    (re.compile(r"^(behavi|col|neighb|fav|hum|lab|vap|harb|rum|flav)our(s|ed|ing|al|ally|hood)?$"), r"\1or\2"),
    (re.compile(r"^(model|label|signal|travel|cancel|channel|tunnel|fuel|level)l(ed|ing|er|ers)$"), r"\1\2"),
    (re.compile(r"^(cent|met|fib|theat)re(s|d)?$"), r"\1er\2"),
    (re.compile(r"^(defen|licen|offen)ce$"), r"\1se"),
    (re.compile(r"^grey$"), "gray"),
    (re.compile(r"^programme(s)?$"), r"program\1"),
    (re.compile(r"^catalogue(s)?$"), r"catalog\1"),
]
# Words that end like a British spelling but are none: "noise", "precise", "wise" do not match the patterns above
# (only -isation/-ised/-iser/-ising are changed), and these do not either.
_NOT_BRITISH = {"raised", "praised", "poised", "bruised", "cruised", "noised", "advertised", "supervised",
                "unsupervised", "supervising", "supervisor", "revised", "devised", "promised", "compromised",
                "televised", "surprised", "exercised", "premised", "paised", "chastised", "improvised", "advised",
                "despised", "comprised", "disguised", "franchised", "merchandised", "supervisers", "raiser",
                "appraised", "appraiser", "poiser", "visers", "adviser", "advisers", "reviser", "deviser",
                "wiser", "riser", "risers", "miser", "misers", "geyser"}
# Whole names written two ways (the letters differ, so the rules above cannot see them).
_WHOLE = {"convnet": "convolutional network", "resnet": "residual network", "neural net": "neural network"}
_DIGITS_APART = re.compile(r"(?<=\d) (?=\d)")
_NET = re.compile(r"(?<=\w) nets?$")  # "generative adversarial nets" -> "... networks"
# "convolutional neural network" = "convolutional network"; not for any word: a Bayesian network is no Bayesian
# neural network, and a graph network (Battaglia et al.) is more than a graph neural network.
_NEURAL_NETWORK = re.compile(r"(?<![\w ])((?:deep )?(?:fully )?(?:convolutional|recurrent|deep|feedforward|feed forward"
                             r"|residual|spiking)) neural network$")


@lru_cache(maxsize=1 << 18)
def variant_key(key: str) -> str:
    """The spelling-variant class of a canonical key: American spelling, ``net`` for ``network``, "X neural network"
    as "X network", and no spaces. Two keys with one variant key name one thing."""
    words = []
    for w in key.split():
        if w not in _NOT_BRITISH:
            for pat, rep in _BRITISH:
                w2 = pat.sub(rep, w)
                if w2 != w:
                    w = w2
                    break
        words.append(w)
    text = " ".join(words)
    text = _WHOLE.get(text, text)
    text = _NET.sub(" network", text)
    text = _NEURAL_NETWORK.sub(r"\1 network", text)
    return _DIGITS_APART.sub("_", text).replace(" ", "")  # "llama2 7b" is no "llama27b"


# -- short forms -------------------------------------------------------------------------------------------------
_FUNCTION_WORDS = {"of", "over", "on", "in", "and", "for", "to", "the", "a", "with", "by", "from", "at", "via"}


_PLURAL = re.compile(r"(?<=[A-Z0-9])'?s$")  # "LLMs", "LLM's"


def letters(short: str) -> str:
    """A short form's letters as written, without a plural ("LLMs", "LLM's" -> "LLM"; "GPT-4" -> "GPT")."""
    return "".join(c for c in _PLURAL.sub("", short) if c.isalpha())


def _case_only_function_words(short: str, long: str) -> bool:
    """True when the lower-case letters of ``short`` stand for function words of ``long`` ("IoU": intersection
    *over* union), so the same short form in capitals ("IOU") is the same abbreviation. Not "mAP" (*mean*
    average precision) or "CoCo" (*Co*ding *Co*ncepts), whose capitals say something."""
    lows = [c for c in letters(short) if c.islower()]
    if not lows:
        return True
    words = {w.casefold() for w in re.split(r"[\s\-]+", long)}
    starts = {w[0] for w in words & _FUNCTION_WORDS}
    return all(c in starts for c in lows)


_NAME_WITH_DIGIT = re.compile(r"^[^\W\d_]+[\-\s]?\d[\w.\-]*$")  # "gpt-4", "llama2", "Gpt-3.5"


# Words a longer wording may add without naming something narrower ("large pre-trained language models"); "large
# decoder-only language models" is a kind of LLM, and "deep learning models" are things deep learning makes.
_FILLER = {"pre", "trained", "pretrained", "scale", "large", "neural"}


_TYPE_WORDS = {"network", "model", "architecture", "framework", "method", "algorithm", "approach", "technique",
               "system"}


def _typed(longer: str, key: str) -> bool:
    """True when ``longer`` is ``key`` and a type word ("Long Short Term Memory networks" of LSTM)."""
    w = longer.split()
    return len(w) > 1 and w[-1] in _TYPE_WORDS and " ".join(w[:-1]) == key


def _holds(longer: str, key: str) -> bool:
    """True when ``longer`` is ``key`` with filler words between or around its words."""
    words, extra = iter(longer.split()), []
    for w in key.split():
        for x in words:
            if x == w:
                break
            extra.append(x)
        else:
            return False
    extra.extend(words)
    return bool(extra) and all(x in _FILLER for x in extra)


def _near(key: str, main: str) -> bool:
    """True when ``key`` is ``main`` with another function word ("reinforcement learning *with* human feedback")
    or a slip of one or two letters in a long name ("stochastic gradient decent")."""
    a = [w for w in key.split() if w not in _FUNCTION_WORDS]
    b = [w for w in main.split() if w not in _FUNCTION_WORDS]
    if a == b or (len(a) == len(b) and all(_same_word(x, y) for x, y in zip(a, b, strict=True))):
        return True
    return (len(main) >= 12 and len(a) == len(b) and re.findall(r"\d+", key) == re.findall(r"\d+", main)
            and _edits(" ".join(a), " ".join(b)) <= 2)


_SUFFIX = re.compile(r"(ation|ing|ed|er|or)$")


def _same_word(a: str, b: str) -> bool:
    """One word of two wordings of a short form's meaning: the same, "vision"/"visual", an adverb ("adversarial
    training", "adversarially trained"), or one stem with two suffixes ("adapter"/"adaptation",
    "pretrained"/"pretraining"); never a word and its "-ing" ("model"/"modeling": language model and language
    modeling are two things)."""
    if a == b or {a, b} == {"vision", "visual"} or a == b + "ly" or b == a + "ly":  # adversarial(ly)
        return True
    sa, sb = _SUFFIX.search(a), _SUFFIX.search(b)
    return sa is not None and sb is not None and len(a) > 5 and len(b) > 5 and a[: sa.start()] == b[: sb.start()]


def _edits(a: str, b: str) -> int:
    """Levenshtein distance (small strings)."""
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


def _plain(mentions: list[Mention]) -> list[Mention]:
    """The mentions with their texts as names (Markdown emphasis out: kg.clean.plain_name)."""
    return [replace(m, text=plain_name(m.text)) if "*" in m.text else m for m in mentions]


_TWO = re.compile(r"^([a-z]{2,})2([a-z]{2,})$")
_PARTS = re.compile(r"[\s\-\u2010\u2011]+")


def _is_compound(text: str) -> bool:
    """A name of several words (or hyphenated parts) with a short form among them, and no version name."""
    parts = _PARTS.split(text.strip())
    return len(parts) > 1 and any(looks_like_acronym(p) for p in parts) and not _NAME_WITH_DIGIT.match(text)


def _cut(key: str, main: str) -> bool:
    """True when ``key`` is ``main`` with its first word cut at a hyphen ("modal large language model" of
    "Multi-modal Large Language Models (MLLMs)", where the definition was read from the middle of a word)."""
    kw, mw = key.split(), main.split()
    return len(kw) == len(mw) > 1 and kw[1:] == mw[1:] and mw[0] != kw[0] and mw[0].endswith(kw[0])


ShortKey = tuple[str, str]  # (canonical key, letters as written): "CoCo" and "COCO" are different short forms


def short_key(surface: str) -> ShortKey:
    return canonical_key(surface), letters(surface)


@lru_cache(maxsize=1)
def known_short_forms() -> dict[ShortKey, Counter[str]]:
    """The short forms kg-gold's annotators recorded as aliases (``scripts/learn_short_forms.py``): short key ->
    long-form key -> abstracts that define it so."""
    out: dict[ShortKey, Counter[str]] = defaultdict(Counter)
    text = resources.files("kg.data").joinpath("short_forms.tsv").read_text(encoding="utf-8")
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        short, long, n = line.split("\t")
        out[short_key(short)][canonical_key(long)] += int(n)
    return dict(out)


# -- overrides ---------------------------------------------------------------------------------------------------
_COMMENT = re.compile(r"(?:^|\s)#")


@dataclass(frozen=True)
class Overrides:
    """A user's corrections: ``split`` keeps two names on different nodes, ``merge`` joins them."""

    splits: tuple[tuple[str, str, int], ...] = ()  # (key, key, line)
    merges: tuple[tuple[str, str, int], ...] = ()
    source: str = ""

    @classmethod
    def parse(cls, text: str, where: str = "overrides") -> Overrides:
        splits: list[tuple[str, str, int]] = []
        merges: list[tuple[str, str, int]] = []
        for i, raw in enumerate(text.splitlines(), 1):
            line = _COMMENT.split(raw, maxsplit=1)[0].strip()  # "# ..." or " # ...": C# keeps its '#'
            if not line:
                continue
            verb, _, rest = line.partition(":")
            verb = verb.strip().casefold()
            sep = {"split": "|", "merge": "="}.get(verb)
            if sep is None or rest.count(sep) != 1:
                raise InputError(f"{where}:{i}: expected 'split: NAME | NAME' or 'merge: NAME = NAME', "
                                 f"got {raw.strip()!r}")
            a, b = (canonical_key(x.strip()) for x in rest.split(sep))
            if not a or not b or a == b:
                raise InputError(f"{where}:{i}: two different names are needed, got {raw.strip()!r}")
            (splits if verb == "split" else merges).append((a, b, i))
        return cls(tuple(splits), tuple(merges), text)

    @classmethod
    def read(cls, path: str | Path) -> Overrides:
        p = Path(path)
        try:
            text = p.read_text(encoding="utf-8-sig")
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError(f"{p}: cannot read the overrides file ({exc.__class__.__name__}: {exc})") from None
        return cls.parse(text, str(p))

    def merge_lines(self, name: str = "the overrides file") -> list[tuple[str, str, str]]:
        return [(a, b, f"merged by {name}, line {line}") for a, b, line in self.merges]

    def split_pairs(self) -> set[frozenset[str]]:
        return {frozenset((a, b)) for a, b, _ in self.splits}


OVERRIDES_FILE = "overrides.txt"  # a store's overrides, beside its extraction log


def store_overrides(folder: str | Path) -> Overrides | None:
    """The overrides a store keeps in ``folder`` (``kg build --overrides FILE`` puts them there), or None."""
    p = Path(folder) / OVERRIDES_FILE
    return Overrides.read(p) if p.is_file() else None


def keep_overrides(folder: str | Path, overrides: Overrides) -> None:
    """Keep ``overrides`` in the store folder ``folder`` for every later build (written atomically)."""
    p = Path(folder) / OVERRIDES_FILE
    tmp = p.with_name(p.name + ".tmp")
    tmp.write_text(overrides.source, encoding="utf-8")
    tmp.replace(p)


@lru_cache(maxsize=1)
def known_names() -> Overrides:
    """Joins no rule can make ("MS COCO" is COCO): ``kg/data/known_names.txt``, as an overrides file."""
    return Overrides.parse(resources.files("kg.data").joinpath("known_names.txt").read_text(encoding="utf-8"),
                           "kg/data/known_names.txt")


# -- the resolver ------------------------------------------------------------------------------------------------
class _Clusters:
    """Union-find over canonical keys, with keys that must stay apart."""

    def __init__(self, apart: set[frozenset[str]]) -> None:
        self.parent: dict[str, str] = {}
        self.members: dict[str, set[str]] = {}
        self.apart = apart
        self.apart_keys = {k for pair in apart for k in pair}

    def find(self, k: str) -> str:
        p = self.parent.get(k)
        if p is None:
            return k
        root = k
        while self.parent.get(root, root) != root:
            root = self.parent[root]
        while self.parent.get(k, k) != root:  # path compression
            self.parent[k], k = root, self.parent[k]
        return root

    def union(self, a: str, b: str) -> bool:
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return True
        ma, mb = self.members.get(ra, {ra}), self.members.get(rb, {rb})
        if self._apart(ma, mb):
            return False
        if (len(ma), ra) < (len(mb), rb):
            ra, rb, ma, mb = rb, ra, mb, ma
        self.parent.setdefault(ra, ra)
        self.parent[rb] = ra
        if ra in self.members:
            ma |= mb
        else:
            self.members[ra] = ma | mb
        self.members.pop(rb, None)
        return True

    def same_apart(self, a: str, b: str) -> bool:
        """True when ``a`` may not join ``b``'s node (an override keeps them apart)."""
        ra, rb = self.find(a), self.find(b)
        return self._apart(self.members.get(ra, {ra}), self.members.get(rb, {rb}))

    def _apart(self, ma: set[str], mb: set[str]) -> bool:
        """True when an override keeps some key of ``ma`` from some key of ``mb``."""
        return bool(self.apart_keys) and any(frozenset((x, y)) in self.apart for x in ma & self.apart_keys
                                             for y in mb & self.apart_keys)


@dataclass(slots=True)
class _Meaning:
    papers: list[str] = field(default_factory=list)  # ids of the corpus papers that define it so (sorted)
    known: int = 0  # kg-gold abstracts that define it so
    context: Counter[str] = field(default_factory=Counter)  # the defining papers' other keys


@dataclass(frozen=True, slots=True)
class Resolved:
    """A mention's node key, and why its form joined that node (empty when the form is the node's own name)."""

    key: str
    why: str = ""


AMBIGUOUS_SHARE = 0.1  # a second meaning held by at least this share of a short form's definitions (and 2 papers)
CONTEXT_MIN = 4.0  # the IDF-weighted overlap a context needs to decide between meanings
CONTEXT_MARGIN = 2.0  # ... and by how many times it must beat the next meaning


def _real(ms: list[tuple[str, _Meaning]]) -> list[tuple[str, _Meaning]]:
    """The meanings that are not one-off misreadings: held by 2 papers (or kg-gold abstracts) and at least
    AMBIGUOUS_SHARE of the short form's definitions; the first meaning always."""
    total = sum(len(m.papers) + m.known for _, m in ms)
    return [(k, m) for i, (k, m) in enumerate(ms)
            if i == 0 or (len(m.papers) + m.known >= 2 and len(m.papers) + m.known >= AMBIGUOUS_SHARE * total)]


class Resolver:
    """Maps every mention of a corpus to its node key. Built from all papers (``(id, extraction)`` pairs) in one
    pass; ``resolve`` then answers per paper."""

    def __init__(self, papers: Iterable[tuple[str, Extraction]], overrides: Overrides | None = None, *,
                 known: Mapping[ShortKey, Counter[str]] | None = None) -> None:
        self.overrides = overrides or Overrides()
        known = known_short_forms() if known is None else known
        key_count: Counter[str] = Counter()
        df: Counter[str] = Counter()
        defs: dict[ShortKey, dict[str, _Meaning]] = defaultdict(dict)
        self.n_papers = 0
        self.written: dict[ShortKey, str] = {}  # each short form as first written ("GPT-4" for ("gpt4", "GPT"))
        styled: dict[str, set[str]] = defaultdict(set)  # one-word names written as words ("Llama"), by letters
        compound: set[str] = set()  # names with a short form inside ("Wasserstein GAN")
        worded: set[str] = set()  # keys some paper writes as a lower-case word
        for pid, ext in papers:
            self.n_papers += 1
            local = self._local(ext)
            keys = set()
            for m in _plain(ext.entities):
                k = canonical_key(m.short_form_of) if m.short_form_of else canonical_key(m.text)
                if not k:
                    continue
                key_count[k] += 1
                keys.add(k)
                if not m.short_form_of and " " not in m.text and not looks_like_acronym(m.text):
                    if m.text[:1].isupper():  # "Llama" for LLaMA
                        styled[letters(m.text).casefold()].add(k)
                    elif m.text.islower():  # "rope", "palm": a word, so the key is no name of its own
                        worded.add(k)
                if not m.short_form_of and _is_compound(m.text):
                    compound.add(" ".join(m.text.split()))
            for k in local.values():
                key_count[k] += 0  # a long form is a key even when no mention spells it out
            df.update(keys)
            compound.update(" ".join(lf.split()) for _, lf in ext.abbreviations if _is_compound(lf))
            for short, _ in ext.abbreviations:
                self.written.setdefault(short_key(short), _PLURAL.sub("", short))
            for sk, lk in local.items():
                meaning = defs[sk].setdefault(lk, _Meaning())
                meaning.papers.append(pid)
                meaning.context.update(keys - {lk, sk[0]})
        for sk, longs in known.items():
            for lk, n in longs.items():
                defs[sk].setdefault(lk, _Meaning()).known += n
                key_count[lk] += 0
        self.df = df

        # Clusters: spelling variants, then the overrides' merges.
        self.clusters = _Clusters(self.overrides.split_pairs())
        self.why_joined: dict[str, str] = {}
        merges = known_names().merge_lines("kg's known names") + self.overrides.merge_lines()
        for a, b, _ in merges:  # an override's names join their spelling variants first ("MSCOCO" with "MS COCO")
            key_count[a] += 0
            key_count[b] += 0
        for pair in self.overrides.split_pairs():
            for k in pair:
                key_count[k] += 0
        by_variant: dict[str, list[str]] = defaultdict(list)
        for k in sorted(key_count):
            v = variant_key(k)
            if len(v) >= 4:
                by_variant[v].append(k)
        for group in by_variant.values():
            for k in group[1:]:
                if self.clusters.union(group[0], k):
                    self.why_joined.setdefault(k, "spelling variant")
                    self.why_joined.setdefault(group[0], "spelling variant")
        # "seq2seq" is "sequence to sequence" (a 2 for "to", each side a prefix of its word).
        to_pairs: dict[tuple[str, str], list[str]] = defaultdict(list)
        for k in sorted(key_count):
            w = k.split()
            if len(w) == 3 and w[1] == "to":
                to_pairs[w[0][:2], w[2][:2]].append(k)
        for k in sorted(key_count):
            m2 = _TWO.match(k)
            if m2:
                for other in to_pairs.get((m2[1][:2], m2[2][:2]), ()):
                    a, _, b = other.split()
                    if a.startswith(m2[1]) and b.startswith(m2[2]) and self.clusters.union(other, k):
                        self.why_joined.setdefault(k, "spelling variant")
        for a, b, why in merges:
            if self.clusters.union(a, b):
                self.why_joined[a] = self.why_joined[b] = why
        # Short forms: their meanings (by node). A longer wording of a short form's first meaning ("large
        # pre-trained language models (LLMs)", "Long Short Term Memory Network (LSTM)") is that meaning, and a
        # versioned name written as a short form ("GPT-4", "LLaMA 2") is the thing its one definition spells out.
        self._key_count = key_count
        self._styled = {sk[1].casefold(): styled[sk[1].casefold()] - worded for sk in defs
                        if sk[1] != sk[1].upper() and sk[1] != sk[1].lower() and sk[1].casefold() in styled}
        self._set_reps()
        self._join(self._meanings(defs), defs)
        self._index_short()
        # A name with a short form inside ("Wasserstein GAN", "KL-divergence", "multimodal LLMs") is the name with
        # it spelled out, wherever the short form has one meaning.
        spelled = []
        for text in sorted(compound):
            k = canonical_key(text)
            x = self._spelled(text, {}, set())
            if x and x != k:
                spelled.append((k, x, "short form inside the name spelled out"))
        self._join(spelled, defs)
        for ms in self.meanings.values():  # only a short form with several meanings reads its context
            if len(_real(ms)) < 2:
                for _, meaning in ms:
                    meaning.context = Counter()

    def _join(self, joins: list[tuple[str, str, str]], defs: Mapping[ShortKey, Mapping[str, _Meaning]]) -> None:
        """Join each (key, key, why); when any joined, the nodes' keys and the short forms' meanings again."""
        for a, b, why in joins:
            if self.clusters.union(a, b):
                self.why_joined.setdefault(a, why)
        if joins:
            self._set_reps()
            self._meanings(defs)
            self._index_short()

    def _index_short(self) -> None:
        self.by_lower: dict[tuple[str, str], list[ShortKey]] = defaultdict(list)
        for sk in sorted(self.meanings):
            self.by_lower[sk[0], sk[1].casefold()].append(sk)

    def _spelled(self, text: str, local: dict[ShortKey, str], keys: set[str]) -> str | None:
        """The key of ``text`` with its short forms spelled out ("multimodal LLMs" -> "multimodal large language
        model"), or None when none has a meaning here."""
        parts, expanded = [], False
        for w in _PARTS.split(text):
            r = self._short(short_key(w), local, keys) if looks_like_acronym(w) else None
            parts.append(r.key if r is not None else w)
            expanded |= r is not None
        if not expanded:
            return None
        # "POS tagging" with POS = part-of-speech tagging: one "tagging"
        words = canonical_key(" ".join(parts)).split()
        return " ".join(w for i, w in enumerate(words) if i == 0 or w != words[i - 1])

    def _set_reps(self) -> None:
        """Each cluster's key: its most used form."""
        self.rep: dict[str, str] = {}
        for root, members in self.clusters.members.items():
            self.rep[root] = min(members, key=lambda k: (-self._key_count[k], len(k), k))

    def _meanings(self, defs: Mapping[ShortKey, Mapping[str, _Meaning]]) -> list[tuple[str, str, str]]:
        """Set each short form's meanings, most defined first; return the joins they call for."""
        self.meanings: dict[ShortKey, list[tuple[str, _Meaning]]] = {}
        self.folded: dict[tuple[ShortKey, str], str] = {}  # (short form, a wording's node) -> the meaning it is
        joins = []
        for sk, longs in sorted(defs.items()):
            merged: dict[str, _Meaning] = {}
            for lk, m in sorted(longs.items()):
                into = merged.setdefault(self.node(lk), _Meaning())
                into.papers.extend(m.papers)
                into.known += m.known
                into.context.update(m.context)
            ranked = sorted(merged.items(), key=lambda kv: (-(len(kv[1].papers) + kv[1].known), kv[0]))
            main_key, main = ranked[0]
            kept = [ranked[0]]
            for k, m in ranked[1:]:
                if _holds(k, main_key) or _cut(k, main_key) or _near(k, main_key) or _typed(k, main_key):
                    self.folded[sk, k] = main_key
                    # The wording itself joins only when it is a one-off; "deep learning models", used on its own
                    # in many papers, stays a node though one paper defines DL so.
                    if self.df.get(k, 0) <= 2 or not _typed(k, main_key):
                        joins.append((k, main_key, f"a longer wording of {main_key}, the meaning of {sk[1]}"))
                    main.papers.extend(m.papers)
                    main.known += m.known
                    main.context.update(m.context)
                else:
                    kept.append((k, m))
            main.papers.sort()
            self.meanings[sk] = kept
            if any(c.isdigit() for c in sk[0]):
                # A versioned name ("GPT-4V", "Llama-2") is one thing with the one thing its papers spell out;
                # a short form that papers spell out as two things ("S2S": speech-to-speech, sequence-to-sequence)
                # joins neither.
                if len(_real(kept)) == 1 and main.papers:
                    joins.append((main_key, sk[0], f"what {self.written.get(sk, sk[1])} stands for, defined in "
                                                   f"{main.papers[0]}"))
            elif len(_real(kept)) == 1 and main.papers and sk[0] in self._styled.get(sk[1].casefold(), ()):
                # A short form styled as a word ("LLaMA", "LoRA") and also written as one ("Llama"): one name.
                joins.append((sk[0], main_key, f"the name {self.written.get(sk, sk[1])} stands for, defined in "
                                               f"{main.papers[0]}"))
        return joins

    @staticmethod
    def _local(ext: Extraction) -> dict[ShortKey, str]:
        out = {}
        for s, lf in ext.abbreviations:
            sk, lk = short_key(s), canonical_key(lf)
            if sk[0] and lk and sk[0] != lk:
                out[sk] = lk
        return out

    def node(self, key: str) -> str:
        """The node key of a canonical key (its cluster's most used full form)."""
        return self.rep.get(self.clusters.find(key), key)

    def _meanings_of(self, sk: ShortKey) -> list[tuple[str, _Meaning]]:
        """The meanings of a short form that are not one-off misreadings: held by 2 papers (or kg-gold abstracts)
        and at least AMBIGUOUS_SHARE of its definitions, the first meaning always."""
        ms = self.meanings.get(sk)
        if not ms:
            # "IOU" is "IoU" in capitals when IoU's small letters are function words (intersection over union).
            for other in self.by_lower.get((sk[0], sk[1].casefold()), ()):
                if other != sk and any(_case_only_function_words(other[1], k) for k, _ in self.meanings[other][:1]):
                    ms = self.meanings[other]
                    break
            if not ms:
                return []
        return _real(ms)

    def _by_context(self, meanings: list[tuple[str, _Meaning]], keys: set[str]) -> tuple[str, list[str]] | None:
        scores = []
        for k, m in meanings:
            shared = [x for x in keys if x in m.context]
            score = sum(math.log(self.n_papers / self.df[x]) for x in shared if self.df[x])
            scores.append((score, k, sorted(shared, key=lambda x: (self.df[x], x))))
        scores.sort(key=lambda s: (-s[0], s[1]))
        best = scores[0]
        second = scores[1][0] if len(scores) > 1 else 0.0
        if best[0] >= CONTEXT_MIN and best[0] >= CONTEXT_MARGIN * second:
            return best[1], best[2]
        return None

    def _short(self, sk: ShortKey, local: dict[ShortKey, str], keys: set[str]) -> Resolved | None:
        """The node a short form names in this paper, or None (it stays its own)."""
        lk = local.get(sk)
        if lk:
            node = self.node(lk)
            return Resolved(self.folded.get((sk, node), node), "short form defined in this paper")
        meanings = self._meanings_of(sk)
        if not meanings:
            return None
        if len(meanings) == 1:
            k, m = meanings[0]
            if m.papers:
                n = len(m.papers)
                return Resolved(k, f"short form defined in {n} paper{'s' * (n != 1)} (first {m.papers[0]})")
            return Resolved(k, "known short form (kg-gold annotations)")
        # Several meanings ("MAP": maximum a posteriori, mean average precision): only the paper's context can tell.
        pick = self._by_context(meanings, keys - {sk[0]})
        if pick is None:
            return None
        k, shared = pick
        return Resolved(k, "short form with several meanings, read from its context (shares "
                           + ", ".join(shared[:3]) + ")")

    def resolve(self, ext: Extraction) -> Iterator[Resolved | None]:
        """Each mention's node key and the reason its form joined, in mention order (None: no key)."""
        local = self._local(ext)
        ents = _plain(ext.entities)
        keys = {canonical_key(m.short_form_of or m.text) for m in ents}
        for m in ents:
            yield self._mention(m, local, keys)

    def _mention(self, m: Mention, local: dict[ShortKey, str], keys: set[str]) -> Resolved | None:
        if m.short_form_of:
            k = canonical_key(m.short_form_of)
            own = canonical_key(m.text)
            if not k:
                return Resolved(self.node(own), self.why_joined.get(own, "")) if own else None
            if own and self.clusters.same_apart(own, k):
                return Resolved(self.node(own))
            node = self.node(k)
            return Resolved(self.folded.get((short_key(m.text), node), node), "short form defined in this paper")
        key = canonical_key(m.text)
        if not key:
            return None
        if looks_like_acronym(m.text):
            r = self._short(short_key(m.text), local, keys)
            if r is not None and not self.clusters.same_apart(key, r.key):
                return r
            return Resolved(self.node(key), self.why_joined.get(key, ""))
        if _NAME_WITH_DIGIT.match(m.text):
            # "gpt-4" or "Gpt4" is GPT-4 written in other letters: the short form of that key, when it is one.
            variants = self.by_lower.get((key, letters(m.text).casefold()), [])
            if len(variants) == 1:
                r = self._short(variants[0], local, keys)
                if r is not None and not self.clusters.same_apart(key, r.key):
                    return r
        if _is_compound(m.text):
            spelled = self._spelled(m.text, local, keys)
            if spelled and not self.clusters.same_apart(key, spelled):
                return Resolved(self.node(spelled), "short form inside the name spelled out")
        return Resolved(self.node(key), self.why_joined.get(key, ""))
