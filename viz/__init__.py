"""Interactive HTML views of the knowledge graph that work offline: overview, paper, entity, trends, landscape,
search."""

from viz.explore import RenderedPage, landscape_view, search_view, trends_view
from viz.render import RenderedView, entity_view, overview_view, paper_view, render

__all__ = ["RenderedPage", "RenderedView", "entity_view", "landscape_view", "overview_view", "paper_view", "render",
           "search_view", "trends_view"]
