"""Training the cross-sentence relation model (kg.extract.docrel) on train's gold entities and relations."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from kg.extract.docrel import NONE, candidate_pairs, entities, pair_features, sentence_words
from kg_train.fit import fit_softmax, save_model


def train_doc_relation_model(examples: list[tuple[list[str], str]], out: Path, *, seed: int = 0, C: float = 0.5,
                             min_count: int = 3, none_max: float = 0.5) -> None:
    """Fit on (features, label) pairs; needs scikit-learn."""
    y = [lab for _, lab in examples]
    data = fit_softmax([fs for fs, _ in examples], y, C=C, min_count=min_count, seed=seed) | {"none_max": none_max}
    save_model(data, out)
    print(f"doc relation model: {len(y)} pairs ({sum(lab != NONE for lab in y)} related), "
          f"{len(data['weights'])} features")

def gold_examples(doc: Any, mentions: Sequence[tuple[int, int, str, str, bool]],
                  gold: dict[tuple[str, str], str]) -> list[tuple[list[str], str]]:
    """Training pairs of one train abstract: gold ``mentions`` (start_char, end_char, type, entity id, proposed)
    and ``gold`` relations {(head id, tail id): type}."""
    ents, _ = entities(doc, mentions)
    sw = sentence_words(doc)
    out = []
    for i, j in candidate_pairs(ents):
        a, b = ents[i].key, ents[j].key
        lab = NONE
        if (a, b) in gold:
            lab = gold[(a, b)] + ">"
        elif (b, a) in gold:
            lab = gold[(b, a)] + ("<" if gold[(b, a)] != "COMPARED_WITH" else ">")
        out.append((pair_features(ents[i], ents[j], sw, len(sw)), lab))
    return out
