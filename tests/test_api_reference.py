"""The API reference of `make docs` builds, and documents every public name."""

import inspect
import re
import warnings
from pathlib import Path

import pdoc

import kibitz

ROOT = Path(__file__).resolve().parents[1]


def api_modules():
    """The modules `make docs` documents (the Makefile's API_MODULES)."""
    line = re.search(r"^API_MODULES = (.+)$", (ROOT / "Makefile").read_text(), re.M)
    return line.group(1).split()


def test_make_docs_builds_the_reference_without_warnings_and_names_every_public_name(tmp_path):
    modules = api_modules()
    assert "kibitz.api" in modules
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pdoc.pdoc(*modules, output_directory=tmp_path)
    assert [f"{w.filename}: {w.message}" for w in caught] == []
    for module in modules:
        page = (tmp_path / (module.replace(".", "/") + ".html")).read_text()
        names = __import__(module, fromlist=["_"]).__all__
        assert names, module
        for name in names:
            assert f'id="{name}"' in page, f"{module}.{name} is not in the reference"


def test_every_public_name_has_a_docstring_and_the_package_is_typed():
    for module in api_modules():
        mod = __import__(module, fromlist=["_"])
        assert inspect.getdoc(mod), module
        for name in mod.__all__:
            assert inspect.getdoc(getattr(mod, name)), f"{module}.{name} has no docstring"
    assert set(kibitz.__all__) <= set(__import__("kibitz.api", fromlist=["_"]).__all__)
    assert (ROOT / "kibitz" / "py.typed").is_file()
