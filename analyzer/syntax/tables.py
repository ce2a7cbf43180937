"""The LALR tables of cuda.lark as plain data: built by lark, cached on disk, loaded without lark.

lark builds the parser from grammars/cuda.lark (LALR(1), contextual lexer). What parsing needs
from that parser -- the action table, each rule's length and which children it keeps, each
terminal's regular expression in lark's lexing order, and which terminals each parser state
accepts -- is taken out here as tuples, dicts and strings and written with `marshal`, so a
later run loads it in milliseconds without importing lark (a fifth of warplint's start-up
went to importing lark and loading its own cache). `analyzer.syntax.lalr` runs these tables.
A cache file carries a checksum: a damaged one (a disk error, a crash while another program
wrote it, a file copied over it) is built again and replaced, never used.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import re
import sys
import zlib
from pathlib import Path
from typing import Any

from analyzer.grammar_files import cache_file, grammar_path
from analyzer.records import record

FORMAT = 2  # bump when the layout below changes: old cache files are then ignored
_MAGIC = b"WLT\x02"  # a cache file starts with it, then the CRC-32 of the marshal data that follows
#: The type of each entry of the cached data: a file whose data has another shape is built again.
_SHAPE = {
    "format": int,
    "actions": list,
    "rules": list,
    "start_state": int,
    "end_state": int,
    "patterns": dict,
    "order": tuple,
    "retype": dict,
    "ignore": tuple,
    "context_of_state": list,
    "contexts": list,
}

# What a reduction does with its children (RuleSpec.kind)
CALL = 0  # build the node: the method named `name`, with the kept children
PASS = 1  # `?rule: child`: the one kept child is the value, as it is
INLINE = 2  # `_rule` (and lark's `__x_star_0` repetitions): its kept children join the parent's


@record(slots=False)
class RuleSpec:
    """One grammar rule as the driver reduces it."""

    origin: str  # the nonterminal it produces (the goto key)
    size: int  # symbols popped
    kind: int  # CALL, PASS or INLINE
    name: str  # the builder method (the rule's alias, else its origin)
    keep: tuple[tuple[int, bool, int], ...]  # (index, splice an INLINE child, Nones placed before it)
    nones_after: int  # Nones placed after the last kept child (`[optional]` left out at the end)
    expand1: bool  # `?rule`: a single kept child is passed through instead of built on
    plain: bool  # every symbol kept as it is: the children need no filtering


@record(slots=False)
class LexContext:
    """The terminals one group of parser states accepts, as the contextual lexer sees them."""

    allowed: frozenset[str]  # terminal names this context's own scanner would return
    retype: dict[str, dict[str, str]]  # terminal -> {text: keyword terminal} (`if` lexed as a name)
    order: tuple[str, ...]  # `allowed` in lark's lexing order, for this context's own scanner


@record(slots=False)
class Tables:
    actions: list[dict[str, int]]  # per state: symbol -> next state (>= 0), or ~rule index (reduce)
    rules: tuple[RuleSpec, ...]
    start_state: int
    end_state: int
    patterns: dict[str, str]  # terminal -> regular expression
    order: tuple[str, ...]  # the terminals of the all-terminals scanner, in lark's lexing order
    retype: dict[str, dict[str, str]]  # the all-terminals scanner's keyword retyping
    ignore: frozenset[str]
    context_of_state: list[int]
    contexts: tuple[LexContext, ...]


def load(name: str = "cuda.lark", always_accept: tuple[str, ...] = ("IDENTIFIER",)) -> Tables:
    """The tables for `name`, from the cache when it holds them for this grammar text, else
    built with lark (about a second) and cached."""
    text = grammar_path(name).read_text()
    python = f"py{sys.version_info[0]}{sys.version_info[1]}"  # marshal's format is Python's own
    path = cache_file(Path(name).stem, text, f"-tables{FORMAT}-{python}.marshal")
    if path is not None:
        try:
            with open(path, "rb") as f:
                cached = decode_tables(f.read())  # (`marshal.load(f)` reads in small pieces: 10x slower)
            if cached is not None:
                return _from_data(cached)
        except Exception:  # noqa: BLE001 - absent, unreadable or damaged in any way: built again below
            pass
    data = build_data(text, always_accept)
    if path is not None:
        _write(path, data)
    return _from_data(data)


def encode_tables(data: dict[str, Any]) -> bytes:
    """The cache file's bytes: a magic word, the CRC-32 of the marshal data, the data."""
    payload = marshal.dumps(data)
    return _MAGIC + zlib.crc32(payload).to_bytes(4, "little") + payload


def decode_tables(raw: bytes) -> dict[str, Any] | None:
    """The tables' data from a cache file's bytes, or None when they are not whole: another
    layout, a truncated or damaged file (the checksum), or data of another shape."""
    head = len(_MAGIC) + 4
    if raw[: len(_MAGIC)] != _MAGIC or int.from_bytes(raw[len(_MAGIC) : head], "little") != zlib.crc32(raw[head:]):
        return None
    data = marshal.loads(raw[head:])
    if not isinstance(data, dict) or any(not isinstance(data.get(key), kind) for key, kind in _SHAPE.items()):
        return None
    return data


def _write(path: str, data: Any) -> None:
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        with open(tmp, "wb") as f:
            f.write(encode_tables(data))
        os.replace(tmp, path)  # whole or not at all, also with two warplints starting at once
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def build_data(grammar: str, always_accept: tuple[str, ...]) -> dict[str, Any]:
    """Build the parser with lark and take out the tables as plain data (what `marshal` writes)."""
    from lark import Lark

    parser = Lark(grammar, parser="lalr", lexer="contextual", maybe_placeholders=True)
    return tables_of(parser, always_accept)


def tables_of(parser: Any, always_accept: tuple[str, ...]) -> dict[str, Any]:
    """The plain-data tables of a built lark LALR parser (lark 1.1 to 1.3 keep them here)."""
    from lark.lexer import PatternRE, PatternStr
    from lark.parsers.lalr_analysis import Shift

    table = parser.parser.parser.parser.parse_table
    rules = list(parser.rules)
    index_of_rule = {id(r): i for i, r in enumerate(rules)}
    actions: list[dict[str, int]] = [{} for _ in range(max(table.states) + 1)]
    for state, row in table.states.items():
        for symbol, (action, arg) in row.items():
            actions[state][str(symbol)] = arg if action is Shift else ~index_of_rule[id(arg)]

    terminals = list(parser.lexer_conf.terminals)
    # lark's lexing order (BasicLexer): higher priority, then longer possible match, then name
    terminals.sort(key=lambda t: (-t.priority, -t.pattern.max_width, -len(t.pattern.value), t.name))
    patterns = {str(t.name): str(t.pattern.to_regexp()) for t in terminals}
    for t in terminals:
        if t.pattern.flags:
            raise ValueError(f"terminal {t.name} has regex flags, which the table driver does not follow")
    ignore = tuple(str(n) for n in parser.lexer_conf.ignore)

    def scanner_of(names: set[str]) -> tuple[tuple[str, ...], dict[str, dict[str, str]]]:
        """lark's `_create_unless`: a keyword that a regexp terminal of the same priority
        matches whole is not scanned on its own but retyped after that terminal matches."""
        chosen = [t for t in terminals if t.name in names]
        embedded: set[str] = set()
        retype: dict[str, dict[str, str]] = {}
        for re_t in chosen:
            if not isinstance(re_t.pattern, PatternRE):
                continue
            for str_t in chosen:
                if not isinstance(str_t.pattern, PatternStr) or str_t.priority != re_t.priority:
                    continue
                word = str_t.pattern.value
                m = re.match(re_t.pattern.to_regexp(), word)
                if m and m.group(0) == word:
                    retype.setdefault(str(re_t.name), {})[str(word)] = str(str_t.name)
                    embedded.add(str_t.name)
        return tuple(str(t.name) for t in chosen if t.name not in embedded), retype

    order, retype = scanner_of({t.name for t in terminals})
    term_names = set(patterns)
    contexts: list[tuple[Any, ...]] = []
    context_index: dict[frozenset[str], int] = {}
    context_of_state = [0] * len(actions)
    for state, row in table.states.items():
        accepts = frozenset(str(s) for s in row if s in term_names)
        i = context_index.get(accepts)
        if i is None:
            names = set(accepts) | set(ignore) | (set(always_accept) & term_names)
            ctx_order, ctx_retype = scanner_of(names)
            i = context_index[accepts] = len(contexts)
            contexts.append((ctx_order, ctx_retype))
        context_of_state[state] = i

    return {
        "format": FORMAT,
        "actions": actions,
        "rules": [_rule_spec(r) for r in rules],
        "start_state": int(table.start_states["start"]),
        "end_state": int(table.end_states["start"]),
        "patterns": patterns,
        "order": order,
        "retype": retype,
        "ignore": ignore,
        "context_of_state": context_of_state,
        "contexts": contexts,
    }


def _rule_spec(rule: Any) -> tuple[Any, ...]:
    """What lark's ParseTreeBuilder does for `rule` (ChildFilterLALR, ExpandSingleChild,
    maybe_placeholders), as data."""
    expansion = rule.expansion
    options = rule.options
    empty = options.empty_indices
    if empty:
        runs = "".join(str(int(b)) for b in empty).split("0")
        nones = [len(ones) for ones in runs]  # Nones before each symbol, and after the last
    else:
        nones = [0] * (len(expansion) + 1)
    keep = []
    pending = 0
    for i, symbol in enumerate(expansion):
        pending += nones[i]
        if options.keep_all_tokens or not (symbol.is_term and symbol.filter_out):
            splice = not symbol.is_term and symbol.name.startswith("_")
            keep.append((i, splice, pending))
            pending = 0
    pending += nones[len(expansion)]
    origin = str(rule.origin.name)
    name = rule.alias or options.template_source or origin
    expand1 = bool(options.expand1 and not rule.alias)
    if origin.startswith("_"):
        kind = INLINE
    elif expand1 and len(expansion) == 1 and len(keep) == 1 and not keep[0][1] and not pending and not keep[0][2]:
        kind = PASS
    else:
        kind = CALL
    plain = len(keep) == len(expansion) and not pending and not any(splice or n for _, splice, n in keep)
    return (origin, len(expansion), kind, str(name), tuple(keep), pending, expand1, plain)


def _from_data(data: dict[str, Any]) -> Tables:
    if data.get("format") != FORMAT:
        raise ValueError("tables of another format")
    contexts = tuple(LexContext(frozenset(order), retype, tuple(order)) for order, retype in data["contexts"])
    return Tables(
        actions=data["actions"],
        rules=tuple(RuleSpec(*r) for r in data["rules"]),
        start_state=data["start_state"],
        end_state=data["end_state"],
        patterns=data["patterns"],
        order=tuple(data["order"]),
        retype=data["retype"],
        ignore=frozenset(data["ignore"]),
        context_of_state=data["context_of_state"],
        contexts=contexts,
    )
