"""A non-editable `pip install .` must ship every subpackage and the grammars."""

from __future__ import annotations

import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CONFIG = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]


def test_every_analyzer_subpackage_is_listed():
    folders = {
        ".".join(p.parent.relative_to(REPO).parts)
        for p in (REPO / "analyzer").rglob("*.py")
        if "__pycache__" not in p.parts
    }
    assert folders <= set(CONFIG["packages"])


def test_grammars_ship_as_package_data():
    assert "analyzer.grammars" in CONFIG["packages"]
    assert CONFIG["package-dir"]["analyzer.grammars"] == "grammars"
    assert CONFIG["package-data"]["analyzer.grammars"] == ["*.lark"]
    assert {p.name for p in (REPO / "grammars").glob("*.lark")} == {"cuda.lark", "ptx.lark"}


def test_the_metadata_names_the_license_classifiers_and_urls():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert project["license"] == {"text": "MIT"}
    assert (REPO / "LICENSE").read_text().startswith("MIT License\n")
    assert "License :: OSI Approved :: MIT License" in project["classifiers"]
    assert (
        f"Programming Language :: Python :: {project['requires-python'].removeprefix('>=')}" in project["classifiers"]
    )
    assert set(project["urls"]) == {"Homepage", "Documentation", "Changelog"}
