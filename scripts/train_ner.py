"""`python scripts/train_ner.py` runs kg_train.train_ner: training code, kept out of the runtime package (its docstring
says what it does; `pip install -e '.[train]'` brings what it needs)."""

from kg_train.train_ner import main

if __name__ == "__main__":
    main()
