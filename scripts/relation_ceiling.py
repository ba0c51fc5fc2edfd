"""`python scripts/relation_ceiling.py` runs kg_train.relation_ceiling: how far the relation steps get when the
entities are right (see its docstring)."""

from kg_train.relation_ceiling import main

if __name__ == "__main__":
    main()
