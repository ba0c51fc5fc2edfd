"""`kg eval`: extraction quality on kg-gold dev (score.py's figures), then SciERC/SciER, beside baselines."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

import click
import orjson

from kg.errors import InputError

if TYPE_CHECKING:
    from kg.evaluate import Runner
    from kg.extract.pipeline import Extractor
    from kg.extract.types import Extraction

ALL_DATASETS = ("kg-gold", "kg-gold-results", "scierc", "scier")
_GOLD_ROWS = [("method", "  method"), ("model", "  model"), ("dataset", "  dataset"), ("task", "  task"),
              ("metric", "  metric"), ("concept", "  concept"), ("untyped", "untyped"),
              ("typed_mm", "typed, method=model"), ("relations", "relations"), ("proposed", "proposed"),
              ("typed", "typed")]


@click.command("eval")
@click.option("--data-dir", type=click.Path(file_okay=False), default="../shared/data/eval", show_default=True,
              envvar="KG_EVAL_DIR", help="Directory holding kg-gold/dev.jsonl, scierc/dev.json, scier/dev.jsonl.")
@click.option("--dataset", "datasets", multiple=True, type=click.Choice(ALL_DATASETS),
              help="Evaluate on this dataset only (repeatable); default all three.")
@click.option("--limit", type=int, default=None, help="Only the first N documents of each dataset.")
@click.option("--model", "model", type=click.Path(file_okay=False, exists=True), default=None,
              help="A trained pipeline directory to evaluate instead of the shipped kg/extract/model.")
@click.option("--previous", type=click.Path(file_okay=False, exists=True), default=None,
              help="The previous model's directory, run beside the shipped one (else its recorded kg-gold figures).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts.")
def eval_cmd(data_dir: str, datasets: tuple[str, ...], limit: int | None, model: str | None,
             previous: str | None, as_json: bool) -> None:
    """Extraction quality per type, for each extractor side by side.

    kg-gold dev first: node-level P/R/F1 exactly as its score.py computes them (typed, method=model, untyped, per
    type, relations) plus the precision and recall of `proposed`. Columns: the shipped extractor (trained model
    and rule layer), the previous model (trained-10; its recorded figures unless --previous loads it), the trained
    model alone (no rule layer), the rule-only extractor and the noun-chunk baseline. SciERC and SciER follow,
    strict span+type.
    """
    from kg.extract.pipeline import DEFAULT_MODEL, RULES_MODEL, Extractor, ExtractorConfig, load_nlp

    rules_nlp = load_nlp(RULES_MODEL)
    trained_path = model or (DEFAULT_MODEL if DEFAULT_MODEL != RULES_MODEL else None)
    default_is_trained = DEFAULT_MODEL != RULES_MODEL and (model is None or Path(model).resolve() == Path(
        DEFAULT_MODEL).resolve())
    extractors: dict[str, Runner | None] = {}  # None: the previous model's recorded figures
    if trained_path:
        trained = Extractor(load_nlp(trained_path))
        extractors["shipped" if default_is_trained else "model"] = _runner(trained)
        if previous:
            prev = Extractor(load_nlp(previous))
            extractors["previous"] = _runner(prev)
        else:
            extractors["previous"] = None  # recorded figures, kg-gold only
        alone = Extractor(trained.nlp, config=ExtractorConfig(rule_layer=False))
        extractors["trained alone"] = _runner(alone)
    rules = Extractor(rules_nlp)
    extractors["rules" + ("" if default_is_trained else " (default)")] = _runner(rules)
    from kg.evaluate import noun_chunk_baseline

    extractors["noun-chunk baseline"] = noun_chunk_baseline(rules_nlp)
    report: dict[str, dict] = {}
    evals = {"kg-gold": _eval_gold, "kg-gold-results": _eval_results}
    for name in datasets or ALL_DATASETS:
        report[name] = evals.get(name, _eval_span)(Path(data_dir), name, extractors, limit)
    if as_json:
        click.echo(orjson.dumps(report, option=orjson.OPT_INDENT_2).decode())
        return
    prints = {"kg-gold": _print_gold, "kg-gold-results": _print_results}
    for name, by_ex in report.items():
        prints.get(name, _print_span)(name, by_ex)


def _runner(ex: Extractor) -> Runner:
    return lambda texts, titles=None: list(ex.extract_many(texts, titles))


def _timed(run: Runner, texts: list[str],
           titles: list[str | None] | None = None) -> tuple[list[Extraction], dict[str, float]]:
    words = sum(len(t.split()) for t in texts)
    t0 = time.perf_counter()
    preds = run(texts) if titles is None else run(texts, titles)
    secs = time.perf_counter() - t0
    return preds, {"seconds": round(secs, 2), "words_per_s": round(words / secs) if secs else 0}


def _eval_gold(data_dir: Path, name: str, extractors: dict[str, Runner | None],
               limit: int | None) -> dict[str, dict]:
    from kg.evaluate_gold import load_gold, prediction_rows, recorded, score_rows

    path = data_dir / "kg-gold" / "dev.jsonl"
    if not path.exists():
        raise InputError(f"{path}: gold data not found (set --data-dir)")
    gold = load_gold(path)[:limit]
    texts = [g["text"] for g in gold]
    titles = [g.get("title") for g in gold]  # a "Name: ..." title marks the paper's contribution, as in kg build
    out: dict[str, dict] = {}
    for ex_name, run in extractors.items():
        if run is not None:
            preds, timing = _timed(run, texts, titles)
            out[ex_name] = score_rows(gold, prediction_rows(gold, preds)) | timing
    rec = recorded("trained-10")
    n_gold = next(iter(out.values()))["typed"]["gold"] if out else None
    if "previous" in extractors and extractors["previous"] is None and rec and rec["typed"]["gold"] == n_gold:
        # recorded on the full dev split: shown only when this run scores the same gold entities
        names = list(out)
        out["previous (trained-10, recorded)"] = rec
        out = {k: out[k] for k in names[:1] + ["previous (trained-10, recorded)"] + names[1:]}
    return out


def _eval_results(data_dir: Path, name: str, extractors: dict[str, Runner | None],
                  limit: int | None) -> dict[str, dict]:
    """kg-gold results dev: the shipped (or --model) extractor's results, and the baseline over the rule-only
    extractor's mentions (kg.evaluate_results); the rule-only extractor runs en_core_web_sm, the speed reference."""
    from kg.evaluate_gold import load_gold
    from kg.evaluate_results import baseline_results, score_results

    path = data_dir / "kg-gold-results" / "dev.jsonl"
    if not path.exists():
        raise InputError(f"{path}: gold data not found (set --data-dir)")
    gold = load_gold(path)[:limit]
    texts = [g["text"] for g in gold]
    out: dict[str, dict] = {}
    for ex_name, run in extractors.items():
        if run is None or ex_name in ("trained alone", "noun-chunk baseline", "previous"):
            continue
        preds, timing = _timed(run, texts)
        if ex_name.startswith("rules"):
            ex_name = "baseline (en_core_web_sm)"
            rows = [[r.texts(t) for r in baseline_results(t, x)] for t, x in zip(texts, preds, strict=True)]
        else:
            rows = [[r.texts(t) for r in x.results] for t, x in zip(texts, preds, strict=True)]
        out[ex_name] = score_results(gold, rows) | timing
    return out


def _eval_span(data_dir: Path, name: str, extractors: dict[str, Runner | None],
               limit: int | None) -> dict[str, dict]:
    from kg.evaluate import DATASETS, score

    rel, loader, type_map = DATASETS[name]
    path = data_dir / rel
    if not path.exists():
        raise InputError(f"{path}: gold data not found (set --data-dir)")
    docs = list(loader(path))[:limit]
    texts = [d.text for d in docs]
    out: dict[str, dict] = {}
    for ex_name, run in extractors.items():
        if run is None:
            continue
        preds, timing = _timed(run, texts)
        out[ex_name] = {k: v.as_dict() for k, v in score(docs, preds, type_map).items()} | timing
    return out


def _cell(s: dict | None) -> str:
    return f"{s['f1']:.1f} ({s['p']:.1f}/{s['r']:.1f})" if s else "-"


def _print_gold(name: str, by_ex: dict[str, dict]) -> None:
    ex_names = list(by_ex)
    width = max(26, *(len(e) + 2 for e in ex_names))
    n = next(iter(by_ex.values()))["typed"]["gold"] if by_ex else 0
    click.secho(f"\nkg-gold dev — node-level F1 (P/R), as score.py; {n} gold entities", bold=True)
    click.echo(f"{'':<22}" + "".join(f"{e:>{width}}" for e in ex_names))
    for k, label in _GOLD_ROWS:
        click.echo(f"{label:<22}" + "".join(f"{_cell(by_ex[e].get(k)):>{width}}" for e in ex_names))
    click.echo(f"{'entities output':<22}" + "".join(f"{by_ex[e]['typed']['pred']:>{width}}" for e in ex_names))
    click.echo(f"{'words/s':<22}" + "".join(f"{by_ex[e]['words_per_s']:>{width}}" for e in ex_names))


def _print_results(name: str, by_ex: dict[str, dict]) -> None:
    ex_names = list(by_ex)
    width = max(26, *(len(e) + 2 for e in ex_names))
    n = next(iter(by_ex.values()))["value"]["gold"] if by_ex else 0
    click.secho(f"\nkg-gold results dev — reported results, F1 (P/R), as score_results.py; {n} gold results",
                bold=True)
    click.echo(f"{'':<22}" + "".join(f"{e:>{width}}" for e in ex_names))
    for level in ("value", "value+kind", "value+dataset", "full"):
        click.echo(f"{level:<22}" + "".join(f"{_cell(by_ex[e].get(level)):>{width}}" for e in ex_names))
    click.echo(f"{'results output':<22}" + "".join(f"{by_ex[e]['value']['pred']:>{width}}" for e in ex_names))
    click.echo(f"{'words/s':<22}" + "".join(f"{by_ex[e]['words_per_s']:>{width}}" for e in ex_names))


def _print_span(name: str, by_ex: dict[str, dict]) -> None:
    width = 26
    click.secho(f"\n{name} dev — strict span+type, micro F1 (P/R)", bold=True)
    ex_names = list(by_ex)
    keys = ["ALL"] + sorted(k for k in next(iter(by_ex.values()))
                            if k not in ("ALL", "REL", "REL_SET_ASIDE", "seconds", "words_per_s"))
    if any(by_ex[e]["REL"]["tp"] + by_ex[e]["REL"]["fn"] for e in ex_names):
        keys.append("REL")
    click.echo(f"{'type':<22}" + "".join(f"{e:>{width}}" for e in ex_names))
    for k in keys:
        click.echo(f"{('relations' if k == 'REL' else k):<22}" + "".join(
            f"{_cell(by_ex[e].get(k)):>{width}}" for e in ex_names))
    click.echo(f"{'words/s':<22}" + "".join(f"{by_ex[e]['words_per_s']:>{width}}" for e in ex_names))
    aside = next(iter(by_ex.values()))["REL_SET_ASIDE"]["fn"]
    if aside:
        click.echo(f"({aside} gold relations with a Generic argument are not scored, as Generic entities are not)")
