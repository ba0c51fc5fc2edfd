"""The runtime package holds no training code: fitting lives in kg_train, which kg never imports."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TRAINING_ONLY = ("sklearn", "torch", "transformers", "sentence_transformers", "kg_train")
# kg.extract.pipeline.load_nlp registers an earlier kg's NER encoder (kg_train.arch) only for a pipeline whose
# config names it; the shipped model does not.
ALLOWED = {("kg/extract/pipeline.py", "kg_train.arch")}


def _imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module)
    return found


def test_kg_and_api_import_no_training_code() -> None:
    bad = []
    for path in [*(ROOT / "kg").rglob("*.py"), *(ROOT / "api").rglob("*.py")]:
        rel = path.relative_to(ROOT).as_posix()
        for name in _imports(path):
            if name.split(".")[0] in TRAINING_ONLY and (rel, name) not in ALLOWED:
                bad.append(f"{rel}: {name}")
    assert bad == []


def test_no_fitting_function_in_kg() -> None:
    """Functions that fit or write models (train_*, fit_*, save_model, build_gazetteer) are kg_train's."""
    bad = []
    for path in (ROOT / "kg").rglob("*.py"):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.FunctionDef) and (node.name.startswith(("train_", "fit_"))
                                                      or node.name in ("save_model", "build_gazetteer")):
                bad.append(f"{path.relative_to(ROOT)}: {node.name}")
    assert bad == []


def test_scripts_and_tests_import_no_script_through_sys_path() -> None:
    bad = []
    for path in [*(ROOT / "scripts").glob("*.py"), *(ROOT / "tests").rglob("*.py"), *(ROOT / "kg_train").glob("*.py")]:
        if "sys.path.insert(0, str(ROOT / \"scripts\"))" in path.read_text(encoding="utf-8") \
                or "/ \"scripts\"))" in path.read_text(encoding="utf-8"):
            bad.append(str(path.relative_to(ROOT)))
    assert bad == []
