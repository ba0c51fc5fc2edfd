"""bench/graph_report.py on tiny stores: counts per paper and type, names ranked by papers, the README's queries."""

import importlib.util
import json
import re
from pathlib import Path

import pytest

from kg.build import build
from kg.extract.types import Extraction, Mention
from kg.store.embedded import EmbeddedStore

ROOT = Path(__file__).resolve().parents[2]
NAMES = {"CIFAR-10": "dataset", "ImageNet": "dataset", "ResNet-50": "model", "MixUp": "method"}


def _load():
    spec = importlib.util.spec_from_file_location("graph_report", ROOT / "bench" / "graph_report.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


gr = _load()


class NameExtractor:
    """Every occurrence of a name in NAMES, typed as NAMES says: a graph known in advance, no spaCy."""

    def extract_many(self, texts, titles=None):
        for text in texts:
            ms = [Mention(m.start(), m.end(), m.group(), NAMES[m.group()])
                  for m in re.finditer("|".join(map(re.escape, NAMES)), text)]
            yield Extraction(entities=ms, sentences=[(0, len(text))])


ABSTRACTS = [  # ImageNet has the most mentions, CIFAR-10 the most papers
    "We train ResNet-50 with MixUp on CIFAR-10.",
    "MixUp helps on CIFAR-10 and on ImageNet; ImageNet, ImageNet and ImageNet again.",
    "Results on CIFAR-10 only.",
]
README = """Datasets:

```cypher
MATCH (d:Dataset)<-[:EVALUATES_ON]-(p:Paper) RETURN d.name AS dataset, count(p) AS papers
ORDER BY papers DESC, dataset
```

<!-- docs:query1 -->
(the answer make docs writes)
<!-- /docs:query1 -->
"""


def _store(tmp_path: Path, name: str, abstracts: list[str]) -> EmbeddedStore:
    src = tmp_path / f"{name}.jsonl"
    src.write_text("".join(json.dumps({"id": f"{name}{i}", "title": f"Paper {i}", "abstract": a}) + "\n"
                           for i, a in enumerate(abstracts)), encoding="utf-8")
    with EmbeddedStore(tmp_path / name, writable=True) as store:
        build([src], store, extractor=NameExtractor, on_skip=lambda s: None)
    return EmbeddedStore(tmp_path / name)


@pytest.fixture()
def readme(tmp_path: Path) -> Path:
    (tmp_path / "neo4j.md").write_text(README, encoding="utf-8")
    return tmp_path / "neo4j.md"


def test_counts_per_paper_and_type_and_ranking_by_papers(tmp_path: Path, readme: Path) -> None:
    r = gr.collect(_store(tmp_path, "a", ABSTRACTS), docs=readme, rows=1)
    assert (r["papers"], r["entities"]) == (3, 4)
    assert r["linked_per_paper"] == pytest.approx(7 / 3)  # 3 + 3 + 1 distinct entities
    assert r["types"]["dataset"] == (2, pytest.approx(4 / 3))
    assert r["types"]["concept"] == (0, 0)
    assert r["top"]["Dataset"] == [("CIFAR-10", 3), ("ImageNet", 1)]  # papers, not mentions
    assert r["top"]["Method"] == [("MixUp", 2)]
    q = r["queries"]["query1"]
    assert q["query"].startswith("MATCH (d:Dataset)") and "\n" not in q["query"]
    assert (q["rows"], q["total"]) == ([["CIFAR-10", 3]], 2)


def test_two_stores_side_by_side(tmp_path: Path, readme: Path) -> None:
    a = gr.collect(_store(tmp_path, "a", ABSTRACTS), docs=readme)
    b = gr.collect(_store(tmp_path, "b", ABSTRACTS[2:]), docs=readme)
    text = gr.render([("before", a), ("after", b)])
    assert "| papers | 3 | 1 |" in text
    assert "| dataset | 2 | 1.33 | 1 | 1.00 |" in text
    assert "| 2 | ImageNet | 1 |  |  |" in text  # the shorter list leaves its cells empty
    assert "**before** (2 rows)" in text and "**after** (1 row)" in text


def test_cells_escape_pipes_and_cut_long_text() -> None:
    assert gr._cell("a|b") == "a\\|b"
    assert gr._cell("x" * 80).endswith("…") and len(gr._cell("x" * 80)) == 60
    assert gr._cell(["mutual information", "A paper"]) == "mutual information – A paper"


def test_cli_one_line_for_a_missing_store(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert gr.main([str(tmp_path / "nope")]) == 1
    assert capsys.readouterr().err.strip() == f"graph_report: {tmp_path / 'nope'}: no such store folder"
