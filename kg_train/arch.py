"""``kg.HybridTok2Vec.v1``: a listener on the shared (frozen) en_core_web_sm tok2vec beside an NER-owned encoder.

The encoder of the earlier shipped NER, kept for ``scripts/train_ner.py --arch hybrid`` (the comparison in its
docstring) and for loading pipelines trained that way; the shipped NER now has a plain encoder of its own.
Import this module before ``spacy.load`` of such a pipeline (kg.extract.pipeline does).
"""

from __future__ import annotations

from spacy.util import registry
from thinc.api import Model, concatenate


@registry.architectures("kg.HybridTok2Vec.v1")
def hybrid_tok2vec(shared: Model, own: Model) -> Model:
    """Concatenate a listener on the pipeline's shared tok2vec with an NER-owned tok2vec (lists of arrays)."""
    model: Model = concatenate(shared, own)  # concatenate returns Model[InT, ...], InT bound by no argument
    model.set_dim("nO", shared.get_dim("nO") + own.get_dim("nO"))
    return model
