"""kg: turn research-paper abstracts into a typed knowledge graph."""

__version__ = "0.1.0"
