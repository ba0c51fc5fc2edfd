"""Entity and relation extraction from abstracts."""
