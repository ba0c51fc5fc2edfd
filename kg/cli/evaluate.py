"""`kg eval`: extraction quality on the gold dev splits, the default extractor beside baselines."""

from __future__ import annotations

import time
from pathlib import Path

import click
import orjson

from kg.errors import InputError


@click.command("eval")
@click.option("--data-dir", type=click.Path(file_okay=False), default="../shared/data/eval", show_default=True,
              envvar="KG_EVAL_DIR", help="Directory holding scierc/dev.json and scier/dev.jsonl.")
@click.option("--dataset", "datasets", multiple=True, type=click.Choice(["scierc", "scier"]),
              help="Evaluate on this dataset only (repeatable); default both.")
@click.option("--limit", type=int, default=None, help="Only the first N documents of each dataset.")
@click.option("--model", "model", type=click.Path(file_okay=False, exists=True), default=None,
              help="A trained pipeline directory to evaluate instead of the shipped kg/extract/model.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts.")
def eval_cmd(data_dir: str, datasets: tuple[str, ...], limit: int | None, model: str | None, as_json: bool) -> None:
    """Strict (exact span and type) micro P/R/F1 per type, for each extractor side by side.

    Columns: the trained model with the rule layer (the default extractor when the model ships), the trained
    model alone (its NER spans and relation classifier, no rule layer: the rule layer's gain is the difference),
    the rule-only extractor (en_core_web_sm without NER) and the noun-chunk baseline.
    """
    from kg.evaluate import DATASETS, noun_chunk_baseline, score
    from kg.extract.pipeline import DEFAULT_MODEL, RULES_MODEL, Extractor, load_nlp

    rules_nlp = load_nlp(RULES_MODEL)
    trained_path = model or (DEFAULT_MODEL if DEFAULT_MODEL != RULES_MODEL else None)
    default_is_trained = DEFAULT_MODEL != RULES_MODEL and (model is None or Path(model).resolve() == Path(
        DEFAULT_MODEL).resolve())
    extractors = {}
    if trained_path:
        trained = Extractor(load_nlp(trained_path))
        extractors["trained+rules" + (" (default)" if default_is_trained else "")] = (
            lambda texts: list(trained.extract_many(texts)))
        alone = Extractor(trained.nlp)
        alone.rule_layer = False
        extractors["trained alone"] = lambda texts: list(alone.extract_many(texts))
    rules = Extractor(rules_nlp)
    extractors["rules" + ("" if default_is_trained else " (default)")] = lambda texts: list(rules.extract_many(texts))
    extractors["noun-chunk baseline"] = noun_chunk_baseline(rules_nlp)
    report: dict[str, dict] = {}
    for name in datasets or tuple(DATASETS):
        rel, loader, type_map = DATASETS[name]
        path = Path(data_dir) / rel
        if not path.exists():
            raise InputError(f"{path}: gold data not found (set --data-dir)")
        docs = list(loader(path))[:limit]
        texts = [d.text for d in docs]
        words = sum(len(t.split()) for t in texts)
        report[name] = {}
        for ex_name, run in extractors.items():
            t0 = time.perf_counter()
            preds = run(texts)
            secs = time.perf_counter() - t0
            scores = score(docs, preds, type_map)
            report[name][ex_name] = {k: v.as_dict() for k, v in scores.items()} | {
                "seconds": round(secs, 2), "words_per_s": round(words / secs) if secs else 0}
    if as_json:
        click.echo(orjson.dumps(report, option=orjson.OPT_INDENT_2).decode())
        return
    width = 26
    for name, by_ex in report.items():
        click.secho(f"\n{name} dev — strict span+type, micro F1 (P/R)", bold=True)
        ex_names = list(by_ex)
        keys = ["ALL"] + sorted(k for k in next(iter(by_ex.values()))
                                if k not in ("ALL", "REL", "REL_SET_ASIDE", "seconds", "words_per_s"))
        if any(by_ex[e]["REL"]["tp"] + by_ex[e]["REL"]["fn"] for e in ex_names):
            keys.append("REL")
        click.echo(f"{'type':<22}" + "".join(f"{e:>{width}}" for e in ex_names))
        for k in keys:
            row = f"{('relations' if k == 'REL' else k):<22}"
            for e in ex_names:
                s = by_ex[e].get(k)
                cell = f"{s['f1']:.1f} ({s['p']:.1f}/{s['r']:.1f})" if s else "-"
                row += f"{cell:>{width}}"
            click.echo(row)
        click.echo(f"{'words/s':<22}" + "".join(f"{by_ex[e]['words_per_s']:>{width}}" for e in ex_names))
        aside = next(iter(by_ex.values()))["REL_SET_ASIDE"]["fn"]
        if aside:
            click.echo(f"({aside} gold relations with a Generic argument are not scored, as Generic entities are not)")
