"""kg's training and model-building code, kept out of the runtime package ``kg``.

``kg`` only loads and applies the shipped models (JSON weights, a spaCy pipeline); everything that fits them lives
here and needs the ``[train]`` extra (scikit-learn; ``[teacher]`` for the MiniLM teacher):

- ``train_gold``: the shipped extraction model, every step (``python -m kg_train.train_gold --help``);
- ``train_ner``, ``teacher``, ``teacher_gold``: the NER and its MiniLM teacher;
- ``fit``: multinomial logistic regression fitted with scikit-learn, saved as the JSON ``kg.extract.linear`` reads;
- ``relations``, ``docrel``, ``spans``, ``proposed``, ``gazetteer``: each shipped classifier's examples and fit;
- ``arch``: the hybrid NER encoder of an earlier model, for ``train_ner --arch hybrid``.
"""
