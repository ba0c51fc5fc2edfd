"""Reported results (issue 34): candidate values, the Result contract and store form, kg's scorer against the
reference score_results.py, the baseline, the shipped extractor on plain sentences, kg extract and kg eval."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import orjson
import pytest
from click.testing import CliRunner

from kg.cli import cli
from kg.evaluate_results import LEVELS, baseline_results, score_results
from kg.extract.results import never_a_result, number_of, value_spans
from kg.extract.types import RESULT_KINDS, Extraction, Mention, Result

GOLD_DIR = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "eval" / "kg-gold-results"
SCORE_RESULTS_PY = GOLD_DIR / "score_results.py"
needs_shared = pytest.mark.skipif(not SCORE_RESULTS_PY.exists(),
                                  reason="../shared/data/eval/kg-gold-results not beside the checkout")
CLEAR = "We propose FooNet. FooNet achieves 92.3% accuracy on ImageNet, improving over the baseline by 4.5%."
NO_NUMBERS = "We study how language models solve arithmetic problems without any training."


def _values(text: str) -> list[str]:
    return [text[s:e] for s, e in value_spans(text)]


# ---- candidate values ----------------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "value"), [
    ("reaches 92.3% accuracy", "92.3%"), ("is 3.2× faster", "3.2×"), ("is 7x faster", "7x"),
    ("with 1,024 tokens", "1,024"), ("an AUC of .85 overall", ".85"), ("gains of 57-92% over", "92%"),
    ("gains of 57-92% over", "57"), ("an F1 of 85.4.", "85.4"), ("reaches 92.3 % accuracy", "92.3 %")])
def test_value_spans_finds_numbers_as_written(text: str, value: str) -> None:
    assert value in _values(text)
    for s, e in value_spans(text):
        assert text[s:e].strip() == text[s:e] and any(c.isdigit() for c in text[s:e])


@pytest.mark.parametrize("text", ["GPT-4", "ResNet-50", "7B", "3D", "Llama-3-8B", "F1", "v2.1", "BERT_2"])
def test_value_spans_skips_numbers_inside_names(text: str) -> None:
    assert _values(f"We compare {text} with others.") == []
    assert _values(text) == []


def test_value_spans_in_a_sentence() -> None:
    text = "GPT-4 and Llama-3-8B reach 92.3% and .85 F1 on 3D scenes, 3.2× faster with 1,024 tokens in 2023."
    assert _values(text) == ["92.3%", ".85", "3.2×", "1,024", "2023"]


@pytest.mark.parametrize(("text", "number"), [
    ("92.3%", 92.3), ("92.3 %", 92.3), ("1,024", 1024.0), ("12,345.6", 12345.6), ("3.2×", 3.2), ("7x", 7.0),
    (".85", 0.85), ("+4.5%", 4.5), ("2", 2.0), ("no number", None), ("", None)])
def test_number_of(text: str, number: float | None) -> None:
    assert number_of(text) == number


# ---- the Result contract and its store form ------------------------------------------------------------------

def test_result_texts_are_the_gold_schema() -> None:
    text = "FooNet achieves 92.3% accuracy on ImageNet."
    r = Result(16, 21, "score", 0, system=(0, 6), dataset=(34, 42), metric=(22, 30))
    assert r.texts(text) == {"value": "92.3%", "kind": "score", "system": "FooNet", "dataset": "ImageNet",
                             "metric": "accuracy"}
    bare = Result(16, 21, "gain")
    assert bare.texts(text) == {"value": "92.3%", "kind": "gain", "system": None, "dataset": None, "metric": None}


def test_result_store_round_trip() -> None:
    rs = [Result(16, 21, "score", 2, system=(0, 6), dataset=(34, 42), metric=(22, 30)),
          Result(50, 54, "gain", 3, system=None, dataset=(34, 42), metric=None), Result(1, 2, "score")]
    for r in rs:
        row = r.to_store()
        assert Result.from_store(row) == r
        assert Result.from_store(orjson.loads(orjson.dumps(row))) == r  # as the store keeps it: JSON lists


def test_extraction_store_round_trip_and_an_old_row_without_results() -> None:
    x = Extraction(entities=[Mention(0, 6, "FooNet", "method", 0, True)], sentences=[(0, 43)],
                   results=[Result(16, 21, "score", 0, system=(0, 6))])
    data = orjson.loads(orjson.dumps(x.to_store()))
    assert Extraction.from_store(data) == x
    old = {k: v for k, v in data.items() if k != "v"}  # a store written before results
    back = Extraction.from_store(old)
    assert back.results == [] and back.entities == x.entities and back.sentences == x.sentences


def test_to_contract_adds_results_only_given_the_text() -> None:
    text = "FooNet achieves 92.3% accuracy on ImageNet."
    x = Extraction(entities=[Mention(0, 6, "FooNet", "method")], results=[Result(16, 21, "score", 0, (0, 6))])
    assert set(x.to_contract("a")) == {"id", "entities", "relations"}
    line = x.to_contract("a", text)
    assert line["results"] == [{"value": "92.3%", "kind": "score", "system": "FooNet", "dataset": None,
                                "metric": None}]
    assert Extraction().to_contract(1, "")["results"] == []


# ---- the baseline --------------------------------------------------------------------------------------------

def test_baseline_results() -> None:
    text = ("We propose FooNet. FooNet achieves 92.3% accuracy on ImageNet, improving by 4.5%. "
            "It is 3.2× faster than BarNet. About 40% of the data is noisy. We train for 10 epochs.")
    starts = [0] + [i + 2 for i in range(len(text)) if text.startswith(". ", i)]
    sents = [(s, e - 1) for s, e in zip(starts, [*starts[1:], len(text) + 1], strict=True)]

    def m(word: str, ty: str, proposed: bool = False, nth: int = 0) -> Mention:
        s = -1
        for _ in range(nth + 1):
            s = text.index(word, s + 1)
        return Mention(s, s + len(word), word, ty, next(i for i, (a, b) in enumerate(sents) if a <= s < b),
                       proposed)

    x = Extraction(entities=[m("FooNet", "method", True), m("FooNet", "method", True, 1), m("accuracy", "metric"),
                             m("ImageNet", "dataset"), m("BarNet", "method")], sentences=sents)
    got = [r.texts(text) for r in baseline_results(text, x)]
    assert got == [
        {"value": "92.3%", "kind": "score", "system": "FooNet", "dataset": "ImageNet", "metric": "accuracy"},
        {"value": "4.5%", "kind": "gain", "system": "FooNet", "dataset": "ImageNet", "metric": "accuracy"},
        {"value": "3.2×", "kind": "gain", "system": "FooNet", "dataset": None, "metric": None}]
    assert [r.sent for r in baseline_results(text, x)] == [1, 1, 2]
    assert baseline_results(NO_NUMBERS, Extraction(sentences=[(0, len(NO_NUMBERS))])) == []


# ---- kg's scorer against the reference score_results.py ------------------------------------------------------

def _reference() -> ModuleType:
    spec = importlib.util.spec_from_file_location("score_results_reference", SCORE_RESULTS_PY)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _res(value: str, kind: str = "score", system: str | None = None, dataset: str | None = None,
         metric: str | None = None) -> dict[str, Any]:
    return {"value": value, "kind": kind, "system": system, "dataset": dataset, "metric": metric}


# abstracts as (gold results, predicted results): number-only matches, the sign ignored, keys (case, dashes,
# plurals), null only with null, one-to-one matching, predictions with no gold and gold with no prediction
CASES: list[tuple[list[dict[str, Any]], list[dict[str, Any]]]] = [
    ([_res("92.3%", "score", "FooNet", "ImageNet", "accuracy"),
      _res("4.5%", "gain", "FooNet", "ImageNet", "accuracy")],
     [_res("92.3", "score", "foonet", "imagenet", "Accuracy"),
      _res("4.5%", "score", "FooNet", "ImageNet", "accuracy")]),
    ([_res("3.2×", "gain", "Flash-Attn", None, "speed")],
     [_res("3.2x", "gain", "flash attn", None, "speed"), _res("3.2×", "gain", "Flash-Attn", None, "speed")]),
    ([_res("85.4", "score", None, "SQuAD", "F1 scores"), _res("85.4", "score", "BERT", "SQuAD", "F1")],
     [_res("85.4", "score", None, "SQuAD", "F1 score")]),
    ([_res("1,5", "score", "X", "Natural Questions", "EM")],
     [_res("1.5", "score", "X", "Natural-Questions", None), _res("7", "score")]),
    ([], [_res("2023", "score", "Y")]),
    ([_res("57", "gain"), _res("92%", "gain")], []),
    ([_res(".85", "score", "Z", "CIFAR-10", "AUC")], [_res("0.85", "score", "Z", "CIFAR10", "AUC")]),
]


def _compare(gold: list[dict[str, Any]], pred: list[list[dict[str, Any]]]) -> dict[str, dict[str, float | int]]:
    ref = _reference().score({str(i): g for i, g in enumerate(gold)},
                             {str(i): {"id": str(i), "results": p} for i, p in enumerate(pred)})
    ours = score_results(gold, pred)
    assert set(ours) == set(ref) == set(LEVELS)
    for level, (p, r, f1, ng, npred) in ref.items():
        assert ours[level] == {"p": round(p, 1), "r": round(r, 1), "f1": round(f1, 1), "gold": ng, "pred": npred}
    return ours


@needs_shared
def test_score_results_matches_the_reference_on_cases() -> None:
    gold = [{"id": str(i), "results": g} for i, (g, _) in enumerate(CASES)]
    s = _compare(gold, [p for _, p in CASES])
    assert s["value"]["gold"] == s["value"]["pred"] == 9
    assert s["value"]["f1"] > s["value+kind"]["f1"] > s["full"]["f1"] > 0  # the levels do differ here


@needs_shared
def test_score_results_matches_the_reference_on_dev_perturbed() -> None:
    gold = [json.loads(line) for line in (GOLD_DIR / "dev.jsonl").read_text(encoding="utf-8").splitlines()]
    pred = []
    n = 0
    for g in gold:
        rows = []
        for r in g.get("results", []):
            n += 1
            if n % 7 == 0:
                continue  # missed
            r = dict(r)
            if n % 5 == 0:
                r["kind"] = "gain" if r["kind"] == "score" else "score"
            if n % 4 == 0:
                r["dataset"] = None if r.get("dataset") else "ImageNet"
            if n % 3 == 0 and r.get("system"):
                r["system"] = r["system"].upper()  # the key folds case: still a match
            if n % 11 == 0:
                r["metric"] = "accuracy"
            rows.append(r)
        if n % 6 == 0:
            rows.append(_res("12.5%"))  # a spurious one
        pred.append(rows)
    s = _compare(gold, pred)
    assert s["value"]["gold"] == n > 300


@needs_shared
def test_gold_against_itself_is_100_at_every_level() -> None:
    gold = [json.loads(line) for line in (GOLD_DIR / "dev.jsonl").read_text(encoding="utf-8").splitlines()]
    s = _compare(gold, [g.get("results", []) for g in gold])
    assert all(s[level]["f1"] == s[level]["p"] == s[level]["r"] == 100.0 for level in LEVELS)
    cases = [{"id": str(i), "results": g} for i, (g, _) in enumerate(CASES)]
    s = _compare(cases, [g for g, _ in CASES])
    assert all(s[level]["f1"] == 100.0 for level in LEVELS)


def test_score_results_with_nothing_predicted_or_nothing_to_find() -> None:
    gold = [{"id": "a", "results": [_res("1%")]}, {"id": "b", "results": []}]
    s = score_results(gold, [[], []])
    assert s["value"] == {"p": 0.0, "r": 0.0, "f1": 0.0, "gold": 1, "pred": 0}
    s = score_results([{"id": "b"}], [[_res("1%")]])
    assert s["full"] == {"p": 0.0, "r": 0.0, "f1": 0.0, "gold": 0, "pred": 1}


# ---- the shipped extractor -----------------------------------------------------------------------------------

def _found(extractor: Any, text: str) -> list[dict[str, Any]]:
    x = extractor.extract(text)
    for r in x.results:  # offsets into the text as given, sentence indexes into the extraction's sentences
        assert r.kind in RESULT_KINDS and 0 <= r.start < r.end <= len(text) and 0 <= r.sent < len(x.sentences)
        assert (r.start, r.end) in value_spans(text)
        ss, se = x.sentences[r.sent]
        assert ss <= r.start < se
        for span in (r.system, r.dataset, r.metric):
            assert span is None or 0 <= span[0] < span[1] <= len(text)
    return [r.texts(text) for r in x.results]


@pytest.mark.parametrize("text", [
    "Our model X achieves 92.3% accuracy on ImageNet, improving over the baseline by 4.5%.",
    CLEAR,
    "We propose GraphZip, a graph compression method. GraphZip achieves 92.3% accuracy on GSM8K, outperforming "
    "prior methods by 4.5%.",
])
def test_extractor_finds_a_score_and_a_gain(extractor: Any, text: str) -> None:
    found = {r["value"]: r for r in _found(extractor, text)}
    assert found["92.3%"]["kind"] == "score" and found["4.5%"]["kind"] == "gain"
    assert found["92.3%"]["metric"] == "accuracy"


def test_extractor_names_the_system_and_dataset_of_a_plain_sentence(extractor: Any) -> None:
    (r,) = [r for r in _found(extractor, CLEAR) if r["value"] == "92.3%"]
    assert (r["system"], r["dataset"]) == ("FooNet", "ImageNet")


@pytest.mark.parametrize("text", [NO_NUMBERS, "", "We compare GPT-4, ResNet-50 and Llama-3-8B on 3D scenes."])
def test_extractor_finds_no_results_without_numbers(extractor: Any, text: str) -> None:
    assert _found(extractor, text) == []


# ---- kg extract and kg eval ----------------------------------------------------------------------------------

def test_kg_extract_lines_carry_results(tmp_path: Path) -> None:
    src = tmp_path / "in.jsonl"
    texts = [CLEAR, NO_NUMBERS]
    src.write_text("".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in enumerate(texts)), encoding="utf-8")
    out = tmp_path / "out.jsonl"
    r = CliRunner().invoke(cli, ["extract", str(src), "-o", str(out)])
    assert r.exit_code == 0, r.output
    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [set(line) for line in lines] == [{"id", "entities", "relations", "results"}] * 2
    for line, text in zip(lines, texts, strict=True):
        for res in line["results"]:
            assert set(res) == {"value", "kind", "system", "dataset", "metric"} and res["kind"] in RESULT_KINDS
            assert all(res[k] is None or res[k] in text for k in ("value", "system", "dataset", "metric"))
    assert {"value": "92.3%", "kind": "score"}.items() <= next(
        res for res in lines[0]["results"] if res["value"] == "92.3%").items()
    assert lines[1]["results"] == []


@needs_shared
@pytest.mark.slow
def test_kg_eval_prints_the_four_levels_beside_the_baseline() -> None:
    res = CliRunner().invoke(cli, ["eval", "--dataset", "kg-gold-results", "--limit", "20",
                                   "--data-dir", str(GOLD_DIR.parent)])
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    assert any(line.startswith("kg-gold results dev") for line in lines), res.output
    header = next(line for line in lines if "baseline" in line)
    assert "shipped" in header and "baseline (en_core_web_sm)" in header
    for level in ("value", "value+kind", "value+dataset", "full", "results output", "words/s"):
        row = next((line for line in lines if line.split("  ")[0] == level), None)
        assert row is not None, level
        if level in LEVELS:
            assert len(row[22:].split(")")) == 3  # a cell per column: "F1 (P/R)" twice


@pytest.mark.parametrize(("text", "value", "never"), [
    ("an accuracy of 90.8 ± 2.5% (99% CI)", "2.5%", True),
    ("90.8pm 2.5% accuracy", "2.5%", True),  # "$\\pm 2.5$" once cleaned
    ("an accuracy of 90.8% (99% CI)", "99%", True),
    ("significant (p < 0.001)", "0.001", True),
    ("(P-RF<0.001, PAdaBoost<0.001)", "0.001", True),
    ("achieves 92.3% accuracy on GSM8K", "92.3%", False),
    ("improves accuracy by up to 4.5%", "4.5%", False),
])
def test_spreads_and_significance_levels_are_never_results(text: str, value: str, never: bool) -> None:
    s = text.index(value)
    assert never_a_result(text, s, s + len(value)) is never


@pytest.mark.parametrize(("text", "value", "kind"), [
    ("Our method incurs an accuracy drop of under 0.5% on ImageNet.", "0.5%", "gain"),
    ("The model shows an average accuracy loss of 0.90% on ImageNet.", "0.90%", "gain"),
    ("Training reaches an average loss of 0.1942 and 96% accuracy.", "0.1942", "score"),  # the loss reached
])
def test_a_drop_or_a_loss_in_percent_is_a_gain(extractor: Any, text: str, value: str, kind: str) -> None:
    kinds = {r.texts(text)["value"]: r.kind for r in extractor.extract(text).results}
    assert kinds.get(value) == kind


def _rows(text: str, spans: dict[str, str]) -> list[Any]:
    """Slot candidate rows (phrase, features, occurrence) for ``respective``: each name in ``spans`` at its first
    occurrence, typed as given."""
    from kg.extract.results import Phrase

    out = []
    for name, ty in spans.items():
        s = text.index(name)
        out.append((Phrase(name.lower(), [(s, s + len(name))], ty), [], (s, s + len(name))))
    return out


def test_respectively_pairs_the_kth_value_with_the_kth_dataset() -> None:
    from kg.extract.results import respective

    text = ("Evaluated on ALFWorld, ScienceWorld, and TravelPlanner, AutoRefine achieves 98.4%, 70.4%, and 27.1% "
            "respectively, with 20-73% step reductions.")
    rows = _rows(text, {"ALFWorld": "dataset", "ScienceWorld": "dataset", "TravelPlanner": "dataset",
                        "AutoRefine": "method"})
    values = value_spans(text)
    sent = (0, len(text))
    got = {text[s:e]: respective(text, sent, s, values, rows, ("dataset",)) for s, e in values}
    assert {v: text[sp[0]:sp[1]] for v, sp in got.items() if sp} == {
        "98.4%": "ALFWorld", "70.4%": "ScienceWorld", "27.1%": "TravelPlanner"}
    # no "respectively", or lists of different lengths: no say
    plain = text.replace(" respectively", "")
    assert all(respective(plain, (0, len(plain)), s, value_spans(plain), _rows(plain, {
        "ALFWorld": "dataset", "ScienceWorld": "dataset", "TravelPlanner": "dataset"}), ("dataset",)) is None
        for s, _ in value_spans(plain))
    two = "On ALFWorld and ScienceWorld it reaches 98.4%, 70.4% and 27.1%, respectively."
    assert respective(two, (0, len(two)), two.index("98.4"), value_spans(two),
                      _rows(two, {"ALFWorld": "dataset", "ScienceWorld": "dataset"}), ("dataset",)) is None


def test_extractor_reads_respectively_and_a_capitalised_dataset_word(extractor: Any) -> None:
    text = ("We evaluate Point-GN on two benchmark datasets, ModelNet40 and ScanObjectNN, achieving classification "
            "accuracies of 85.29% and 85.89%, respectively. On the Waymo Open Motion Dataset, WayNet reaches a "
            "minADE of 0.52.")
    found = {r["value"]: r for r in _found(extractor, text)}
    assert found["85.29%"]["dataset"] == "ModelNet40"
    assert found["85.89%"]["dataset"] == "ScanObjectNN"
    assert found["0.52"]["dataset"] == "Waymo Open Motion Dataset"


def test_a_dominant_phrase_is_kept_below_the_threshold(extractor: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every dataset phrase scored alike below the threshold: none is kept, unless one dominates (``dominant``)."""
    import math

    from kg.extract.results import ResultModel

    text = "FooNet achieves 92.3% accuracy on ImageNet."
    model = extractor.resmodel
    flat = {**model.slots["dataset"], "weights": {}, "bias": [math.log(0.3 / 0.7)]}  # P = 0.3 for every phrase
    base = {"value": model.value, "value_threshold": model.value_threshold, "known": model.known,
            "slots": {**model.slots, "dataset": flat}, "thresholds": {**model.thresholds, "dataset": 0.5},
            "null_mass": {**model.null_mass, "dataset": 0.0}, "min_share": {**model.min_share, "dataset": 0.0}}

    def dataset_with(dominant: dict[str, list[float]]) -> str | None:
        monkeypatch.setattr(extractor, "resmodel", ResultModel({**base, "dominant": dominant}))
        (r,) = [r for r in _found(extractor, text) if r["value"] == "92.3%"]
        return r["dataset"]

    assert dataset_with({}) is None
    assert dataset_with({"dataset": [0.2, 0.01]}) is not None  # kept: at least 0.2 and a share past 0.01
    assert dataset_with({"dataset": [0.4, 0.01]}) is None  # 0.3 is under the least probability
