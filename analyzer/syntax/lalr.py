"""An LALR(1) driver with a contextual lexer, running the tables lark builds from cuda.lark.

lark's own LALR parser builds a parse tree, propagates positions through it and then a
Transformer walks it again; warplint needs none of the tree, only the AST. This driver runs
the same tables (`analyzer.syntax.tables`) and calls the builder once per reduction with the
kept children and the reduction's extent in the text, so the AST is built as the input is
read. On the generated benchmark file the parse went from 4,300 to 8,700 lines/s with it (the
collector pause of `analyzer.gc_pause` included), and lark is needed only to build the tables.

The lexer is lark's contextual lexer, done faster: the text is scanned with one regular
expression of all terminals (lark's order: priority, then longest possible match), and the
match is taken when the current state accepts its terminal. Among the terminals a state
accepts, in the same order, the same alternative matches first, so the token is the one that
state's own scanner would give; only when it is not accepted is that scanner compiled and
asked (`<` inside `a<b>`, a keyword a state does not allow). That regular expression leaves
out the terminals that cannot start with the text's next character (`first_chars`,
`Lexer._first_char_scanner`), and a character only a one-character terminal can start (`;`)
is read without it. Tests compare tokens, trees and positions with lark's parser.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from operator import itemgetter
from typing import Any

try:  # `re`'s own parser, read by `first_chars` (no stubs); private, so a Python may rename it:
    import re._constants as _sre_constants  # type: ignore[import-not-found]
    import re._parser as _sre_parser  # type: ignore[import-not-found]
except ImportError:  # then no terminal's first characters are known, and one scanner reads all
    _sre_constants = _sre_parser = None

from analyzer.syntax.tables import CALL, INLINE, PASS, LexContext, RuleSpec, Tables


class Token(str):
    """A terminal's text, with its type and where it starts and ends in the parsed text
    (as lark's Token, whose attributes the postlexer and the builder use)."""

    type: str
    value: str
    start_pos: int
    end_pos: int

    def __new__(cls, type_: str, value: str, start_pos: int, end_pos: int) -> Token:
        tok = str.__new__(cls, value)
        tok.type = type_
        tok.value = value
        tok.start_pos = start_pos
        tok.end_pos = end_pos
        return tok

    @classmethod
    def new_borrow_pos(cls, type_: str, value: str, borrow: Token) -> Token:
        if cls is Token:  # (the postlexer's retyping: one identifier in three)
            return _token(type_, value, borrow.start_pos, borrow.end_pos)
        return cls(type_, value, borrow.start_pos, borrow.end_pos)

    def __repr__(self) -> str:
        return f"Token({self.type!r}, {self.value!r})"

    def __reduce__(self):
        return (Token, (self.type, self.value, self.start_pos, self.end_pos))


_new_str = str.__new__


def _token(type_: str, value: str, start_pos: int, end_pos: int) -> Token:
    """`Token(type_, value, start_pos, end_pos)`, made without calling the class: its attributes
    written into the instance's dict. Why: the lexer makes one a terminal (1.01 M over the five
    corpora); timeit, 2026-11-28: 1.54 us a token through `Token.__new__`, 0.83 us this way."""
    tok = _new_str(Token, value)
    slots = tok.__dict__
    slots["type"] = type_
    slots["value"] = value
    slots["start_pos"] = start_pos
    slots["end_pos"] = end_pos
    return tok


class ParseError(Exception):
    """Input the grammar does not accept: `token` is the unexpected token (type "$END" at the
    end of the text), or None where no terminal matches the text at `pos_in_stream`."""

    def __init__(self, pos_in_stream: int, token: Token | None, expected: Iterable[str] = ()) -> None:
        shown = f"{token.value!r} ({token.type})" if token is not None else "character"
        super().__init__(f"unexpected {shown} at offset {pos_in_stream}")
        self.pos_in_stream = pos_in_stream
        self.token = token
        self.expected = frozenset(expected)


class Meta(tuple):
    """Where a reduction's text starts and ends (what the builder's `meta` argument holds,
    as lark's `Meta` with propagated positions: the first kept or dropped symbol's start to the
    last one's end; `empty` for a rule that matched nothing): the pair `(start, end)`, made
    `Meta((start, end))`.

    A tuple, so that making one calls no Python function (a class with an `__init__` runs it
    in a frame of its own); `Parser.parse`'s `direct` calls are given the plain pair, which
    `ToAst._span` reads as it reads this."""

    __slots__ = ()

    start_pos = property(itemgetter(0))
    end_pos = property(itemgetter(1))

    @property
    def empty(self) -> bool:
        return self[0] is None


class Inlined(tuple):
    """The kept children of a `_rule` (with their extents), spliced into the parent's children:
    the pair `(children, extents)`, made `Inlined((children, extents))` -- a tuple, made
    without a Python frame, as `Meta`. The two lists grow in place (`_kept`)."""

    __slots__ = ()

    children: list[Any] = property(itemgetter(0))  # type: ignore[assignment]
    extents: list[tuple[int | None, int | None]] = property(itemgetter(1))  # type: ignore[assignment]


#: the tokens after whose shift `Parser.parse` calls its `keep` (`syntax.resume`)
_CHECKPOINT_VALUES = frozenset((";", "}"))
#: where `Parser.parse` goes on from: the four stacks, the offset of the text, the last token
Resumed = tuple[list[int], list[Any], list["int | None"], list["int | None"], int, "Token | None"]

Builder = Callable[[RuleSpec, list[Any], Meta, list[tuple[int | None, int | None]] | None], Any]


class Lexer:
    """The contextual lexer over `tables` (see the module's docstring)."""

    def __init__(self, tables: Tables) -> None:
        self.tables = tables
        self._all = _scanner(tables.order, tables.patterns)
        # the characters a match of each terminal can start with (None: not known, any)
        self._firsts = {name: first_chars(tables.patterns[name]) for name in tables.order}
        # by first character: the scanner of the terminals that can start with it (`_first_char_scanner`)
        self._by_first: dict[str, Callable[..., Any]] = {}
        self._by_terminals: dict[tuple[str, ...], Callable[..., Any]] = {}  # one scanner for many characters
        # an ASCII character that only a terminal of that one character can start (`;`, `(`): the
        # terminal, read without a scanner
        self._single: dict[str, str] = {}
        for code in range(128):
            char = chr(code)
            names = self._terminals_from(char)
            if len(names) == 1 and _literal(tables.patterns[names[0]]) == char and names[0] not in tables.ignore:
                self._single[char] = names[0]
        self._own: dict[int, Callable[..., Any]] = {}
        # each parser state's context's terminals and keyword retyping, read by state (one
        # look-up a token, not three)
        self._allowed_of_state = [tables.contexts[i].allowed for i in tables.context_of_state]
        self._retype_of_state = [tables.contexts[i].retype for i in tables.context_of_state]

    def _scanner_of(self, index: int) -> Callable[..., Any]:
        scan = self._own.get(index)
        if scan is None:
            scan = self._own[index] = _scanner(self.tables.contexts[index].order, self.tables.patterns)
        return scan

    def _terminals_from(self, first: str) -> tuple[str, ...]:
        """The terminals, in lark's order, whose match can start with the character `first`."""
        return tuple(name for name in self.tables.order if (chars := self._firsts[name]) is None or first in chars)

    def _first_char_scanner(self, first: str) -> Callable[..., Any]:
        """The scanner for a text that starts with `first`: the all-terminals scanner without
        the terminals that cannot start with that character (`first_chars`); characters with
        the same such terminals share one. It gives the same match there as the whole scanner:
        the terminals left out cannot match, and the others keep their order.

        Why: `re` tries a scanner's alternatives one after the other: a name was tried against
        FLOATING and INTEGER before IDENTIFIER (0.69 us; 0.32 us with IDENTIFIER alone), and a
        `;` against the eight terminals that are not literals before its own (0.83 us; a `;`
        is now read without a scanner: `_single`). Measured 2026-11-28 under callgrind: the
        parse of the twenty cuda-samples files of `benchmarks/speed.py nvcc` (preprocessed as
        `check -I cuda-samples/Common` does, in one process, the tables loaded before) took
        3.446 G instructions with the literal terminals left out (each character's scanner
        compiled after 400 tokens), 2.978 G so (the 13 M this `Lexer`'s set-up takes, once a
        process, included)."""
        names = self._terminals_from(first)
        scan = self._by_terminals.get(names)
        if scan is None:
            scan = self._by_terminals[names] = _scanner(names, self.tables.patterns) if names else _no_match
        self._by_first[first] = scan
        return scan

    def tokens(self, text: str, state_stack: list[int], pos: int = 0) -> Iterator[Token]:
        """The tokens of `text` from offset `pos`, each lexed in the context of the state on top
        of `state_stack` when it is asked for (the parser feeds each token before the next)."""
        tables = self.tables
        by_first = self._by_first
        single = self._single
        ignore = tables.ignore
        contexts = tables.contexts
        context_of_state = tables.context_of_state
        allowed_of_state = self._allowed_of_state
        retype_of_state = self._retype_of_state
        skip_space = _SPACE.match
        new_str = _new_str
        end = len(text)
        while pos < end:
            first = text[pos]
            if first in _SPACE_CHARS:  # the ignored WS terminal, read without the scanner's alternation
                # one blank, as between most tokens of a line, read without a match (with the
                # parser's end test made on the state first: the twenty cuda-samples files'
                # parse under callgrind, 2026-11-28, 2.773 G -> 2.743 G instructions)
                pos += 1
                if pos == end:
                    break
                first = text[pos]
                if first in _SPACE_CHARS:
                    pos = skip_space(text, pos).end()  # type: ignore[union-attr]  # matches: text[pos] is a space
                    if pos == end:
                        break
                    first = text[pos]
            kind: Any = single.get(first)  # (a terminal's name wherever it is read below)
            if kind is not None:  # the one terminal that can start here, one character long
                value = first
            else:
                scan = by_first.get(first)
                if scan is None:
                    scan = self._first_char_scanner(first)
                m = scan(text, pos)
                if m is None:
                    value = ""
                else:
                    kind = m.lastgroup
                    if kind in ignore:
                        pos = m.end()
                        continue
                    value = m.group()
            state = state_stack[-1]
            if kind is None or kind not in allowed_of_state[state]:
                index = context_of_state[state]
                context: LexContext = contexts[index]
                mine = self._scanner_of(index)(text, pos)
                if mine is None:
                    token = None
                    if kind is not None:  # a terminal of another context: name it (as lark does)
                        token = Token(tables.retype.get(kind, {}).get(value, kind), value, pos, pos + len(value))
                    raise ParseError(pos, token, context.allowed - ignore)
                kind = mine.lastgroup
                if kind in ignore:
                    pos = mine.end()
                    continue
                value = mine.group()
            retype = retype_of_state[state].get(kind)
            if retype is not None:
                kind = retype.get(value, kind)
            stop = pos + len(value)
            tok = new_str(Token, value)  # `_token(kind, value, pos, stop)`, without its call
            slots = tok.__dict__
            slots["type"] = kind
            slots["value"] = value
            slots["start_pos"] = pos
            slots["end_pos"] = stop
            yield tok
            pos = stop


# cuda.lark's WS terminal (checked against the tables by a test): white space is most of what
# the scanner would otherwise try every terminal on before WS
_SPACE_CHARS = frozenset(" \t\f\r\n\v")
_SPACE = re.compile("[ \t\f\r\n\v]+")


def _scanner(order: tuple[str, ...], patterns: dict[str, str]) -> Callable[..., Any]:
    return re.compile("|".join(f"(?P<{name}>{patterns[name]})" for name in order)).match


def _no_match(text: str, pos: int) -> None:
    """The scanner of a character no terminal starts with."""
    return None


def _literal(pattern: str) -> str | None:
    """The text a terminal's pattern matches when it is an escaped literal (how lark writes a
    string terminal), else None."""
    text = re.sub(r"\\(.)", r"\1", pattern, flags=re.DOTALL)
    return text if text and re.escape(text) == pattern else None


# a class of more characters than this is taken as any character (`first_chars`)
_MANY_CHARS = 1024


def first_chars(pattern: str) -> frozenset[str] | None:
    """The characters a match of the regular expression `pattern` can start with, or None
    where that is not known (a class such as `\\w` or `[^x]`, `.`, a flag that ignores
    case, an empty match, a construct not looked into, `re`'s parser missing): a superset,
    never fewer."""
    if _sre_parser is None:
        return None
    try:
        parsed = _sre_parser.parse(pattern)
    except (re.error, RecursionError):
        return None
    if parsed.state.flags & (re.IGNORECASE | re.LOCALE):
        return None
    chars, empty = _sequence_firsts(list(parsed))
    return None if chars is None or empty else frozenset(chars)


def _sequence_firsts(items: list[tuple[Any, Any]]) -> tuple[set[str] | None, bool]:
    """What a sequence of parsed items can start with, and whether it can match the empty text."""
    chars: set[str] = set()
    for op, arg in items:
        firsts, empty = _item_firsts(op, arg)
        if firsts is None:
            return None, False
        chars |= firsts
        if not empty:
            return chars, False
    return chars, True


def _item_firsts(op: Any, arg: Any) -> tuple[set[str] | None, bool]:
    """`_sequence_firsts` of one parsed item (an opcode of `re._constants` and its argument)."""
    c = _sre_constants
    if op is c.LITERAL:
        return {chr(arg)}, False
    if op is c.IN:
        return _class_chars(arg), False
    if op is c.SUBPATTERN:
        _group, add_flags, _del_flags, sub = arg
        if add_flags & (re.IGNORECASE | re.LOCALE):
            return None, False
        return _sequence_firsts(list(sub))
    if op is c.BRANCH:
        chars: set[str] = set()
        any_empty = False
        for alternative in arg[1]:
            firsts, empty = _sequence_firsts(list(alternative))
            if firsts is None:
                return None, False
            chars |= firsts
            any_empty = any_empty or empty
        return chars, any_empty
    if op in (c.MAX_REPEAT, c.MIN_REPEAT, c.POSSESSIVE_REPEAT):
        low, _high, sub = arg
        firsts, empty = _sequence_firsts(list(sub))
        return firsts, empty or low == 0
    if op in (c.AT, c.ASSERT, c.ASSERT_NOT):  # reads no character (a superset: its test is left out)
        return set(), True
    return None, False


def _class_chars(items: list[tuple[Any, Any]]) -> set[str] | None:
    """The characters of a `[...]` class, None for a negated one, a category (`\\d`) or a large one."""
    c = _sre_constants
    chars: set[str] = set()
    for op, arg in items:
        if op is c.LITERAL:
            chars.add(chr(arg))
        elif op is c.RANGE and arg[1] - arg[0] < _MANY_CHARS:
            chars.update(map(chr, range(arg[0], arg[1] + 1)))
        else:
            return None
    return chars


class Parser:
    """Runs the tables on one text, calling `build(rule, children, meta, extents)` for each
    reduction that builds a node; `extents` (each child's start and end, parentheses it was
    read through included) is given for the rules named in `with_extents`.

    Two short ways, same trees and errors: a chain of `?rule` reductions is one look-up
    (`_passed`), and a node of one child kept as it is replaces that child on the stacks
    (`_one_child`). Measured 2026-11-28 (callgrind, the preprocessed texts of six of the
    1.0-1.5 s files of issue 16 -- hotspot3D/3D.cu, srad_v1/main.cu, sha1.cu, adi.cu,
    huffman/main_test_cu.cu, correlation.cu -- parsed in one process, start-up taken off):
    3.415 G instructions before; 3.225 G with the chains (and the lexer's contexts read by
    state, the builder's spans without typing.cast, TypeTable.is_type without a generator);
    3.090 G with the one-child nodes too (and no child filter for a rule that keeps all).
    Measured 2026-11-28 under callgrind, the parse of the twenty cuda-samples files of
    `benchmarks/speed.py nvcc` (see `Lexer._first_char_scanner`): 2.980 G before, 2.907 G with
    each reduction's extent a tuple (`Meta`; the plain pair for `direct` calls) and the
    children's starts and ends sliced only for the rules that read them (`_filtered`); then
    (the splitter's body scan changed in between) 2.845 G -> 2.804 G with `Inlined` a tuple,
    the children of a rule that only picks them by index picked by `operator.itemgetter`
    (`_picks`, 12,500 reductions of the twenty files), and the lexer making its tokens inline;
    2026-11-29, 2.715 G -> 2.682 G with a reduction's rule index worked out once (`~action`, a
    rule past the 256th, made an int object at each of its up to six look-ups); 2.682 G ->
    2.651 G with the state on top kept in a local (`states[-1]`, a negative index, is not one
    of the look-ups the interpreter specialises)."""

    def __init__(self, tables: Tables, with_extents: frozenset[str] = frozenset()) -> None:
        self.tables = tables
        self.lexer = Lexer(tables)
        self.with_extents = with_extents
        # (state below, state on top, terminal) -> the state on top after the `?rule`
        # reductions that terminal makes there one after the other (`_passed`)
        self._passed: dict[tuple[int, int, str], int] = {}
        # by rule: a node built on one symbol kept as it is (`name: IDENTIFIER`), without extents,
        # which replaces that symbol on the stacks: no slices of the four stacks, no child filter.
        # 42% of the node-building reductions of the 20 cuda-samples files of issue 16
        self._one_child = tuple(
            r.kind == CALL and r.size == 1 and r.plain and not r.expand1 and r.name not in with_extents
            for r in tables.rules
        )
        # by rule: its children are filtered (`_kept`) or their extents read -- an INLINE rule's
        # always, a CALL rule's where it is not `plain` or is in `with_extents`; the others' are
        # the node's arguments as they are, and their starts and ends are not sliced off
        self._filtered = tuple(r.kind == INLINE or not r.plain or r.name in with_extents for r in tables.rules)
        # by rule: the C function that picks its kept children (as a tuple) where `_kept` would
        # only pick them by index -- a CALL rule not `plain`, without extents, splices or Nones
        # (`member`: `a . b`, `expression_statement`, `call`); None for the others
        self._picks = tuple(_picker(r) if r.kind == CALL and r.name not in with_extents else None for r in tables.rules)

    def parse(
        self,
        text: str,
        build: Builder,
        postlex: Callable[[Iterator[Token]], Iterator[Token]] | None = None,
        direct: tuple[Any, list[Callable[..., Any] | None]] | None = None,
        resume: Resumed | None = None,
        keep: Callable[[Token, list[int], list[Any], list[int | None], list[int | None]], None] | None = None,
    ) -> Any:
        """The value `build` makes of the start rule. With `direct` (`builder`, `methods`: a
        function by rule index), a node without extents is built by `methods[i](builder, meta,
        *kept)`, the call `build` would make (as `ToAst.reduce` does), without `build`'s frame:
        0.95 us of the 4.9 us an identifier's node took (timeit, 2026-11-28), about 1.1 nodes
        a token. `resume`: the stacks, offset and last token to go on from (`syntax.resume`), in
        place of the start; `keep`: called with the token and the stacks after each `;` or `}`
        is shifted (`syntax.resume.Checkpoints`)."""
        tables = self.tables
        actions = tables.actions
        rules = tables.rules
        end_state = tables.end_state
        with_extents = self.with_extents
        passed = self._passed
        one_child = self._one_child
        filtered = self._filtered
        picks = self._picks
        builder, methods = direct if direct is not None else (None, None)
        if resume is None:
            states: list[int] = [tables.start_state]
            values: list[Any] = []
            starts: list[int | None] = []
            ends: list[int | None] = []
            at, last = 0, None
        else:
            states, values, starts, ends, at, last = resume
        stream = self.lexer.tokens(text, states, at)
        if postlex is not None:
            stream = postlex(stream)
        token: Token | None = None
        top = states[-1]  # (kept as the stack changes: a local, not a look-up at each step)
        for token in _with_end(stream, last):
            kind = token.type
            while True:
                row = actions[top]
                action = row.get(kind)
                if action is None:
                    raise ParseError(token.start_pos, token, (s for s in row if s.isupper()))
                if action >= 0:  # shift
                    states.append(action)
                    top = action
                    values.append(token)
                    starts.append(token.start_pos)
                    ends.append(token.end_pos)
                    if keep is not None and token.value in _CHECKPOINT_VALUES:
                        keep(token, states, values, starts, ends)
                    break
                rule_index = ~action  # (an int object made once a reduction, not at each look-up below)
                rule = rules[rule_index]
                rule_kind = rule.kind
                if one_child[rule_index]:  # the node built on the one child, in place on the stacks
                    if methods is not None:
                        value = methods[rule_index](builder, (starts[-1], ends[-1]), values[-1])  # type: ignore[misc]  # a CALL rule has its method
                    else:
                        value = build(rule, [values[-1]], Meta((starts[-1], ends[-1])), None)
                    goto = top = states[-1] = actions[states[-2]][rule.origin]
                    values[-1] = value  # (its start and end are the child's)
                    if goto == end_state and kind == "$END":
                        return value
                    continue
                if rule_kind == PASS:  # `?rule: child` (one child): only the state changes
                    if kind != "$END":  # the chain of such reductions at once (`_passed`)
                        key = (states[-2], top, kind)
                        chained = passed.get(key)
                        if chained is None:
                            chained = passed[key] = _passed(actions, rules, key)
                        states[-1] = top = chained
                        continue
                    goto = top = states[-1] = actions[states[-2]][rule.origin]
                    if goto == end_state:
                        return values[-1]
                    continue
                size = rule.size
                if size:
                    children = values[-size:]
                    if filtered[rule_index]:  # each child's start and end are read
                        child_starts = starts[-size:]
                        child_ends = ends[-size:]
                    start = starts[-size]
                    if start is None:
                        start = next((s for s in starts[-size:] if s is not None), None)
                    stop = ends[-1]
                    if stop is None:
                        stop = next((e for e in reversed(ends[-size:]) if e is not None), None)
                    del states[-size:], values[-size:], starts[-size:], ends[-size:]
                else:
                    children = []
                    child_starts = child_ends = []
                    start = stop = None
                if rule_kind == INLINE:
                    if rule.plain:  # `_kept` of a plain rule without its call (8,000 of the twenty
                        # files' reductions; their parse under callgrind 2.707 G -> 2.700 G, 2026-11-28)
                        value = Inlined((children, list(zip(child_starts, child_ends))))
                    else:
                        kept, extents = _kept(rule, children, child_starts, child_ends, True)
                        value = Inlined((kept, extents or []))  # with_extents: never None
                elif not filtered[rule_index]:  # every child kept as it is, without extents
                    if rule.expand1 and len(children) == 1:
                        value = children[0]
                    elif methods is not None:
                        value = methods[rule_index](builder, (start, stop), *children)  # type: ignore[misc]  # a CALL rule has its method
                    else:
                        value = build(rule, children, Meta((start, stop)), None)
                elif (pick := picks[rule_index]) is not None and methods is not None:  # children picked by index
                    kept_tuple = pick(children)
                    if rule.expand1 and len(kept_tuple) == 1:
                        value = kept_tuple[0]
                    else:
                        value = methods[rule_index](builder, (start, stop), *kept_tuple)  # type: ignore[misc]  # a CALL rule has its method
                else:
                    wants = rule.name in with_extents
                    kept, extents = _kept(rule, children, child_starts, child_ends, wants)
                    if rule.expand1 and len(kept) == 1:
                        value = kept[0]
                    elif methods is not None and extents is None:
                        value = methods[rule_index](builder, (start, stop), *kept)  # type: ignore[misc]  # a CALL rule has its method
                    else:
                        value = build(rule, kept, Meta((start, stop)), extents)
                goto = top = actions[states[-1]][rule.origin]
                states.append(goto)
                values.append(value)
                starts.append(start)
                ends.append(stop)
                if goto == end_state and kind == "$END":
                    return value
        raise ParseError(len(text), token)  # not reached: $END either reduces to the start or fails


def _passed(actions: list[dict[str, int]], rules: tuple[RuleSpec, ...], key: tuple[int, int, str]) -> int:
    """The state on top of the stack after the `?rule: child` (PASS) reductions that terminal
    `kind` makes one after the other, from state `top` over state `below` (`key`): each only
    replaces the top state by the goto of `below`, so the chain depends on these three alone.
    It stops at the first state whose action on `kind` is not such a reduction (a shift,
    another reduction, or none: the error is raised there, as without the shortcut).

    Why: an expression's operand is reduced through the precedence levels of C's operators,
    each a `?rule`: over the five corpora 2.15 M of the 4.7 M steps of the parse loop were
    these reductions (1.06 M shifts, 1.51 M other reductions)."""
    below, top, kind = key
    while True:
        action = actions[top].get(kind)
        if action is None or action >= 0:
            return top
        rule = rules[~action]
        if rule.kind != PASS:
            return top
        top = actions[below][rule.origin]


def _picker(rule: RuleSpec) -> Callable[[list[Any]], tuple[Any, ...]] | None:
    """The function of a rule's children that gives its kept children as a tuple, where they
    are only picked by index (not `plain`, no `_rule` spliced, no None for a left-out
    `[optional]`); else None."""
    if rule.plain or rule.nones_after or any(splice or nones for _, splice, nones in rule.keep):
        return None
    indices = [i for i, _, _ in rule.keep]
    if len(indices) >= 2:
        return itemgetter(*indices)  # (a tuple of the items)
    if len(indices) == 1:
        one = itemgetter(indices[0])
        return lambda children: (one(children),)
    return lambda children: ()


def _kept(
    rule: RuleSpec, children: list[Any], starts: list[int | None], ends: list[int | None], with_extents: bool
) -> tuple[list[Any], list[tuple[int | None, int | None]] | None]:
    """lark's child filter: the kept children, `_rule` children spliced in, and a None for each
    `[optional]` that was left out; with each one's extent if asked."""
    if rule.plain:
        return children, (list(zip(starts, ends)) if with_extents else None)
    kept: list[Any] = []
    extents: list[tuple[int | None, int | None]] | None = [] if with_extents else None
    keep = rule.keep
    if keep and keep[0][1] and not keep[0][2]:
        # a `_rule` spliced first, as lark's left-recursive repetitions (`(op operand)*`) are:
        # its lists grow in place (it is off the stack, nothing else holds it), so a chain of
        # n operators costs n steps, not n**2 copies (100,000 `+ 1` took minutes)
        head = children[keep[0][0]]
        kept = head.children
        if extents is not None:
            extents = head.extents
        keep = keep[1:]
    for i, splice, nones in keep:
        if nones:
            kept.extend([None] * nones)
            if extents is not None:
                extents.extend([(None, None)] * nones)
        child = children[i]
        if splice:
            kept.extend(child.children)
            if extents is not None:
                extents.extend(child.extents)
        else:
            kept.append(child)
            if extents is not None:
                extents.append((starts[i], ends[i]))
    if rule.nones_after:
        kept.extend([None] * rule.nones_after)
        if extents is not None:
            extents.extend([(None, None)] * rule.nones_after)
    return kept, extents


def _with_end(stream: Iterator[Token], last: Token | None = None) -> Iterator[Token]:
    """The tokens, then "$END" placed at the last token (where lark places it, so an error at
    the end is reported where the text stops making sense); `last`: the token before them."""
    for last in stream:
        yield last
    yield Token("$END", "", 0, 1) if last is None else Token.new_borrow_pos("$END", "", last)
