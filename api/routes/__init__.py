"""One APIRouter per resource; ``api.main`` includes them."""
