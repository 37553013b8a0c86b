"""Names a BDDL problem declares (objects, fixtures, regions), read without a simulator.

Used by task validation to catch a misspelt object in a predicate before any
environment is built. This reads only the sections we need; LIBERO parses the
file for real when the environment is built.
"""

from __future__ import annotations

import re

from memobench.core.bddl_check import parse_tree

_SECTION = re.compile(r"\(:(objects|fixtures)\s(.*?)\)", re.S)
_REGION = re.compile(r"\(\s*([A-Za-z0-9_]+)\s*\(:target\s+([A-Za-z0-9_]+)\s*\)")


class BddlDeclarationError(ValueError):
    """A declaration LIBERO would silently mis-read."""


def _declarations(kind: str, body: str) -> list[tuple[list[str], str]]:
    """Parse ``a b - category`` groups of one section into ([names], category)."""
    groups, names = [], []
    tokens = body.split()
    i = 0
    while i < len(tokens):
        if tokens[i] == "-" and i + 1 < len(tokens):
            if not names:
                raise BddlDeclarationError(f"(:{kind} ...): category {tokens[i + 1]!r} has no instances")
            groups.append((names, tokens[i + 1]))
            names, i = [], i + 2
        else:
            names.append(tokens[i])
            i += 1
    if names:
        raise BddlDeclarationError(f"(:{kind} ...): {' '.join(names)} lack a '- category'")
    return groups


def declared_instances(bddl: str) -> dict[str, str]:
    """Map instance name -> category for every object and fixture of the problem.

    LIBERO keys declarations by category, so a category declared on two lines
    loses the first line's instances; that is reported as an error here.
    """
    found: dict[str, str] = {}
    for kind, body in _SECTION.findall(bddl):
        seen: set[str] = set()
        for names, category in _declarations(kind, body):
            if category in seen:
                raise BddlDeclarationError(
                    f"(:{kind} ...): category {category!r} declared twice; LIBERO keeps only the last "
                    f"line, declare all its instances on one line (e.g. `{category}_1 {category}_2 - {category}`)"
                )
            seen.add(category)
            found.update(dict.fromkeys(names, category))
    return found


def declared_section(bddl: str, kind: str) -> dict[str, str]:
    """Map instance name -> category for one section, ``"objects"`` or ``"fixtures"``."""
    found: dict[str, str] = {}
    for section, body in _SECTION.findall(bddl):
        if section == kind:
            for names, category in _declarations(section, body):
                found.update(dict.fromkeys(names, category))
    return found


def declared_regions(bddl: str) -> set[str]:
    """Full names of declared regions, as LIBERO names them: ``<target>_<region>``."""
    return {f"{target}_{name}" for name, target in _REGION.findall(bddl)}


def declared_names(bddl: str) -> set[str]:
    """Every name a predicate may refer to in this problem."""
    return set(declared_instances(bddl)) | declared_regions(bddl)


def start_regions(bddl: str) -> dict[str, tuple[str, tuple[float, float, float, float]]]:
    """Object -> (the full name of the region ``:init`` puts it ``On``, that region's first
    ``:ranges`` row: x0 y0 x1 y1), for each object started on a region with ranges. Names
    come lower-cased, as LIBERO reads them; the text is a checked problem (a task's)."""
    sections = {item.head: item for item in parse_tree(bddl).items[1:] if hasattr(item, "head")}
    ranges = {}
    for region in sections[":regions"].items[1:] if ":regions" in sections else ():
        attributes = {attribute.head: attribute.items[1:] for attribute in region.items[1:]}
        if ":target" in attributes and ":ranges" in attributes:
            row = attributes[":ranges"][0].items[0].items
            ranges[f"{attributes[':target'][0].text}_{region.items[0].text}"] = tuple(float(t.text) for t in row[:4])
    found = {}
    for atom in sections[":init"].items[1:]:
        if atom.head == "on" and len(atom.items) == 3 and atom.items[2].text in ranges:
            found[atom.items[1].text] = (atom.items[2].text, ranges[atom.items[2].text])
    return found


def start_containers(bddl: str) -> dict[str, str]:
    """Object -> the full name of the region ``:init`` puts it ``In`` (a drawer's inside: the
    object rides with it), for each object so started. Lower-cased, as LIBERO reads them; the
    text is a checked problem (a task's)."""
    sections = {item.head: item for item in parse_tree(bddl).items[1:] if hasattr(item, "head")}
    regions = {name.lower() for name in declared_regions(bddl)}
    return {
        atom.items[1].text: atom.items[2].text
        for atom in sections[":init"].items[1:]
        if atom.head == "in" and len(atom.items) == 3 and atom.items[2].text in regions
    }
