"""Interactive HTML views of the knowledge graph that work offline: overview, paper and entity."""

from viz.render import RenderedView, entity_view, overview_view, paper_view, render

__all__ = ["RenderedView", "entity_view", "overview_view", "paper_view", "render"]
