"""Corpus-level entity resolution: one node per thing, never two things on one node, and why each form joined."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from kg.errors import InputError
from kg.extract.types import Extraction, Mention
from kg.graph import PaperInput, derive_graph
from kg.readers import PaperRecord
from kg.resolve import Overrides, Resolver, variant_key

NO_KNOWN: dict = {}


def paper(pid: str, *names: str, defs: tuple[tuple[str, str], ...] = (), proposed: tuple[str, ...] = (),
          ty: str = "method") -> tuple[str, Extraction]:
    """A paper that mentions ``names`` (one sentence) and defines ``defs`` ((short, long) pairs)."""
    text = ", ".join(names)
    ents, at = [], 0
    for n in names:
        ents.append(Mention(at, at + len(n), n, ty, proposed=n in proposed))
        at += len(n) + 2
    return pid, Extraction(entities=ents, sentences=[(0, len(text))], abbreviations=list(defs))


def nodes(papers: list[tuple[str, Extraction]], overrides: Overrides | None = None,
          known: dict | None = None) -> dict[tuple[str, str], str]:
    """(paper, form) -> node key."""
    r = Resolver(papers, overrides, known=NO_KNOWN if known is None else known)
    return {(pid, m.text): x.key for pid, ext in papers for m, x in zip(ext.entities, r.resolve(ext), strict=True)}


def test_spelling_variants_are_one_node_and_versions_never_are() -> None:
    ps = [paper("p1", "convolutional neural networks", "normalising flows", "auto-encoder", "MS COCO"),
          paper("p2", "convolutional networks", "normalizing flow", "autoencoders", "MSCOCO"),
          paper("p3", "neural nets", "neural networks", "generative adversarial nets",
                "generative adversarial networks"),
          paper("p4", "GPT-4", "GPT-4o", "CIFAR-10", "CIFAR-100", "ResNet-50", "ResNet-101", "Llama 2", "Llama 3"),
          paper("p5", "Bayesian networks", "Bayesian neural networks", "Q-learning", "deep Q-learning")]
    n = nodes(ps)
    assert n["p1", "convolutional neural networks"] == n["p2", "convolutional networks"]
    assert n["p1", "normalising flows"] == n["p2", "normalizing flow"]
    assert n["p1", "auto-encoder"] == n["p2", "autoencoders"]
    assert n["p1", "MS COCO"] == n["p2", "MSCOCO"]
    assert n["p3", "neural nets"] == n["p3", "neural networks"]
    assert n["p3", "generative adversarial nets"] == n["p3", "generative adversarial networks"]
    for a, b in [("GPT-4", "GPT-4o"), ("CIFAR-10", "CIFAR-100"), ("ResNet-50", "ResNet-101"), ("Llama 2", "Llama 3")]:
        assert n["p4", a] != n["p4", b], (a, b)
    assert n["p5", "Bayesian networks"] != n["p5", "Bayesian neural networks"]  # a graphical model, not a net
    assert n["p5", "Q-learning"] != n["p5", "deep Q-learning"]  # a term and its specialisation


def test_variant_key() -> None:
    assert variant_key("behaviour cloning") == variant_key("behavior cloning")
    assert variant_key("regularisation") == variant_key("regularization")
    assert variant_key("supervised learning") != variant_key("supervized learning")  # no British "-ised" there
    assert variant_key("noise") == "noise"


def test_a_short_form_defined_anywhere_joins_its_long_form_everywhere() -> None:
    ps = [paper("p1", "convolutional neural networks", "CNNs", defs=(("CNNs", "convolutional neural networks"),)),
          paper("p2", "CNN"), paper("p3", "CNN-based"), paper("p4", "IOU"),
          paper("p5", "intersection over union", "IoU", defs=(("IoU", "intersection over union"),))]
    n = nodes(ps)
    cnn = n["p1", "convolutional neural networks"]
    assert n["p1", "CNNs"] == n["p2", "CNN"] == cnn
    assert n["p4", "IOU"] == n["p5", "intersection over union"]  # IoU's small o is "over": IOU is the same


def test_an_ambiguous_short_form_goes_by_its_paper_its_context_or_stays_apart() -> None:
    rl = [paper(f"r{i}", "reinforcement learning", "RL", "policy gradient", "reward shaping", "Atari",
                defs=(("RL", "reinforcement learning"),)) for i in range(3)]
    rep = [paper(f"s{i}", "representation learning", "RL", "contrastive loss", "ImageNet",
                 defs=(("RL", "representation learning"),)) for i in range(3)]
    filler = [paper(f"f{i}", f"thing {i}") for i in range(30)]
    ps = rl + rep + filler + [paper("q1", "RL", "policy gradient", "reward shaping"), paper("q2", "RL", "ImageNet",
                                                                                            "contrastive loss"),
                              paper("q3", "RL", "something else")]
    n = nodes(ps)
    assert n["r0", "RL"] == n["r0", "reinforcement learning"] != n["s0", "RL"] == n["s0", "representation learning"]
    assert n["q1", "RL"] == n["r0", "reinforcement learning"]  # its context is reinforcement learning's
    assert n["q2", "RL"] == n["s0", "representation learning"]
    assert n["q3", "RL"] not in (n["r0", "RL"], n["s0", "RL"])  # no context: never a global guess


def test_a_short_form_with_one_meaning_joins_it_even_where_a_paper_seems_to_propose_it() -> None:
    # The paper that introduced SQuAD proposes it; the extractor also marks known names proposed by mistake.
    ps = [paper(f"s{i}", "Stanford Question Answering Dataset", "SQuAD",
                defs=(("SQuAD", "Stanford Question Answering Dataset"),)) for i in range(2)]
    ps += [paper("o1", "SQuAD", "reading comprehension", proposed=("SQuAD",))]
    n = nodes(ps)
    assert n["o1", "SQuAD"] == n["s0", "Stanford Question Answering Dataset"]


def test_same_letters_in_other_case_are_another_short_form() -> None:
    ps = [paper("p1", "Coding Concepts", "CoCo", defs=(("CoCo", "Coding Concepts"),)), paper("p2", "COCO")]
    n = nodes(ps)
    assert n["p2", "COCO"] != n["p1", "CoCo"]


def test_short_forms_learned_from_gold_resolve_without_a_definition_in_the_corpus() -> None:
    known = {("cnn", "CNN"): Counter({"convolutional neural network": 40})}
    n = nodes([paper("p1", "CNN"), paper("p2", "convolutional neural networks")], known=known)
    assert n["p1", "CNN"] == n["p2", "convolutional neural networks"]
    n = nodes([paper("p1", "CNN"), paper("p2", "convolutional neural networks")])
    assert n["p1", "CNN"] != n["p2", "convolutional neural networks"]


def test_names_with_a_short_form_inside_and_longer_wordings() -> None:
    ps = [paper("p1", "Wasserstein GAN", "WGAN", defs=(("WGAN", "Wasserstein GAN"),)),
          paper("p2", "generative adversarial networks", "GANs", defs=(("GANs", "generative adversarial networks"),)),
          paper("p3", "Wasserstein-GANs"),
          paper("p4", "large language models", "LLMs", defs=(("LLMs", "large language models"),)),
          paper("p5", "large language models", "LLMs", defs=(("LLMs", "large language models"),)),
          paper("p6", "large pre-trained language models", "LLMs",
                defs=(("LLMs", "large pre-trained language models"),)),
          paper("p7", "large decoder-only language models", "LLMs",
                defs=(("LLMs", "large decoder-only language models"),)),
          paper("p8", "seq2seq", "sequence-to-sequence"),
          paper("p9", "part-of-speech tagging", "POS", "POS tagging", defs=(("POS", "part-of-speech tagging"),))]
    n = nodes(ps)
    assert n["p1", "Wasserstein GAN"] == n["p3", "Wasserstein-GANs"] == n["p1", "WGAN"]
    assert n["p6", "large pre-trained language models"] == n["p4", "large language models"] == n["p6", "LLMs"]
    # a narrower thing under the same short form keeps its own node in its own paper
    assert n["p7", "large decoder-only language models"] != n["p4", "large language models"]
    assert n["p8", "seq2seq"] == n["p8", "sequence-to-sequence"]
    assert n["p9", "POS tagging"] == n["p9", "part-of-speech tagging"]


def test_overrides_split_and_merge(tmp_path: Path) -> None:
    ps = [paper("p1", "maximum a posteriori", "MAP", defs=(("MAP", "maximum a posteriori"),)),
          paper("p2", "MAP"), paper("p3", "behaviour cloning", "behavior cloning", "imitation learning")]
    ov = Overrides.parse("# ours\nsplit: MAP | maximum a posteriori\n\nmerge: imitation learning = behavior cloning\n"
                         "split: behaviour cloning | behavior cloning  # undo a spelling join\n")
    n = nodes(ps, ov)
    assert n["p2", "MAP"] != n["p1", "maximum a posteriori"] and n["p1", "MAP"] != n["p1", "maximum a posteriori"]
    assert n["p3", "imitation learning"] == n["p3", "behavior cloning"] != n["p3", "behaviour cloning"]
    assert Overrides.parse("merge: C# = CSharp  # a comment\n").merges == (("c#", "csharp", 1),)
    for bad in ("split: A", "merge: A = B = C", "join: A = B", "merge: LLMs = LLM"):
        with pytest.raises(InputError, match=r"overrides:1: "):
            Overrides.parse(bad)
    f = tmp_path / "o.txt"
    f.write_text("ok: x\n")
    with pytest.raises(InputError, match=r"o\.txt:1: expected"):
        Overrides.read(f)


def test_graph_nodes_name_their_most_common_full_form_and_say_why_each_form_joined() -> None:
    ps = [paper("p1", "convolutional neural networks", "CNNs", defs=(("CNNs", "convolutional neural networks"),)),
          paper("p2", "CNN"), paper("p3", "convolutional networks"), paper("p4", "convolutional neural networks"),
          paper("p5", "GPT-4"), paper("p6", "GPT-4"), paper("p7", "GPT-4"), paper("p8", "GPT-4"), paper("p9", "GPT-4"),
          paper("pa", "GPT-4", "Generative Pre-trained Transformer 4",
                defs=(("GPT-4", "Generative Pre-trained Transformer 4"),))]
    inputs = [PaperInput(PaperRecord(id=pid, title="t", abstract=", ".join(m.text for m in ext.entities)), ext)
              for pid, ext in ps]
    g = derive_graph(inputs)
    by_name = {d["name"]: d for _, d in g.nodes(data=True) if "aliases" in d}
    cnn = by_name["convolutional neural networks"]
    why = dict(zip(cnn["aliases"], cnn["alias_why"], strict=True))
    assert why["CNN"].startswith("short form defined in") and "p1" in why["CNN"]
    assert why["convolutional networks"] == "spelling variant"
    gpt = by_name["GPT-4"]  # a versioned name papers hardly spell out names its node
    assert dict(zip(gpt["aliases"], gpt["alias_why"], strict=True))["Generative Pre-trained Transformer 4"] == \
        "what GPT-4 stands for, defined in pa"
    # the same papers in another order give the same graph
    again = derive_graph(list(reversed(inputs)))
    assert sorted(g.nodes(data="alias_why")) == sorted(again.nodes(data="alias_why"))


def test_a_graph_without_related_edges() -> None:
    ps = [paper(f"p{i}", "topic modelling", f"thing {i}") for i in range(12)]
    inputs = [PaperInput(PaperRecord(id=pid, title="t", abstract=", ".join(m.text for m in ext.entities)), ext)
              for pid, ext in ps]
    g = derive_graph(inputs, related_k=0)
    assert not [e for e in g.edges(data="type") if e[2] == "RELATED_TO"] and len(g) > 12


def _jsonl(path: Path, rows: list[dict]) -> Path:
    import json

    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_an_incremental_build_re_resolves_and_keeps_its_overrides(tmp_path: Path, extractor) -> None:
    import subprocess
    import sys

    from kg.build import build
    from kg.store.embedded import EmbeddedStore

    a = _jsonl(tmp_path / "a.jsonl", [{"id": "a1", "title": "Pruning", "abstract": "We prune a CNN trained on "
                                       "CIFAR-10 and keep its accuracy with fewer filters."}])
    b = _jsonl(tmp_path / "b.jsonl", [{"id": "b1", "title": "Vision", "abstract": "Convolutional neural networks "
                                       "(CNNs) are evaluated on CIFAR-100 for image classification."}])
    store = tmp_path / "s"

    def node_of(name: str, pid: str) -> str:
        s = EmbeddedStore(store)
        return next(e.entity.id for es in s.get_paper(pid).entities.values() for e in es
                    if name in (e.entity.name, *s.get_entity(e.entity.id).aliases))

    with EmbeddedStore(store, writable=True) as s:
        build([a], s, extractor=lambda: extractor, on_skip=lambda x: None, overrides=Overrides())
    alone = node_of("CNN", "a1")
    with EmbeddedStore(store, writable=True) as s:
        build([b], s, extractor=lambda: extractor, on_skip=lambda x: None)
    joined = node_of("CNN", "a1")
    assert joined != alone and joined == node_of("Convolutional neural networks", "b1")
    detail = EmbeddedStore(store).get_entity(joined)
    assert {f.form: f.why for f in detail.forms}["CNN"].startswith("short form defined in")

    (tmp_path / "o.txt").write_text("split: CNN | convolutional neural networks\n")
    with EmbeddedStore(store, writable=True) as s:
        build([a], s, extractor=lambda: extractor, on_skip=lambda x: None,
              overrides=Overrides.read(tmp_path / "o.txt"))
    assert node_of("CNN", "a1") != node_of("Convolutional neural networks", "b1")
    with EmbeddedStore(store, writable=True) as s:  # a later build without the file keeps the store's overrides
        build([b], s, extractor=lambda: extractor, on_skip=lambda x: None)
    assert node_of("CNN", "a1") != node_of("Convolutional neural networks", "b1")

    # A bad overrides file: one line naming the file and line, and the store as it was.
    before = (store / "overrides.txt").read_text()
    (tmp_path / "bad.txt").write_text("split: CNN | convolutional neural networks\nmerge CNN and RNN\n")
    r = subprocess.run([sys.executable, "-m", "kg", "build", str(a), "--store-dir", str(store), "--overrides",
                        str(tmp_path / "bad.txt")], capture_output=True, text=True, timeout=300)
    assert r.returncode != 0 and "bad.txt:2:" in r.stderr and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    assert (store / "overrides.txt").read_text() == before


def test_markdown_emphasis_never_enters_a_name() -> None:
    ps = [paper("p1", "d**i**ffusion inf**l**uence", "diffusion influence", "LL**M**-based")]
    inputs = [PaperInput(PaperRecord(id=pid, title="t", abstract=", ".join(m.text for m in ext.entities)), ext)
              for pid, ext in ps]
    g = derive_graph(inputs, related_k=0)
    names = {d["name"] for _, d in g.nodes(data=True) if "aliases" in d}
    forms = {a for _, d in g.nodes(data=True) if "aliases" in d for a in d["aliases"]}
    assert "diffusion influence" in names and "LLM-based" in names
    assert not any("*" in x for x in names | forms)


def test_review_findings_stay_fixed(tmp_path: Path) -> None:
    # a versioned short form spelled out as two things joins neither
    ps = [paper(f"s{i}", "speech to speech translation", "S2S", defs=(("S2S", "speech to speech translation"),))
          for i in range(3)]
    ps += [paper("q1", "sequence to sequence", "S2S", defs=(("S2S", "sequence to sequence"),)),
           paper("q2", "sequence to sequence"), paper("q3", "sequence to sequence")]
    # a short form styled as a word joins its capitalised spelling, not a lower-case word
    ps += [paper(f"r{i}", "rotary position embedding", "RoPE", defs=(("RoPE", "rotary position embedding"),))
           for i in range(2)]
    ps += [paper("w1", "rope", "knot tying"), paper("w2", "Rope"),
           paper("l1", "LLaMA", "large language model meta ai", defs=(("LLaMA", "Large Language Model Meta AI"),)),
           paper("l2", "Llama")]
    # sizes across a space stay apart; an override reaches the other spellings of its names
    ps += [paper("v1", "Llama 2 7B", "Llama 27B", "MSCOCO", "COCO")]
    n = nodes(ps)
    assert n["s0", "speech to speech translation"] != n["q1", "sequence to sequence"]
    assert n["q2", "sequence to sequence"] == n["q1", "sequence to sequence"]
    assert n["w1", "rope"] != n["r0", "rotary position embedding"] != n["w2", "Rope"]
    assert n["l2", "Llama"] == n["l1", "LLaMA"]
    at = [paper(f"a{i}", "adversarial training", "AT", defs=(("AT", "adversarial training"),)) for i in range(3)]
    at += [paper("b1", "adversarially trained", "AT", defs=(("AT", "adversarially trained"),)),
           paper("b2", "adversarially trained"), paper("c1", "AT")]
    m = nodes(at)  # two wordings of one meaning: AT alone is not ambiguous
    assert m["c1", "AT"] == m["a0", "adversarial training"] == m["b1", "AT"]
    assert n["v1", "Llama 2 7B"] != n["v1", "Llama 27B"]
    assert n["v1", "MSCOCO"] == n["v1", "COCO"]  # kg's known names say "merge: MS COCO = COCO"
    f = tmp_path / "bom.txt"
    f.write_text("\ufeffsplit: MSCOCO | COCO\n", encoding="utf-8")
    assert nodes(ps, Overrides.read(f))["v1", "MSCOCO"] != n["v1", "COCO"]
