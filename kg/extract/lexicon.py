"""Word lists that type and filter candidate entities: known names, type-bearing head words, generic words."""

from __future__ import annotations

from kg.canon import canonical_key

ENTITY_TYPES = ("method", "model", "dataset", "task", "metric", "concept")

def _keyed(names: set[str]) -> frozenset[str]:
    """The names as canonical keys, so that a list written by hand matches what any spelling of a name gives."""
    return frozenset(canonical_key(n) for n in names)


# Well-known names, written as they are read ("cifar 10", "u-net") and matched on their canonical keys (`_keyed`).
KNOWN_DATASETS = _keyed({
    "mnist", "fashion mnist", "cifar 10", "cifar 100", "cifar", "imagenet", "imagenet 1k", "imagenet 21k",
    "tiny imagenet", "svhn", "celeba", "lsun", "coco", "ms coco", "mscoco", "pascal voc", "cityscapes", "ade20k",
    "kitti", "nuscenes", "waymo", "glue", "superglue", "squad", "squad 2.0", "mmlu", "gsm8k", "math", "humaneval",
    "mbpp", "big bench", "bigbench", "hellaswag", "arc", "truthfulqa", "winogrande", "piqa", "boolq", "triviaqa",
    "natural question", "hotpotqa", "wikitext", "wikitext 103", "penn treebank", "ptb", "c4", "the pile", "pile",
    "openwebtext", "laion", "laion 5b", "cc3m", "cc12m", "flickr30k", "vqa", "vqav2", "gqa", "textvqa", "mmmu",
    "mathvista", "librispeech", "commonvoice", "audioset", "kinetics", "ucf101", "hmdb51", "something something",
    "shapenet", "modelnet", "modelnet40", "scannet", "d4rl", "atari", "mujoco", "procgen", "minigrid", "webarena",
    "swe bench", "alpacaeval", "mt bench", "arena hard", "imdb", "sst 2", "sst", "ag news", "yelp", "amazon review",
    "movielens", "ogb", "cora", "citeseer", "pubmed", "reddit", "qm9", "zinc", "wmt", "wmt14", "wmt16", "iwslt",
    "xsum", "cnn dailymail", "cnn/dailymail", "sciq", "aime", "math500", "gpqa", "livecodebench", "codeforce",
    "fineweb", "redpajama", "dolma", "slimpajama", "ultrachat", "sharegpt", "alpaca", "dolly", "anthropic hh",
    "hh rlhf", "beavertail", "advbench", "harmbench", "jailbreakbench", "imagenet c", "imagenet r", "imagenet a",
    "imagenet sketch", "objectnet", "waterbird", "celeba hq", "ffhq", "afhq", "stl 10", "caltech 101", "oxford pet",
    "oxford flower", "food 101", "dtd", "eurosat", "sun397", "stanford car", "fgvc aircraft", "omniglot",
    "mini imagenet", "tiered imagenet", "meta dataset", "ptb xl", "mimic iii", "mimic iv", "uci",
})
KNOWN_MODELS = _keyed({
    "gpt", "gpt 2", "gpt 3", "gpt 3.5", "gpt 4", "gpt 4o", "gpt 4o mini", "gpt 5", "chatgpt", "o1", "o3", "o4 mini",
    "bert", "roberta", "albert", "distilbert", "electra", "deberta", "xlnet", "t5", "flan t5", "bart", "mt5",
    "llama", "llama 2", "llama 3", "llama 3.1", "llama 3.2", "llama 3.3", "llama 4", "alpaca", "vicuna", "mistral",
    "mixtral", "qwen", "qwen2", "qwen2.5", "qwen3", "qwen vl", "qwen2 vl", "qwen2.5 vl", "gemma", "gemma 2",
    "gemma 3", "gemini", "claude", "palm", "palm 2", "phi 2", "phi 3", "phi 4", "falcon", "bloom", "opt", "pythia",
    "olmo", "deepseek", "deepseek r1", "deepseek v3", "deepseek coder", "codellama", "starcoder", "yi", "internlm",
    "internvl", "llava", "blip", "blip 2", "flamingo", "clip", "siglip", "vit", "deit", "swin", "swin transformer",
    "resnet", "resnet 18", "resnet 34", "resnet 50", "resnet 101", "resnet 152", "vgg", "vgg 16", "vgg 19",
    "alexnet", "inception", "efficientnet", "mobilenet", "densenet", "convnext", "unet", "u-net", "yolo", "detr",
    "mask r-cnn", "faster r-cnn", "sam", "segment anything", "dino", "dinov2", "mae", "stable diffusion", "sdxl",
    "dall e", "dall e 2", "dall e 3", "imagen", "midjourney", "sora", "whisper", "wav2vec", "wav2vec 2.0", "hubert",
    "alphafold", "alphafold 2", "alphago", "alphazero", "muzero", "llada", "llada 8b", "dream", "dream 7b", "mdlm",
    "sedd", "word2vec", "glove", "elmo", "fasttext", "gcn", "gat", "graphsage", "gin", "pointnet", "nerf",
    "gaussian splatting", "3d gaussian splatting", "mamba", "rwkv", "retnet", "hyena", "s4",
})
KNOWN_METRICS = _keyed({
    "accuracy", "top 1 accuracy", "top 5 accuracy", "precision", "recall", "f1", "f1 score", "f score", "f measure",
    "bleu", "bleu score", "rouge", "rouge l", "meteor", "cider", "bertscore", "perplexity", "auc", "auroc", "auprc",
    "roc auc", "map", "mean average precision", "average precision", "iou", "miou", "mean iou", "dice",
    "dice score", "psnr", "ssim", "lpips", "fid", "frechet inception distance", "inception score", "is", "mse",
    "mean squared error", "mean square error", "rmse", "mae", "mean absolute error", "ndcg", "mrr", "hit rate",
    "exact match", "em", "pass@1", "pass@k", "word error rate", "wer", "cer", "character error rate", "error rate",
    "top 1 error", "success rate", "win rate", "latency", "throughput", "regret", "cumulative regret", "reward",
    "return", "sample complexity", "calibration error", "expected calibration error", "ece", "bits per dimension",
    "negative log likelihood", "nll", "log likelihood", "elbo", "kl divergence", "attack success rate", "asr",
    "spearman correlation", "pearson correlation", "kendall tau", "r2", "mape", "smape", "crps", "brier score",
    "equal error rate", "eer", "recall@k", "precision@k", "ap", "ap50", "ap75", "mota", "motp", "idf1", "fps",
    "frames per second", "flops", "v measure", "kullback leibler divergence",
})
KNOWN_TASKS = _keyed({
    "image classification", "object detection", "semantic segmentation", "instance segmentation",
    "panoptic segmentation", "machine translation", "question answering", "visual question answering",
    "text classification", "sentiment analysis", "named entity recognition", "summarization",
    "text summarization", "language modeling", "speech recognition", "image generation", "text generation",
    "code generation", "image captioning", "retrieval", "information retrieval", "recommendation",
    "link prediction", "node classification", "graph classification", "anomaly detection", "outlier detection",
    "time series forecasting", "forecasting", "pose estimation", "depth estimation", "optical flow estimation",
    "action recognition", "face recognition", "reasoning", "mathematical reasoning", "commonsense reasoning",
    "relation extraction", "entity linking", "dependency parsing", "parsing", "dialogue", "dialogue generation",
    "text to image generation", "video generation", "3d reconstruction", "novel view synthesis",
    "domain adaptation", "few shot learning", "zero shot learning", "continual learning", "clustering",
    "density estimation", "causal discovery", "program synthesis", "theorem proving", "planning",
    "motion planning", "navigation", "robotic manipulation", "out of distribution detection", "ood detection",
})
# Quantities and notions that are concepts whatever a tagger says in context (the NER calls "MI" a method).
KNOWN_CONCEPTS = _keyed({
    "mutual information", "conditional mutual information", "pointwise mutual information", "entropy",
    "conditional entropy", "cross entropy", "shannon entropy", "jensen shannon divergence", "wasserstein distance",
    "total variation distance", "fisher information", "lipschitz constant", "vc dimension", "rademacher complexity",
    "generalization error", "generalization gap",
})

# The known-name lists in the order they are tried: a string in two lists takes the first list's type.
KNOWN_BY_TYPE = (("dataset", KNOWN_DATASETS), ("model", KNOWN_MODELS), ("metric", KNOWN_METRICS),
                 ("task", KNOWN_TASKS), ("concept", KNOWN_CONCEPTS))

# Method and architecture acronyms that are names even when the NER passes over them (the rule layer does not add
# other bare capitals such as "RGB" or "SOTA"). Used to admit a token, not to type it.
KNOWN_ACRONYMS = {
    "cnn", "rnn", "lstm", "bilstm", "gru", "mlp", "gan", "vae", "gnn", "gat", "svm", "knn", "pca", "ica", "lda",
    "hmm", "crf", "mcmc", "sgd", "em", "ppo", "dqn", "trpo", "sac", "rlhf", "dpo", "grpo", "ddpm", "ddim", "nerf",
    "lora", "moe", "rag", "cot", "bm25", "tf idf", "word2vec", "resnet", "vgg", "yolo", "unet", "bpe",
}

# Head words that give a noun phrase its type ("the CIFAR-10 dataset", "a diffusion model").
DATASET_HEADS = {"dataset", "datasets", "data set", "benchmark", "benchmarks", "corpus", "corpora", "suite", "testbed"}
MODEL_HEADS = {"model", "llm", "lm", "lrm", "vlm", "mllm", "lvlm", "transformer", "network", "net", "encoder",
               "decoder", "classifier", "agent", "policy", "backbone", "checkpoint"}
METHOD_HEADS = {
    "method", "approach", "algorithm", "framework", "technique", "estimator", "optimizer", "mechanism", "strategy",
    "scheme", "procedure", "architecture", "learning", "regularization", "attention", "distillation", "decoding",
    "sampling", "training", "fine tuning", "finetuning", "pruning", "quantization", "descent", "search", "filter",
    "filtering", "embedding", "pipeline", "loss", "objective", "protocol", "attack", "defense", "prompting",
    "module", "layer", "kernel", "operator", "sampler", "solver", "heuristic", "initialization", "normalization",
    "augmentation", "alignment", "tuning", "adaptation", "inference", "retrieval augmented generation", "rlhf",
    "optimization", "minimization", "maximization", "decomposition", "factorization", "regression", "boosting",
    "ensemble", "dropout", "bottleneck", "test", "analysis", "model merging", "merging", "distance", "encoding",
    "bound", "gradient", "process", "chain", "transform", "transformation", "projection", "partitioning",
}
TASK_HEADS = {
    "task", "classification", "detection", "segmentation", "recognition", "generation", "translation",
    "summarization", "answering", "reasoning", "prediction", "forecasting", "parsing", "tagging", "captioning",
    "localization", "tracking", "reconstruction", "planning", "completion", "synthesis", "understanding",
    "extraction", "retrieval", "recommendation", "discovery", "identification", "estimation", "modeling",
    "modelling", "control", "navigation", "manipulation", "editing", "matching", "verification", "clustering",
    "inpainting", "denoising", "restoration", "super resolution", "compression", "problem-solving", "solving",
    "unlearning", "attribution", "interpretability", "explanation", "prevention", "diagnosis", "screening",
}
METRIC_HEADS = {"accuracy", "precision", "recall", "score", "error", "rate", "perplexity", "f1", "auc", "metric",
                "metrics", "likelihood", "fidelity", "divergence", "latency", "throughput", "regret", "risk"}

# Broad fields, which kg-gold's guideline leaves out ("AI, artificial intelligence, NLP, computer vision,
# robotics"; "machine learning" is left to the NER: as the technique applied it is a method). kg-gold train marks
# them in 8 of the 407 abstracts that name them.
BROAD_FIELDS = _keyed({"ai", "artificial intelligence", "nlp", "natural language processing", "computer vision",
                       "robotics"})

# Words that, alone or with only these around them, name nothing in particular.
GENERIC_WORDS = {
    "method", "methods", "approach", "approaches", "paper", "work", "works", "study", "studies", "model", "models",
    "framework", "frameworks", "result", "results", "performance", "problem", "problems", "task", "tasks", "way",
    "ways", "number", "set", "lot", "amount", "use", "effect", "effects", "case", "cases", "example", "examples",
    "analysis", "analyses", "experiment", "experiments", "evidence", "question", "questions", "challenge",
    "challenges", "issue", "issues", "property", "properties", "setting", "settings", "technique", "techniques",
    "algorithm", "algorithms", "system", "systems", "tool", "tools", "idea", "ideas", "insight", "insights",
    "ability", "abilities", "capability", "capabilities", "improvement", "improvements", "state", "art", "gap",
    "gaps", "benefit", "benefits", "advantage", "advantages", "limitation", "limitations", "contribution",
    "contributions", "goal", "goals", "aim", "term", "terms", "form", "forms", "kind", "kinds", "type", "types",
    "part", "parts", "aspect", "aspects", "level", "levels", "degree", "range", "variety", "instance", "instances",
    "manner", "fact", "finding", "findings", "observation", "observations", "scenario", "scenarios", "application",
    "applications", "domain", "domains", "field", "fields", "area", "areas", "literature", "community",
    "researcher", "researchers", "people", "user", "users", "one", "ones", "end", "time", "step", "steps", "stage",
    "stages", "point", "points", "order", "quality", "cost", "costs", "size", "scale", "process", "processes",
    "strategy", "strategies", "solution", "solutions", "thing", "things", "element", "elements", "component",
    "components", "factor", "factors", "feature", "features", "value", "values", "baseline", "baselines",
    "dataset", "datasets", "benchmark", "benchmarks", "data", "metric", "metrics", "module", "modules", "design",
    "designs", "version", "variant", "variants", "method's", "approach's", "trade-off", "tradeoff", "role",
    "impact", "need", "lack", "presence", "absence", "existence", "importance", "effectiveness", "efficiency",
    "superiority", "advance", "advances", "advancement", "advancements", "progress", "success", "failure",
    "behavior", "behaviors", "behaviour", "behaviours", "mechanism", "mechanisms", "scheme", "schemes",
    "procedure", "procedures", "architecture", "architectures", "technology", "technologies", "direction",
    "directions", "perspective", "perspectives", "view", "lens", "notion", "concept", "concepts", "principle",
    "principles", "theory", "claim", "claims", "account", "basis", "context", "contexts", "condition",
    "conditions", "situation", "situations", "regime", "regimes", "choice", "choices", "option", "options",
    "practice", "practices", "attempt", "attempts", "effort", "efforts", "purpose", "interest", "attention",
    "focus", "means", "approach-", "code", "implementation", "experimental", "empirical", "theoretical",
    "extensive", "comprehensive", "new", "novel", "other", "others", "sota", "here", "there", "this",
    "that", "these", "those", "it", "they", "we", "us", "our", "their", "its", "which", "what", "who",
    "corpus", "corpora", "suite", "testbed", "collection",
    # discourse nouns: "with respect to", "on the other hand", "et al.", "in addition", "in contrast"
    "respect", "hand", "al", "et", "addition", "contrast", "particular", "detail", "details", "light", "sense",
    "spite", "turn", "favor", "favour", "regard", "regards", "top", "front", "course", "place", "relationship",
    "relationships", "connection", "connections", "measure", "measures", "measurement", "calculation",
    "construction", "definition", "alternative", "alternatives", "difference", "differences", "characterization",
    "formulation", "reduction", "output", "outputs", "input", "inputs", "phenomenon", "phenomena", "intuition",
    "paradigm", "fraction", "utility", "deployment", "comparison", "transition", "identifiability", "evaluation",
    # references inside a paper: "Sec. 3", "Tab. 2", "Fig. 4", "Eq. (5)"
    "sec", "section", "sections", "tab", "table", "tables", "fig", "figure", "figures", "eq", "equation",
    "equations", "appendix",
}
# Words that make a "dataset" phrase a role, not a named dataset: "training data", "a large-scale benchmark".
DATASET_ROLE_WORDS = {"train", "training", "test", "testing", "validation", "held", "out", "benchmark", "public",
                      "synthetic", "real", "world", "data", "dataset", "set", "corpus", "suite", "large", "small",
                      "scale", "new", "standard", "evaluation", "downstream", "image", "text", "labeled",
                      "unlabeled", "labelled", "unlabelled", "multiple", "several", "diverse", "existing", "source",
                      "target", "original", "different", "curated", "human", "annotated", "open"}
# Leading words stripped from noun phrases: they describe the mention, not the thing.
STRIP_LEADING = {
    "a", "an", "the", "this", "these", "that", "those", "our", "their", "its", "his", "her", "my", "your", "such",
    "novel", "new", "proposed", "existing", "various", "several", "different", "other", "many", "each", "every",
    "any", "some", "more", "most", "further", "additional", "certain", "same", "specific", "given", "standard",
    "key", "simple", "extensive", "comprehensive", "significant", "recent", "previous", "prior", "current",
    "traditional", "conventional", "popular", "state-of-the-art", "effective", "efficient", "robust", "strong",
    "powerful", "both", "all", "two", "three", "four", "five", "multiple", "numerous", "few", "first", "second",
    "third", "last", "final", "typical", "common", "general", "unified", "principled", "lightweight", "scalable",
    "better", "best", "improved", "superior", "notable", "remarkable", "impressive", "challenging", "diverse",
    "large-scale", "real-world", "underlying", "fundamental", "main", "major", "crucial", "critical", "important",
    "whole", "entire", "respective", "corresponding", "resulting", "above", "following", "own", "much", "little",
    "substantial", "considerable", "promising", "competitive", "widely-used", "well-known", "established",
}
# Name-shaped tokens that are not names.
NOT_NAMES = {"I", "II", "III", "IV", "V", "A", "AND", "OR", "NOT", "OK", "US", "UK", "EU", "USA", "CPU", "GPU",
             "GPUs", "CPUs", "TPU", "RAM", "API", "APIs", "URL", "PDF", "PhD", "e.g", "i.e", "et", "al", "vs"}
