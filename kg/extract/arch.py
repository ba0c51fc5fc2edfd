"""The trained NER's token encoder: the shared (frozen) en_core_web_sm tok2vec, plus a small trainable one.

Registered as ``kg.HybridTok2Vec.v1`` so the shipped pipeline (kg/extract/model/) can be loaded; import this
module before ``spacy.load`` of that path (kg.extract.pipeline does).
"""

from __future__ import annotations

from spacy.util import registry
from thinc.api import Model, concatenate


@registry.architectures("kg.HybridTok2Vec.v1")
def hybrid_tok2vec(shared: Model, own: Model) -> Model:
    """Concatenate a listener on the pipeline's shared tok2vec with an NER-owned tok2vec (lists of arrays)."""
    model = concatenate(shared, own)
    model.set_dim("nO", shared.get_dim("nO") + own.get_dim("nO"))
    return model
