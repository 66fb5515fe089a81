"""Report notebooks on disk, their parameters, and the parameter sets they run with.

- Notebooks: every `notebooks/[0-9][0-9]-*.ipynb`, in name order.
- A notebook's parameters are its `parameters` cell (papermill.inspect_notebook): name, type,
  default, comment.
- Parameter sets (effective value: notebook default < parameter set < explicit):
    local       the defaults, plus `notebooks/params/local/<stem>.yaml` where present
    paper       `notebooks/params/paper/<stem>.yaml` (published scale, for a real cluster)
    FILE.yaml   one file for the notebooks selected
  A file is a plain mapping of parameter names to values, so
  `papermill NB.ipynb out.ipynb -f notebooks/params/paper/<stem>.yaml` reads it too.
- A key that is not a parameter of the notebook is an error naming the file, the key and the
  notebook's parameters.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from cassperf import config
from cassperf.errors import ConfigError

NAMED_SETS = ("local", "paper")


@dataclass(frozen=True)
class Parameter:
    name: str
    type_name: str       # as annotated: str, int, float, bool
    default: Any         # the default's value (the literal in the parameters cell)
    help: str


def discover_notebooks(folder: Path | None = None) -> list[Path]:
    """Every report notebook `[0-9][0-9]-*.ipynb` in `folder` (default notebooks/), in name order."""
    folder = folder or config.notebooks_dir()
    return sorted(folder.glob("[0-9][0-9]-*.ipynb"))


def select_notebooks(names: list[str] | None, folder: Path | None = None) -> list[Path]:
    """The notebooks named (file name, stem or path), in name order; all of them for None."""
    found = discover_notebooks(folder)
    if not names:
        if not found:
            raise ConfigError(f"no report notebook in {folder or config.notebooks_dir()} "
                              "(expected files named like 01-replication-factor.ipynb)")
        return found
    chosen = []
    for name in names:
        match = [p for p in found if name in (p.name, p.stem, str(p), str(p.resolve()))]
        if not match:
            known = ", ".join(p.name for p in found) or "none"
            raise ConfigError(f"--notebook {name}: no such report notebook; known: {known}")
        chosen.extend(match)
    return sorted(dict.fromkeys(chosen), key=lambda p: p.name)


def _literal(text: str) -> Any:
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def notebook_parameters(path: Path) -> dict[str, Parameter]:
    """The notebook's parameters in cell order (papermill's reading of the `parameters` cell)."""
    import papermill

    inferred = papermill.inspect_notebook(str(path))
    return {name: Parameter(name, p.get("inferred_type_name") or "", _literal(p.get("default") or "None"),
                            p.get("help") or "") for name, p in inferred.items()}


def unread_parameters(path: Path, inferred: dict[str, Parameter]) -> dict[str, tuple[int, str]]:
    """Parameters of the `parameters` cell papermill could not read (name -> line number, line):
    papermill skips a line it cannot parse (e.g. a comment with quotes in it), and then
    `--help-notebook`, `-p` and the parameter sets do not know that parameter."""
    import nbformat

    nb = nbformat.read(path, as_version=4)
    cells = [c for c in nb.cells if "parameters" in c.get("metadata", {}).get("tags", [])]
    unread = {}
    for no, line in enumerate(cells[0].source.splitlines() if cells else [], 1):
        m = re.match(r"^(\w+)\s*(?::[^=]+)?=", line)
        if m and m.group(1) not in inferred:
            unread[m.group(1)] = (no, line)
    return unread


def load_parameter_file(path: Path) -> dict[str, Any]:
    """A YAML file of `name: value` lines; an empty file is an empty set."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read parameter file ({exc.strerror})") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark else str(path)
        raise ConfigError(f"{where}: not valid YAML ({getattr(exc, 'problem', exc)}); "
                          "a parameter file holds 'name: value' lines") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping of parameter names to values (name: value), "
                          f"got a {type(data).__name__}")
    return {str(k): v for k, v in data.items()}


_TYPES: dict[str, tuple[type, ...]] = {"str": (str,), "int": (int,), "float": (int, float), "bool": (bool,),
                                      "list": (list,), "dict": (dict,)}


def _unread_error(source: str, key: str, notebook: Path, line_no: int, line: str) -> ConfigError:
    return ConfigError(f"{source}: {key!r} is in the parameters cell of {notebook.name} (line {line_no}) but papermill "
                       f"cannot read that line: {line.strip()!r}; write its comment without quotes "
                       "(e.g. '# ... empty = the embedded cluster')")


def check_values(values: dict[str, Any], params: dict[str, Parameter], source: str, notebook: Path) -> None:
    """Raise one ConfigError for the first key of `values` that `notebook` does not declare (or
    declares on a line papermill cannot read), or whose value is not of the declared type
    (str, int, float, bool, list, dict)."""
    for key, value in values.items():
        if key not in params:
            unread = unread_parameters(notebook, params)
            if key in unread:
                raise _unread_error(source, key, notebook, *unread[key])
            raise ConfigError(f"{source}: {key!r} is not a parameter of {notebook.name}; its parameters: "
                              f"{', '.join(params)}")
        allowed = _TYPES.get(params[key].type_name)
        if allowed and (not isinstance(value, allowed) or (isinstance(value, bool) and bool not in allowed)):
            raise ConfigError(f"{source}: {key} = {value!r} is a {type(value).__name__}; {notebook.name} declares "
                              f"{key}: {params[key].type_name} (e.g. {key}: {params[key].default!r})")


def set_file(parameter_set: str, notebook: Path) -> Path | None:
    """The file a parameter set gives `notebook` (None: the local set has none for it)."""
    if parameter_set in NAMED_SETS:
        path = notebook.parent / "params" / parameter_set / f"{notebook.stem}.yaml"
        if parameter_set == "local" and not path.exists():
            return None
        if not path.exists():
            raise ConfigError(f"parameter set {parameter_set!r}: {path} is absent; write the published-scale "
                              f"values of {notebook.name} there (name: value lines), or run with --params local")
        return path
    path = Path(parameter_set)
    if path.suffix not in (".yaml", ".yml"):
        raise ConfigError(f"--params {parameter_set}: expected local, paper or a FILE.yaml")
    if not path.exists():
        raise ConfigError(f"--params {parameter_set}: no such file")
    return path


def set_label(parameter_set: str) -> str:
    """How the index and the report header name a parameter set: local, paper or the file name."""
    return parameter_set if parameter_set in NAMED_SETS else Path(parameter_set).name


def _from_text(value: Any, param: Parameter) -> Any:
    """A command-line value ('-p rows 100') in the declared type: YAML scalars for non-str."""
    if isinstance(value, str) and param.type_name in ("int", "float", "bool", "list", "dict"):
        try:
            return yaml.safe_load(value)
        except yaml.YAMLError:
            return value
    return value


@dataclass(frozen=True)
class Resolved:
    """What one notebook runs with."""

    notebook: Path
    declared: dict[str, Parameter]
    given: dict[str, Any]        # the parameter set's and explicit values (what papermill injects)
    effective: dict[str, Any]    # defaults overridden by `given`


def resolve(notebook: Path, parameter_set: str = "local", explicit: dict[str, Any] | None = None) -> Resolved:
    """The effective parameters of `notebook`: defaults < the set's file < `explicit`. Explicit
    values apply where the notebook declares them (the caller checks that some notebook does)."""
    declared = notebook_parameters(notebook)
    given: dict[str, Any] = {}
    path = set_file(parameter_set, notebook)
    if path is not None:
        values = load_parameter_file(path)
        check_values(values, declared, str(path), notebook)
        given.update(values)
    unread = unread_parameters(notebook, declared) if set(explicit or {}) - set(declared) else {}
    for key in (explicit or {}):
        if key in unread:
            raise _unread_error("explicit parameter", key, notebook, *unread[key])
    chosen = {k: _from_text(v, declared[k]) for k, v in (explicit or {}).items() if k in declared}
    check_values(chosen, declared, "explicit parameter", notebook)
    given.update(chosen)
    effective = {name: p.default for name, p in declared.items()}
    effective.update(given)
    return Resolved(notebook, declared, given, effective)
