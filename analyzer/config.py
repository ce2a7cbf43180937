"""Configuration files: find, load, validate, and merge them with the command line.

warplint reads `[tool.warplint]` from a `pyproject.toml`, or a `warplint.toml` whose keys
sit at the top level (a `[tool.warplint]` table is accepted there too, for files copied
out of a pyproject.toml). The file that applies to a checked file is the nearest one
walking up from the file's folder to the filesystem root; in one folder `warplint.toml`
wins over `pyproject.toml`, and a `pyproject.toml` without `[tool.warplint]` is passed
over (like ruff). Files are never merged: the nearest one is the whole configuration.

Everything here is pure apart from reading the files: a broken file raises
`ConfigError`, which prints as `path:line:col: error: message` (the command line exits 2).
TOML gives no positions for values, so the line of a bad value is found by scanning the
text for its key (`Locator`).
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Mapping
from typing import Any

from analyzer import records
from analyzer.launch_limits import (
    MAX_BLOCK,
    MAX_BLOCK_THREADS,
    MAX_GRID,
    LaunchLimitError,
    is_macro_name,
    is_param_name,
    launch_dims,
    param_problem,
)
from analyzer.lazy_pattern import lazy_compile
from analyzer.records import field, record
from analyzer.toml_positions import Locator
from analyzer.walk import anchored

__all__ = [
    "CONFIG_NAMES",
    "ConfigError",
    "Resolver",
    "Settings",
    "build_settings",
    "find_config",
    "load_config",
    "options_for",
]

CONFIG_NAMES = ("warplint.toml", "pyproject.toml")  # in one folder, the first wins
SEVERITIES = ("error", "warning", "note")
MAX_TOML_NESTING = 64  # tomllib recurses for each level of arrays and inline tables
MAX_BUDGET = 10**15  # steps: more than any run could take (a budget is not meant to be infinite)
_TOML_POSITION = lazy_compile(r"\(at line (\d+), column (\d+)\)")
_TOOL_TABLE = re.compile(r"^\s*\[\s*tool\s*\.\s*warplint\s*[\].]", re.MULTILINE)


class ConfigError(Exception):
    """A configuration file that cannot be used; `str()` is the gcc-shaped message."""

    def __init__(self, path: str, line: int, column: int, message: str) -> None:
        super().__init__(message)
        self.path, self.line, self.column, self.message = path, line, column, message

    def __str__(self) -> str:
        from analyzer.report import display_path

        return f"{display_path(self.path)}:{self.line}:{self.column}: error: {self.message}"


@record(slots=False)
class Settings:
    """What one source of settings says: a configuration file or the command line.

    None (or empty) means "not said here", so that `options_for` can let the command
    line override the file key by key. Codes in `severity` and `per_file_ignores` are
    validated selectors; paths in `include_paths` are absolute.
    """

    path: str | None = None  # the configuration file (None: the command line)
    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    extend_ignore: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (glob, selectors)
    arch: str | None = None
    assume: str | None = None  # "typical" or "worst": the verdict policy (analysis/verdict.py)
    defines: Mapping[str, str | None] = field(default_factory=dict)
    include_paths: tuple[str, ...] = ()
    undefines: tuple[str, ...] = ()  # -U (the build's and the command line's)
    forced_includes: tuple[str, ...] = ()  # -include (the build's and the command line's)
    std: str | None = None  # -std
    cuda_version: str | None = None  # the toolkit whose macros are predefined
    block: tuple[int, int, int] | None = None
    grid: tuple[int, int, int] | None = None
    params: Mapping[str, int] = field(default_factory=dict)
    severity: Mapping[str, str] = field(default_factory=dict)  # code -> "error"|"warning"|"note"
    budget: Any = None  # analyzer.budget.Budget, or None: the defaults
    show_host: bool | None = None  # report what host code warplint could not follow
    exclude: tuple[str, ...] | None = None  # globs folder searches leave out (analyzer.walk), anchored
    extend_exclude: tuple[str, ...] = ()
    respect_gitignore: bool | None = None
    cache_dir: str | None = None  # the results cache's folder (absolute; analyzer.cache)
    kernels: tuple[Any, ...] = ()  # per-kernel tables (analysis.launch.KernelTable), in the file's order

    @property
    def root(self) -> str:
        """The folder that relative paths and per-file-ignores globs are relative to."""
        return os.path.dirname(os.path.abspath(self.path)) if self.path else os.getcwd()


# ----------------------------------------------------------------------------- discovery


def find_config(folder: str) -> str | None:
    """The configuration file nearest to `folder` (itself, then its parents), or None."""
    folder = os.path.abspath(folder)
    while True:
        for name in CONFIG_NAMES:
            candidate = os.path.join(folder, name)
            if os.path.isfile(candidate) and (name != "pyproject.toml" or _mentions_warplint(candidate)):
                return candidate
        parent = os.path.dirname(folder)
        if parent == folder:  # the filesystem root
            return None
        folder = parent


def _mentions_warplint(path: str) -> bool:
    """A pyproject.toml counts only with a `[tool.warplint]` table; one that does not
    mention it is not ours to complain about, even when it does not parse."""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return bool(_TOOL_TABLE.search(handle.read()))
    except OSError:
        return False


# ----------------------------------------------------------------------------- loading


def load_config(path: str) -> Settings:
    """Read and validate one configuration file. Raises `ConfigError`."""
    try:
        with open(path, "rb") as handle:
            raw = handle.read()
    except OSError as err:
        raise ConfigError(path, 1, 1, f"cannot read configuration file: {err.strerror or err}") from None
    text = raw.decode("utf-8", errors="replace")
    data = _parse_toml(path, text)
    locate = Locator(path, text)
    if os.path.basename(path) == "pyproject.toml":
        table, prefix = data.get("tool", {}).get("warplint", {}), "tool.warplint"
    elif set(data) == {"tool"} and isinstance(data["tool"], dict) and set(data["tool"]) == {"warplint"}:
        table, prefix = data["tool"]["warplint"], "tool.warplint"
    else:
        table, prefix = data, ""
    if not isinstance(table, dict):
        raise _located(locate, prefix, "", "`tool.warplint` must be a table")
    return _settings(path, table, _Where(locate, prefix))


def _parse_toml(path: str, text: str) -> dict[str, Any]:
    import tomllib

    too_deep = _too_deep(text)
    if too_deep is not None:  # tomllib parses nesting by recursion: refuse it before it overflows
        raise ConfigError(
            path, *too_deep, f"invalid TOML: arrays or inline tables nested more than {MAX_TOML_NESTING} levels deep"
        )
    try:
        return tomllib.loads(text)
    except (RecursionError, ValueError) as err:  # (a number too long for Python's int, say)
        if isinstance(err, tomllib.TOMLDecodeError):
            raise _toml_error(path, text, err) from None
        long_number = re.search(r"[0-9_]{4000,}", text)
        if long_number is not None:
            line = text.count("\n", 0, long_number.start()) + 1
            column = long_number.start() - text.rfind("\n", 0, long_number.start())
            raise ConfigError(path, line, column, "invalid TOML: a number too long to read") from None
        raise ConfigError(path, 1, 1, f"invalid TOML: {type(err).__name__}: {err}"[:300]) from None


def _toml_error(path: str, text: str, err: Exception) -> ConfigError:
    """A TOMLDecodeError as a ConfigError at its line and column."""
    message = str(err)
    match = _TOML_POSITION.search(message)
    if match:
        line, column = int(match.group(1)), int(match.group(2))
        message = message[: match.start()].rstrip()
    elif "end of document" in message:
        line = text.count("\n") + 1
        column = len(text) - text.rfind("\n")
        message = message.replace("(at end of document)", "").rstrip()
    else:
        line, column = getattr(err, "lineno", 1), getattr(err, "colno", 1)
    return ConfigError(path, line, column, f"invalid TOML: {message[:1].lower() + message[1:]}")


def _too_deep(text: str) -> tuple[int, int] | None:
    """The (line, column) where arrays and inline tables first nest deeper than
    MAX_TOML_NESTING levels, or None. Read iteratively, strings and comments skipped."""
    depth, line, start, i, n = 0, 1, 0, 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "\n":
            line, start = line + 1, i + 1
        elif ch == "#":
            end = text.find("\n", i)
            i = n if end < 0 else end
            continue
        elif ch in "\"'":
            quote = text[i : i + 3] if text[i : i + 3] in ('"""', "'''") else ch
            end = _string_end(text, i + len(quote), quote)
            line += text.count("\n", i, end)
            if "\n" in text[i:end]:
                start = text.rfind("\n", i, end) + 1
            i = end
            continue
        elif ch in "[{":
            depth += 1
            if depth > MAX_TOML_NESTING:
                return line, i - start + 1
        elif ch in "]}":
            depth = max(0, depth - 1)
        i += 1
    return None


def _string_end(text: str, i: int, quote: str) -> int:
    """Where a TOML string whose opening `quote` ends before `i` stops (past its closing quote)."""
    n = len(text)
    while i < n:
        if text.startswith(quote, i):
            return i + len(quote)
        if text[i] == "\\" and quote[0] == '"':
            i += 2
            continue
        if text[i] == "\n" and len(quote) == 1:
            return i  # an unterminated one-line string: tomllib says so
        i += 1
    return n


@record(slots=False)
class _Where:
    """Where the keys of the warplint table are, for error messages."""

    locate: Locator
    prefix: str  # "tool.warplint" or "" (top level of warplint.toml)

    def error(self, key: str, message: str, value: str | None = None) -> ConfigError:
        return _located(self.locate, self.prefix, key, message, value)

    def shown(self, key: str) -> str:
        return f"{self.prefix}.{key}" if self.prefix else key


_KEYS = (
    "select",
    "ignore",
    "extend-select",
    "extend-ignore",
    "per-file-ignores",
    "arch",
    "assume",
    "defines",
    "define",
    "include-paths",
    "include",
    "cuda-version",
    "block",
    "grid",
    "params",
    "severity",
    "budget",
    "show-host",
    "exclude",
    "extend-exclude",
    "respect-gitignore",
    "cache-dir",
    "kernels",
)
#: The keys of a per-kernel table (`[tool.warplint.kernels."reduce4<*>"]`).
_KERNEL_KEYS = ("block", "grid", "params", "facts")
#: The facts a per-kernel table may state of a parameter, and the kind each is.
_FACT_KINDS = {"multiple-of": "divisor", "min": "min", "max": "max"}


def _known_keys(table: Mapping[str, Any], known: tuple[str, ...], where: _Where) -> None:
    """Refuse the first key of `table` that is not in `known`, with the closest known key or the list."""
    for key in table:
        if key not in known:
            hint = _close(key, known)
            raise where.error(
                key,
                f"unknown key `{where.shown(key)}`"
                + (f"; did you mean `{hint}`?" if hint else f"; known keys: {', '.join(known)}"),
            )


def _settings(path: str, table: Mapping[str, Any], where: _Where) -> Settings:
    _known_keys(table, _KEYS, where)
    root = os.path.dirname(os.path.abspath(path))
    values: dict[str, Any] = {"path": path}
    for key in ("select", "ignore", "extend-select", "extend-ignore"):
        if key in table:
            values[key.replace("-", "_")] = tuple(_selectors(table[key], key, where))
    if "per-file-ignores" in table:
        values["per_file_ignores"] = _per_file_ignores(table["per-file-ignores"], where)
    if "arch" in table:
        values["arch"] = _arch(table["arch"], where)
    if "assume" in table:
        values["assume"] = _assume(table["assume"], where)
    defines, includes = _alias(table, "defines", "define", where), _alias(table, "include-paths", "include", where)
    if defines is not None:
        values["defines"] = _defines(table[defines], where, defines)
    if includes is not None:
        paths = _strings(table[includes], includes, where)
        values["include_paths"] = tuple(os.path.normpath(os.path.join(root, p)) for p in paths)
    if "cuda-version" in table:
        values["cuda_version"] = _cuda_version(table["cuda-version"], where)
    for key in ("block", "grid"):
        if key in table:
            values[key] = _dims(table[key], key, where)
    if "params" in table:
        values["params"] = _params(table["params"], where)
    if "severity" in table:
        values["severity"] = _severity(table["severity"], where)
    if "budget" in table:
        values["budget"] = _budget(table["budget"], where)
    for key in ("show-host", "respect-gitignore"):
        if key in table:
            if not isinstance(table[key], bool):
                raise where.error(key, f"`{where.shown(key)}` must be true or false")
            values[key.replace("-", "_")] = table[key]
    for key in ("exclude", "extend-exclude"):  # globs with `/` are relative to this file's folder
        if key in table:
            values[key.replace("-", "_")] = anchored(_strings(table[key], key, where), root)
    if "cache-dir" in table:
        if not isinstance(table["cache-dir"], str):
            raise where.error("cache-dir", f"`{where.shown('cache-dir')}` must be a string (a folder)")
        values["cache_dir"] = os.path.normpath(os.path.join(root, table["cache-dir"]))
    if "show-host" in table:
        if not isinstance(table["show-host"], bool):
            raise where.error("show-host", f"`{where.shown('show-host')}` must be true or false")
        values["show_host"] = table["show-host"]
    if "kernels" in table:
        values["kernels"] = _kernel_tables(path, table["kernels"], where)
    return Settings(**values)


def _kernel_tables(path: str, value: Any, where: _Where) -> tuple[Any, ...]:
    """`[kernels."name"]`: for the kernels whose name matches each pattern, a block, grid,
    parameters and facts (`analysis.launch.KernelTable`), validated as the top-level keys are."""
    from analyzer.analysis.launch import KernelTable

    if not isinstance(value, dict):
        raise where.error("kernels", f"`{where.shown('kernels')}` must be a table of kernel name = table")
    out = []
    for pattern, body in value.items():
        inner = _Where(where.locate, f"{where.shown('kernels')}.{pattern}")
        if not isinstance(body, dict):
            raise where.error("kernels", f'`{where.shown("kernels")}."{pattern}"` must be a table', value=pattern)
        _known_keys(body, _KERNEL_KEYS, inner)
        dims = {key: _dims(body[key], key, inner) for key in ("block", "grid") if key in body}
        params = _params(body["params"], inner) if "params" in body else {}
        facts = _facts(body["facts"], inner) if "facts" in body else ()
        out.append(
            KernelTable(pattern, path, dims.get("block"), dims.get("grid"), tuple(sorted(params.items())), facts)
        )
    return tuple(out)


def _facts(value: Any, where: _Where) -> tuple[tuple[str, tuple[str, int]], ...]:
    """`facts = { w = { multiple-of = 32, min = 64 } }`: what holds of parameters left unknown."""
    shown = where.shown("facts")
    if not isinstance(value, dict):
        raise where.error("facts", f"`{shown}` must be a table of parameter = {{ multiple-of, min, max }}")
    out: list[tuple[str, tuple[str, int]]] = []
    for name, stated in value.items():
        if not is_param_name(name) or not isinstance(stated, dict):
            raise where.error("facts", f"`{shown}.{name}` must be a parameter's table of facts", value=name)
        for kind, number in stated.items():
            if kind not in _FACT_KINDS:
                hint = _close(kind, tuple(_FACT_KINDS))
                raise where.error(
                    "facts",
                    f"unknown fact `{kind}` in `{shown}.{name}`"
                    + (f"; did you mean `{hint}`?" if hint else f"; facts: {', '.join(_FACT_KINDS)}"),
                    value=kind,
                )
            if not isinstance(number, int) or isinstance(number, bool) or param_problem(number) is not None:
                raise where.error("facts", f"`{shown}.{name}.{kind}` must be an integer, not {number!r}", value=kind)
            if kind == "multiple-of" and number < 1:
                raise where.error("facts", f"`{shown}.{name}.multiple-of` must be at least 1, not {number}", value=kind)
            out.append((name, (_FACT_KINDS[kind], number)))
    return tuple(out)


def _alias(table: Mapping[str, Any], key: str, alias: str, where: _Where) -> str | None:
    """Which of a key and its clang-style alias (`define` for `defines`, `include` for
    `include-paths`) the table uses, or None; both at once is an error."""
    if key in table and alias in table:
        raise where.error(alias, f"`{where.shown(alias)}` and `{where.shown(key)}` are the same key; give one")
    return key if key in table else alias if alias in table else None


def _cuda_version(value: Any, where: _Where) -> str:
    from analyzer.source.cuda_macros import parse_toolkit_version

    text = str(value) if isinstance(value, (str, float)) and not isinstance(value, bool) else None
    try:
        if text is None:
            raise ValueError(f'must be a string such as "12.4", not {_type_name(value)}')
        parse_toolkit_version(text)
    except ValueError as err:
        raise where.error("cuda-version", f"`{where.shown('cuda-version')}`: {err}") from None
    return text


def _close(word: str, choices: tuple[str, ...]) -> str | None:
    import difflib

    found = difflib.get_close_matches(word, choices, n=1, cutoff=0.7)
    return found[0] if found else None


def _type_name(value: Any) -> str:
    return {
        bool: "a boolean",
        int: "an integer",
        float: "a number",
        str: "a string",
        list: "an array",
        dict: "a table",
    }.get(type(value), type(value).__name__)


def _strings(value: Any, key: str, where: _Where) -> list[str]:
    if isinstance(value, str):
        return [value]
    if not isinstance(value, list):
        raise where.error(key, f"`{where.shown(key)}` must be an array of strings, not {_type_name(value)}")
    for item in value:
        if not isinstance(item, str):
            raise where.error(key, f"`{where.shown(key)}` must be an array of strings; it holds {_type_name(item)}")
    return list(value)


def _selectors(value: Any, key: str, where: _Where, inner: str | None = None) -> list[str]:
    """Rule codes or names (or code prefixes, or ALL), each checked against the registry."""
    from analyzer.rules.registry import get_rules

    shown_key = inner or key
    given = _strings(value, shown_key, where) if inner is None else _inner_strings(value, key, inner, where)
    # "WL101,WL201" in one string reads as on the command line
    selectors = [part.strip() for item in given for part in item.split(",") if part.strip()]
    for selector in selectors:
        try:
            get_rules(selector)
        except KeyError:
            raise where.error(
                key,
                f"unknown rule `{selector}` in `{where.shown(shown_key)}`; `warplint rules` lists them",
                value=selector,
            ) from None
    return [s.strip() for s in selectors]


def _inner_strings(value: Any, key: str, inner: str, where: _Where) -> list[str]:
    if isinstance(value, str):
        return [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise where.error(
            key,
            f"`{where.shown(inner)}` must be an array of rule codes, not {_type_name(value)}",
            value=inner.rsplit(".", 1)[-1],
        )
    return list(value)


def _per_file_ignores(value: Any, where: _Where) -> tuple[tuple[str, tuple[str, ...]], ...]:
    key = "per-file-ignores"
    if not isinstance(value, dict):
        raise where.error(key, f"`{where.shown(key)}` must be a table of glob = [codes], not {_type_name(value)}")
    return tuple((glob, tuple(_selectors(codes, key, where, inner=f"{key}.{glob}"))) for glob, codes in value.items())


def _arch(value: Any, where: _Where) -> str:
    from analyzer.arch import ARCHITECTURES, DEFAULT_ARCH

    if not isinstance(value, str):
        raise where.error(
            "arch", f'`{where.shown("arch")}` must be a string such as "{DEFAULT_ARCH}", not {_type_name(value)}'
        )
    if value not in ARCHITECTURES:
        raise where.error(
            "arch", f"unknown architecture {value!r}; choose one of {', '.join(sorted(ARCHITECTURES))}", value=value
        )
    return value


def _assume(value: Any, where: _Where) -> str:
    """`assume = "typical"` (the default) or `"worst"`: which values of unknowns a finding may rest on."""
    from analyzer.analysis.verdict import Assume

    choices = ", ".join(f'"{a.value}"' for a in Assume)
    if not isinstance(value, str):
        raise where.error("assume", f"`{where.shown('assume')}` must be one of {choices}, not {_type_name(value)}")
    if value not in {a.value for a in Assume}:
        raise where.error("assume", f"unknown policy {value!r}; choose one of {choices}", value=value)
    return value


def _defines(value: Any, where: _Where, key: str = "defines") -> dict[str, str | None]:
    """`defines = ["DEBUG", "TILE=32"]` or `[defines] TILE = 32` (true: defined as 1); `key` is
    the spelling the file used (`define`, clang's, is the same key)."""
    out: dict[str, str | None] = {}
    if isinstance(value, list):
        for item in _strings(value, key, where):
            name, sep, text = item.partition("=")
            if not is_macro_name(name):
                raise where.error(key, f'bad macro definition {item!r}; expected "NAME" or "NAME=VALUE"', value=item)
            out[name] = text if sep else None
        return out
    if not isinstance(value, dict):
        raise where.error(
            key,
            f'`{where.shown(key)}` must be a table or an array of "NAME=VALUE" strings, not {_type_name(value)}',
        )
    for name, item in value.items():
        if not is_macro_name(name):
            raise where.error(key, f"bad macro name {name!r} in `{where.shown(key)}`", value=name)
        if item is True:
            out[name] = None
        elif isinstance(item, (str, int, float)) and not isinstance(item, bool):
            out[name] = str(item)
        else:
            raise where.error(
                key,
                f"`{where.shown(key)}.{name}` must be a string, a number or true, not {_type_name(item)}",
                value=name,
            )
    return out


def _dims(value: Any, key: str, where: _Where) -> tuple[int, int, int]:
    limits, total = (MAX_BLOCK, MAX_BLOCK_THREADS) if key == "block" else (MAX_GRID, None)
    dims = [value] if isinstance(value, int) and not isinstance(value, bool) else value
    if (
        not isinstance(dims, list)
        or not 1 <= len(dims) <= 3
        or not all(isinstance(d, int) and not isinstance(d, bool) for d in dims)
    ):
        raise where.error(
            key,
            f"`{where.shown(key)}` must be an integer or an array of 1 to 3 integers "
            f"such as [32, 8], not {_type_name(value)}",
        )
    try:
        return launch_dims(dims, limits, total)
    except LaunchLimitError as err:
        raise where.error(key, f"`{where.shown(key)}`: {err}") from None


def _params(value: Any, where: _Where) -> dict[str, int]:
    if not isinstance(value, dict):
        raise where.error(
            "params", f"`{where.shown('params')}` must be a table of name = integer, not {_type_name(value)}"
        )
    for name, number in value.items():
        if not is_param_name(name):
            raise where.error("params", f"bad parameter name {name!r} in `{where.shown('params')}`", value=name)
        if not isinstance(number, int) or isinstance(number, bool):
            raise where.error(
                "params", f"`{where.shown('params')}.{name}` must be an integer, not {_type_name(number)}", value=name
            )
        problem = param_problem(number)
        if problem is not None:
            raise where.error("params", f"`{where.shown('params')}.{name}`: {problem}", value=name)
    return dict(value)


def _severity(value: Any, where: _Where) -> dict[str, str]:
    """Rule code or name -> severity, stored by code. Tool errors keep theirs."""
    from analyzer.rules.registry import DIAGNOSTIC_CODES, RULES

    if not isinstance(value, dict):
        raise where.error(
            "severity",
            f'`{where.shown("severity")}` must be a table of rule = "error"|"warning"|"note", not {_type_name(value)}',
        )
    names = {rule.name: code for code, rule in RULES.items()}
    names.update({name: code for code, (name, _) in DIAGNOSTIC_CODES.items()})
    out: dict[str, str] = {}
    for key, level in value.items():
        code = key.upper() if key.upper() in RULES or key.upper() in DIAGNOSTIC_CODES else names.get(key.lower())
        if code is None:
            raise where.error(
                "severity",
                f"unknown rule `{key}` in `{where.shown('severity')}`; `warplint rules` lists them",
                value=key,
            )
        if code in ("WL900", "WL910"):
            raise where.error("severity", f"the severity of {code} (a tool error) cannot be changed", value=key)
        if level not in SEVERITIES:
            raise where.error(
                "severity",
                f"`{where.shown('severity')}.{key}` must be one of "
                f"{', '.join(repr(s) for s in SEVERITIES)}, not {level!r}",
                value=key,
            )
        out[code] = level
    return out


def _budget(value: Any, where: _Where) -> Any:
    """`[budget]`: the steps each stage may take on one file (analyzer.budget), each a positive
    integer; the stages not named keep their defaults."""
    from analyzer.budget import STAGES, Budget

    if not isinstance(value, dict):
        raise where.error(
            "budget",
            f"`{where.shown('budget')}` must be a table of stage = steps "
            f"({', '.join(STAGES)}), not {_type_name(value)}",
        )
    steps: dict[str, int] = {}
    for stage, number in value.items():
        if stage not in STAGES:
            hint = _close(stage, STAGES)
            raise where.error(
                "budget",
                f"unknown stage `{stage}` in `{where.shown('budget')}`"
                + (f"; did you mean `{hint}`?" if hint else f"; stages: {', '.join(STAGES)}"),
                value=stage,
            )
        if not isinstance(number, int) or isinstance(number, bool) or not 1 <= number <= MAX_BUDGET:
            raise where.error(
                "budget",
                f"`{where.shown('budget')}.{stage}` must be an integer from 1 to "
                f"{MAX_BUDGET:,} (steps), not {number!r}",
                value=stage,
            )
        steps[stage] = number
    return Budget(**steps)


def _located(locate: Locator, prefix: str, key: str, message: str, value: str | None = None) -> ConfigError:
    """A configuration error at the key (or the value after it) that it is about."""
    line, column = locate.find(prefix, key, value)
    return ConfigError(locate.path, line, column, message)


# ----------------------------------------------------------------------------- merging


def options_for(path: str, file: Settings | None, cli: Settings, base: Any, build: Settings | None = None) -> Any:
    """The `analyzer.api.Options` for one checked file: `base` (defaults and output
    settings), then the configuration file, then the build's flags for the file (`-p`), then
    the command line, key by key.

    `select`/`ignore` on the command line replace the file's; `extend-select`/
    `extend-ignore` add to whatever is in force; `params` and `defines` are merged
    with the command line winning per name; `-I` folders come before the file's;
    `per-file-ignores` whose glob matches the path add to `ignore`.
    """
    file, build = file or Settings(), build or Settings()
    select = _first(cli.select, file.select)
    ignore = _first(cli.ignore, file.ignore)
    if select is not None:
        select = [*select, *file.extend_select, *cli.extend_select]
    extra_ignore = [*file.extend_ignore, *cli.extend_ignore, *_per_file(path, file)]
    if extra_ignore:
        ignore = [*(ignore or ()), *extra_ignore]
    return records.replace(
        base,
        arch=_first(cli.arch, build.arch, file.arch, base.arch),
        assume=_first(cli.assume, file.assume, base.assume),
        block=_first(cli.block, file.block, base.block),
        grid=_first(cli.grid, file.grid, base.grid),
        params={**file.params, **cli.params},
        defines={**file.defines, **build.defines, **cli.defines},
        include_paths=[*cli.include_paths, *build.include_paths, *file.include_paths],
        undefines=[*build.undefines, *cli.undefines],
        forced_includes=[*build.forced_includes, *cli.forced_includes],
        std=_first(cli.std, build.std, base.std),
        cuda_version=_first(cli.cuda_version, file.cuda_version, base.cuda_version),
        select=select,
        ignore=ignore,
        severity={**file.severity, **cli.severity},
        budget=_first(cli.budget, file.budget, base.budget),
        show_host=bool(_first(cli.show_host, file.show_host, base.show_host)),
        # `base` names the cache folder relative to the project root (the configuration's
        # folder, else the current one), or None: --no-cache
        cache_dir=None
        if base.cache_dir is None
        else _first(cli.cache_dir, file.cache_dir, os.path.join(file.root, base.cache_dir)),
        kernels=tuple(_under_command_line(t, cli) for t in file.kernels),
    )


def _under_command_line(table: Any, cli: Settings) -> Any:
    """A per-kernel table with the command line's `--block`, `--grid` and `--param` in it:
    the command line wins over the configuration, its tables included."""
    return records.replace(
        table,
        block=cli.block or table.block,
        grid=cli.grid or table.grid,
        params=tuple(sorted({**dict(table.params), **cli.params}.items())),
    )


def _first(*values: Any) -> Any:
    for value in values:
        if value is not None:
            return value
    return None


def _per_file(path: str, file: Settings) -> list[str]:
    """Selectors of the per-file-ignores whose glob matches `path`: a glob is matched
    against the path relative to the configuration's folder, and a glob without `/`
    against the file name too (`*.cuh` matches headers in any folder)."""
    if not file.per_file_ignores:
        return []
    rel = os.path.relpath(os.path.abspath(path), file.root).replace(os.sep, "/")
    name = os.path.basename(path)
    out: list[str] = []
    for glob, selectors in file.per_file_ignores:
        pattern = glob.replace(os.sep, "/").removeprefix("./")
        if fnmatch.fnmatchcase(rel, pattern) or ("/" not in pattern and fnmatch.fnmatchcase(name, pattern)):
            out.extend(selectors)
    return out


class Resolver:
    """Options per checked file, each configuration file read once.

    `config` names one file for every path (`--config`); `isolated` reads none.
    Calling it may raise `ConfigError`.
    """

    def __init__(
        self, cli: Settings, base: Any, *, config: str | None = None, isolated: bool = False, build: Any = None
    ) -> None:
        self.cli, self.base, self.isolated = cli, base, isolated
        self.build = build  # analyzer.build.CompilationDatabase (-p), or None
        self.explicit = config
        self._found: dict[str, str | None] = {}  # folder -> configuration path
        self._loaded: dict[str, Settings] = {}

    def settings(self, path: str) -> Settings | None:
        if self.isolated:
            return None
        source = self.explicit
        if source is None:
            folder = os.path.dirname(os.path.abspath(path))
            if folder not in self._found:
                self._found[folder] = find_config(folder)
            source = self._found[folder]
        if source is None:
            return None
        if source not in self._loaded:
            self._loaded[source] = load_config(source)
        return self._loaded[source]

    def __call__(self, path: str) -> Any:
        flags = self.build.flags_for(path) if self.build is not None else None
        build = build_settings(flags) if flags is not None else None
        return options_for(path, self.settings(path), self.cli, self.base, build)


def build_settings(flags: Any) -> Settings:
    """The settings an `analyzer.build.CompileFlags` gives: its folders, macros, standard, and the
    first architecture it names that warplint models (the others are left to the defaults)."""
    from analyzer.arch import ARCHITECTURES

    return Settings(
        defines=dict(flags.defines),
        include_paths=flags.include_paths,
        undefines=flags.undefines,
        forced_includes=flags.forced_includes,
        std=flags.std,
        arch=next((a for a in flags.archs if a in ARCHITECTURES), None),
    )
