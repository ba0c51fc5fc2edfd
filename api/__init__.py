"""The kg HTTP API: a FastAPI app over a read-only store; build one with ``api.main.create_app``."""
