"""`kg extract IN.jsonl -o OUT.jsonl`: the extraction contract (entities, relations and reported results), one
output line per input line, same order."""

from __future__ import annotations

from collections.abc import Iterator
from typing import IO

import click
import orjson

from kg.cli.main import prepare_output
from kg.errors import InputError


def _inputs(fh: IO[bytes], name: str) -> Iterator[tuple[object, str, str | None]]:
    for n, raw in enumerate(fh, 1):
        if not raw.strip():
            continue
        try:
            obj = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            raise InputError(f"{name}:{n}: malformed JSON ({str(exc).split(':')[0]})") from None
        if not isinstance(obj, dict) or "id" not in obj:
            raise InputError(f"{name}:{n}: expected an object with 'id' and 'text'")
        text = obj.get("text")
        if not isinstance(text, str):
            raise InputError(f"{name}:{n}: field 'text' is not a string")
        title = obj.get("title")
        if title is not None and not isinstance(title, str):
            raise InputError(f"{name}:{n}: field 'title' is not a string")
        yield obj["id"], text, title


@click.command()
@click.argument("input_file", type=click.File("rb"))
@click.option("-o", "--output", type=click.Path(allow_dash=True), default="-", show_default=True,
              help="Output JSONL; its folders are made.")
def extract(input_file: IO[bytes], output: str) -> None:
    """Extract entities, relations and reported results from {"id", "text"} lines (an optional "title" too).

    Each output line is {"id", "entities": [{"start", "end", "text", "type"}], "relations": [{"head", "tail",
    "type"}], "results": [{"value", "kind", "system", "dataset", "metric"}]}; offsets are Python string offsets
    into text (end exclusive); head/tail index into entities. A result's value is the number as written ("92.3%"),
    its kind "score" (a level reached) or "gain" (a difference or ratio), and system, dataset and metric the texts
    naming them as written in text, or null when it does not say (the kg-gold results schema).
    """
    from kg.extract.pipeline import Extractor

    name = getattr(input_file, "name", "<stdin>")
    items = list(_inputs(input_file, name))  # validate everything before writing anything
    prepare_output(output)  # and a path that cannot be written fails now, not after the model has loaded
    ex = Extractor()
    with click.open_file(output, "wb") as out:
        for (doc_id, text, _), x in zip(items, ex.extract_many((t for _, t, _ in items), (h for _, _, h in items)),
                                        strict=True):
            out.write(orjson.dumps(x.to_contract(doc_id, text)) + b"\n")
        out.flush()
    if output != "-":
        click.echo(f"kg: {len(items)} texts extracted to {output}", err=True)
