"""`python scripts/train_gold.py` runs kg_train.train_gold: training code, kept out of the runtime package (see
its docstring; `pip install -e '.[train]'` brings what it needs)."""

from kg_train.train_gold import main

if __name__ == "__main__":
    main()
