"""Check BDDL problem text before LIBERO parses it; BDDL from a file is untrusted input.

LIBERO's parser runs Python's ``eval()`` on every ``:yaw_rotation`` value
(``libero.libero.envs.bddl_utils.get_regions``) and ``float()`` on ``:ranges``
and ``:rgba`` values, so BDDL text from a crafted file (a demo HDF5, a task
folder) could run code or hang the process (``9**9**9``) while a scene is
built. :func:`check_problem` refuses anything but the shape MEMOBench's tasks
use: balanced parentheses, numeric literals wherever LIBERO reads numbers,
known sections and region attributes, identifier names, every object used in
``:regions``, ``:obj_of_interest``, ``:init`` and ``:goal`` declared in
``:objects`` / ``:fixtures`` and, given a :class:`Vocabulary` (LIBERO's
registries: :func:`memobench.sim.registry.libero_vocabulary`), known problem
and object classes.

The checker tokenizes like LIBERO (``;`` comments dropped, text lower-cased,
tokens are parentheses or runs of other non-space characters), so it judges
the tokens LIBERO would see. Pure text: no simulator import.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass

_TOKEN = re.compile(r"[()]|[^\s()]+")
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:e[+-]?\d+)?")
_NAME = re.compile(r"[a-z_][a-z0-9_]*")
# The sections LIBERO's problem parser reads and MEMOBench uses. (:scene_properties is left out:
# LIBERO's reader of it refers to an undefined variable and fails on any content.)
SECTIONS = (
    "problem",
    ":domain",
    ":requirements",
    ":language",
    ":regions",
    ":fixtures",
    ":objects",
    ":obj_of_interest",
    ":init",
    ":goal",
)
# Region attributes holding rows of numbers -> numbers per row
_NUMERIC_ATTRIBUTES = {":ranges": 4, ":yaw_rotation": 2}
_CONNECTIVES = ("and", "or", "not")


class BddlError(ValueError):
    """BDDL text MEMOBench refuses to hand to LIBERO; the message names the line and what is wrong."""


@dataclass(frozen=True)
class Vocabulary:
    """What LIBERO can build: problem classes (lower case) -> the workspace fixture each one
    provides itself (e.g. ``kitchen_table``), and the registered object classes."""

    problems: dict[str, str]
    object_classes: frozenset[str]


@dataclass
class _Token:
    text: str
    line: int


@dataclass
class _Group:
    items: list[_Token | _Group]
    line: int

    @property
    def head(self) -> str | None:
        first = self.items[0] if self.items else None
        return first.text if isinstance(first, _Token) else None


def _tokens(text: str) -> Iterator[_Token]:
    for number, line in enumerate(text.split("\n"), start=1):
        for match in _TOKEN.finditer(line.split(";", 1)[0].lower()):
            yield _Token(match.group(), number)


def parse_tree(text: str) -> _Group:
    """The single top-level expression of ``text``; BddlError on unbalanced parentheses."""
    stack: list[_Group] = []
    top: list[_Token | _Group] = []
    for token in _tokens(text):
        if token.text == "(":
            stack.append(_Group([], token.line))
        elif token.text == ")":
            if not stack:
                raise BddlError(f"line {token.line}: ')' closes no '('")
            group = stack.pop()
            (stack[-1].items if stack else top).append(group)
        else:
            (stack[-1].items if stack else top).append(token)
    if stack:
        raise BddlError(f"line {stack[-1].line}: '(' is never closed")
    if len(top) != 1 or not isinstance(top[0], _Group):
        raise BddlError("the problem must be one parenthesised expression, (define (problem NAME) ...)")
    return top[0]


def _tokens_only(group: _Group, what: str) -> list[_Token]:
    for item in group.items:
        if isinstance(item, _Group):
            raise BddlError(f"line {item.line}: unexpected '(' in {what}")
    return group.items  # type: ignore[return-value]


def _name(token: _Token | _Group, what: str) -> str:
    if isinstance(token, _Group):
        raise BddlError(f"line {token.line}: {what} must be a name, not a parenthesised group")
    if not _NAME.fullmatch(token.text):
        raise BddlError(f"line {token.line}: {what} {token.text!r} is not a name (letters, digits, _)")
    return token.text


def _number(item: _Token | _Group, what: str) -> float:
    if isinstance(item, _Group) or not _NUMBER.fullmatch(item.text) or not math.isfinite(float(item.text)):
        shown = "a parenthesised group" if isinstance(item, _Group) else repr(item.text)
        raise BddlError(f"line {item.line}: {what} value {shown} is not a number")
    return float(item.text)


def _numbers(item: _Token | _Group, count: int, what: str) -> None:
    if isinstance(item, _Group):
        for value in item.items:  # each value first: the message names a bad token
            _number(value, what)
    if not isinstance(item, _Group) or len(item.items) != count:
        raise BddlError(f"line {item.line}: {what} needs groups of {count} numbers, like ({' '.join(['0.0'] * count)})")


def _declarations(group: _Group, kind: str) -> dict[str, tuple[str, int]]:
    """``a b - class`` groups of an (:objects ...) or (:fixtures ...) section -> name: (class, line)."""
    tokens = _tokens_only(group, f"(:{kind} ...)")[1:]
    found: dict[str, tuple[str, int]] = {}
    classes: set[str] = set()
    names: list[_Token] = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token.text != "-":
            names.append(token)
            i += 1
            continue
        if i + 1 >= len(tokens) or not names:
            raise BddlError(f"line {token.line}: (:{kind} ...) needs 'name... - class'")
        cls = _name(tokens[i + 1], f"(:{kind} ...) class")
        if cls in classes:  # LIBERO keys by class: the earlier line's instances would vanish
            raise BddlError(
                f"line {token.line}: (:{kind} ...) class {cls!r} declared twice; declare all its instances on one line"
            )
        classes.add(cls)
        for name in names:
            found[_name(name, f"(:{kind} ...) instance")] = (cls, name.line)
        names, i = [], i + 2
    if names:
        raise BddlError(f"line {names[0].line}: (:{kind} ...) {' '.join(t.text for t in names)} lack a '- class'")
    return found


def _check_regions(group: _Group, instances: set[str]) -> set[str]:
    """Check every region; returns their full names as LIBERO forms them, ``<target>_<region>``."""
    names = set()
    for region in group.items[1:]:
        if not isinstance(region, _Group) or not region.items:
            raise BddlError(f"line {region.line}: (:regions ...) holds (name (:target ...) ...) groups only")
        name = _name(region.items[0], "region")
        target = None
        for attribute in region.items[1:]:
            if not isinstance(attribute, _Group) or attribute.head is None:
                raise BddlError(
                    f"line {attribute.line}: region {name}: attributes are (:target ...), "
                    "(:ranges ...), (:yaw_rotation ...) or (:rgba ...)"
                )
            key, values = attribute.head, attribute.items[1:]
            what = f"region {name} {key}"
            if key == ":target":
                if len(values) != 1:
                    raise BddlError(f"line {attribute.line}: {what} takes one name")
                target = _name(values[0], f"{what} target")
                if target not in instances:
                    raise BddlError(
                        f"line {attribute.line}: {what}: {target!r} is not declared in "
                        "(:objects ...) or (:fixtures ...)"
                    )
            elif key in _NUMERIC_ATTRIBUTES:
                if len(values) != 1 or not isinstance(values[0], _Group) or not values[0].items:
                    raise BddlError(
                        f"line {attribute.line}: {what} takes one group of rows, like "
                        f"(({' '.join(['0.0'] * _NUMERIC_ATTRIBUTES[key])}))"
                    )
                for row in values[0].items:
                    _numbers(row, _NUMERIC_ATTRIBUTES[key], what)
            elif key == ":rgba":
                if len(values) != 1:
                    raise BddlError(f"line {attribute.line}: {what} takes one group of 4 numbers")
                _numbers(values[0], 4, what)
            else:
                raise BddlError(f"line {attribute.line}: region {name}: unknown attribute {key!r}")
        if target is None:
            raise BddlError(f"line {region.line}: region {name} has no (:target ...)")
        names.add(f"{target}_{name}")
    return names


def _check_atom(atom: _Token | _Group, known: set[str], where: str) -> None:
    """A predicate ``(name arg...)`` or a connective over such; every argument must be declared."""
    if not isinstance(atom, _Group) or atom.head is None:
        raise BddlError(f"line {atom.line}: {where} holds (predicate arg...) groups only")
    if atom.head in _CONNECTIVES:
        if len(atom.items) < 2:
            raise BddlError(f"line {atom.line}: {where}: ({atom.head} ...) is empty")
        for part in atom.items[1:]:
            _check_atom(part, known, where)
        return
    predicate = _name(atom.items[0], f"{where} predicate")
    for argument in atom.items[1:]:
        name = _name(argument, f"{where} ({predicate} ...) argument")
        if name not in known:
            raise BddlError(
                f"line {argument.line}: {where} ({predicate} ...): {name!r} is not declared in "
                "(:objects ...), (:fixtures ...) or (:regions ...)"
            )


def check_problem(text: str, vocabulary: Vocabulary | None = None) -> None:
    """Refuse BDDL problem text LIBERO must not parse; raises :class:`BddlError` (line and reason).

    Without ``vocabulary`` the problem and object classes are not checked (a task
    file can be checked without importing LIBERO); everything else is.
    """
    tree = parse_tree(text)
    if tree.head != "define" or len(tree.items) < 2:
        raise BddlError(f"line {tree.line}: the problem must start (define (problem NAME) ...)")
    sections: dict[str, _Group] = {}
    for section in tree.items[1:]:
        if not isinstance(section, _Group) or section.head not in SECTIONS:
            shown = section.head if isinstance(section, _Group) else section.text
            raise BddlError(f"line {section.line}: unknown section {shown!r}; known: {', '.join(SECTIONS)}")
        if section.head in sections:
            raise BddlError(f"line {section.line}: section {section.head} appears twice")
        sections[section.head] = section
    for required in ("problem", ":objects", ":fixtures", ":init"):
        if required not in sections:
            raise BddlError(f"the problem has no ({required} ...) section")
    problem = sections["problem"]
    if len(problem.items) != 2:
        raise BddlError(f"line {problem.line}: (problem NAME) takes one name")
    problem_name = _name(problem.items[1], "problem")
    for kind in (":language", ":requirements", ":domain"):
        if kind in sections:
            _tokens_only(sections[kind], f"({kind} ...)")

    objects = _declarations(sections[":objects"], "objects")
    fixtures = _declarations(sections[":fixtures"], "fixtures")
    for name in objects.keys() & fixtures.keys():
        raise BddlError(f"line {objects[name][1]}: {name!r} is declared as an object and as a fixture")
    if vocabulary is not None:
        if problem_name not in vocabulary.problems:
            raise BddlError(
                f"line {problem.line}: unknown problem class {problem_name!r}; LIBERO has "
                f"{', '.join(sorted(vocabulary.problems))}"
            )
        workspace = vocabulary.problems[problem_name]
        for kind, declared, allowed in (
            ("object", objects, vocabulary.object_classes),
            ("fixture", fixtures, vocabulary.object_classes | {workspace}),
        ):
            for name, (cls, line) in declared.items():
                if cls not in allowed:
                    raise BddlError(
                        f"line {line}: {kind} {name!r} has unknown class {cls!r} (not in LIBERO's object registry)"
                    )
    instances = set(objects) | set(fixtures)
    regions = _check_regions(sections[":regions"], instances) if ":regions" in sections else set()
    known = instances | regions
    if ":obj_of_interest" in sections:
        for token in _tokens_only(sections[":obj_of_interest"], "(:obj_of_interest ...)")[1:]:
            if _name(token, "(:obj_of_interest ...) entry") not in instances:
                raise BddlError(
                    f"line {token.line}: (:obj_of_interest ...): {token.text!r} is not declared in "
                    "(:objects ...) or (:fixtures ...)"
                )
    for atom in sections[":init"].items[1:]:
        if isinstance(atom, _Group) and atom.head in _CONNECTIVES:
            raise BddlError(f"line {atom.line}: (:init ...) holds plain facts, not ({atom.head} ...)")
        _check_atom(atom, known, "(:init ...)")
    if ":goal" in sections:
        goal = sections[":goal"]
        if len(goal.items) != 2:
            raise BddlError(f"line {goal.line}: (:goal ...) takes one expression, e.g. (And ...)")
        _check_atom(goal.items[1], known, "(:goal ...)")
