"""Ranked search over an assistant's tools, for the model's `search_tools` tool (offered_tools.py).

A tool is found by its name, title, description, argument names (and their descriptions) and its
server's name, ranked with BM25 (Okapi, as Lucene scores it) over fields of different weights: a word
of the name counts more than one of the description. Everything is local and in memory: no network,
no embedding model. Words are folded to lower case, split at snake_case, kebab-case, dots and
camelCase, lightly stemmed ("invoices", "invoiced" and "invoice" meet), a word also finds at half
weight the words tools use for the same thing ("undo" finds "revert"), and Chinese, Japanese or
Korean text, which has no spaces, is cut into characters and pairs of characters, so a server that
describes its tools in one of those languages is found in it too.

The ranking is written here rather than taken from rank-bm25 (installable, 0.2.2): that package
needs numpy, which neither Odoo 18 nor this addon otherwise installs into Odoo's Python, scores a
single bag of words (no field weights: a word of a tool's name would count no more than one of its
description), forks a multiprocessing pool when given a tokenizer (not something to do inside an
Odoo worker), and has had no release since 2022. The whole formula is the 20 lines of `search`.

An index is built from the tools as the turn binds them, and cached by their text: a tool a sync
(or a server's list_changed) added, changed or removed makes a new index on the next turn.
"""

from __future__ import annotations

import functools
import heapq
import math
import re
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

# BM25's usual constants (Lucene's defaults)
K1 = 1.2
B = 0.75
# how much a word counts by where it is
FIELD_WEIGHTS = {"name": 3.0, "title": 2.0, "arguments": 1.5, "server": 1.0, "description": 1.0}
MAX_RESULTS = 5
SUMMARY_CHARS = 140
INDEX_CACHE_SIZE = 32

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_CJK = re.compile("[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af\uf900-\ufaff]")
_STOP_WORDS = frozenset(
    "a an and are as at be by can do for from has have how i if in into is it its me my no not of on or "
    "our so that the their them then this to use used uses using was we what when which will with you your".split()
)


# A model searching words its query after the task ("undo a commit", "find files by name"), and a
# server words its tools after its own vocabulary ("revert", "search"): the words of each group stand
# for one another, at a lower weight than the word itself. Written here because no offline thesaurus
# ships as a package without a corpus to download (WordNet through nltk), and tool vocabulary is
# narrow: a few dozen verbs and nouns of tool names.
RELATED_WEIGHT = 0.5
_RELATED_GROUPS = (
    "find search lookup locate",
    "undo revert reverse rollback",
    "delete remove drop erase",
    "create new make add",
    "show get display view read fetch",
    "column field attribute",
    "folder directory",
    "email mail",
    "meeting event appointment",
    "customer client partner contact",
    "unpaid overdue outstanding",
    "slow slowest",
    "vacation leave holiday",
)


@dataclass(frozen=True)
class SearchableTool:
    """What a tool is found by. `name` is the name the model calls it by."""

    name: str
    title: str
    description: str
    server: str
    arguments: tuple[str, ...] = ()  # argument names and their descriptions

    @classmethod
    def of(cls, name: str, title: str | None, description: str, server: str, schema: dict[str, Any]) -> SearchableTool:
        return cls(name, title or "", description or "", server, tuple(_argument_words(schema)))

    def summary(self) -> str:
        """The tool in one line: its description's first sentence, else its title."""
        text = " ".join(self.description.split())
        first = re.split(r"(?<=[.!?])\s", text, maxsplit=1)[0] if text else self.title or self.name
        return first if len(first) <= SUMMARY_CHARS else first[: SUMMARY_CHARS - 1].rstrip() + "…"


class ToolIndex:
    """BM25 over weighted fields of a fixed list of tools. Each word's score in each tool is worked
    out once, when the index is built: a search only adds up those of its words."""

    def __init__(self, tools: Sequence[SearchableTool]) -> None:
        self.tools = tuple(tools)
        self._by_name = {tool.name: doc for doc, tool in reversed(list(enumerate(self.tools)))}
        frequencies: list[Counter[str]] = []
        for tool in self.tools:
            weighted: Counter[str] = Counter()
            for field_name, text in _fields(tool):
                weight = FIELD_WEIGHTS[field_name]
                for term in tokens(text):
                    weighted[term] += weight
            frequencies.append(weighted)
        lengths = [sum(weighted.values()) for weighted in frequencies]
        average = (sum(lengths) / len(lengths)) if lengths else 1.0
        documents: Counter[str] = Counter(term for weighted in frequencies for term in weighted)
        self._postings: dict[str, list[tuple[int, float]]] = defaultdict(list)
        for doc, weighted in enumerate(frequencies):
            norm = K1 * (1 - B + B * lengths[doc] / (average or 1.0))
            for term, frequency in weighted.items():
                score = _idf(len(self.tools), documents[term]) * frequency * (K1 + 1) / (frequency + norm)
                self._postings[term].append((doc, score))

    def search(self, query: str, limit: int = MAX_RESULTS) -> list[SearchableTool]:
        """The tools that best match `query`, best first, at most `limit`; ties keep the index's
        order. A query that is a tool's exact name finds it first. A word also finds, at a lower
        weight, the words tools use for the same thing (`related`)."""
        scores: dict[int, float] = defaultdict(float)
        for term, weight in _weighted_terms(tokens(query)).items():
            for doc, score in self._postings.get(term, ()):
                scores[doc] += weight * score
        exact = self._by_name.get(query.strip())
        if exact is not None:
            scores[exact] = math.inf
        best = heapq.nsmallest(limit, scores.items(), key=lambda item: (-item[1], item[0]))
        return [self.tools[doc] for doc, score in best if score > 0]


@functools.lru_cache(maxsize=INDEX_CACHE_SIZE)
def index_of(tools: tuple[SearchableTool, ...]) -> ToolIndex:
    """The index of `tools`, built once for as long as they stay the same."""
    return ToolIndex(tools)


def _weighted_terms(terms: Iterable[str]) -> dict[str, float]:
    """Each query term at weight 1, and the terms related to it at RELATED_WEIGHT where the query
    does not hold them itself."""
    weights = dict.fromkeys(terms, 1.0)
    for term in list(weights):
        for other in related(term):
            weights.setdefault(other, RELATED_WEIGHT)
    return weights


def related(term: str) -> frozenset[str]:
    """The stemmed words that tools' names and descriptions use for what `term` means, itself left out."""
    return _RELATED.get(term, frozenset()) - {term}


def _idf(count: int, documents: int) -> float:
    """BM25's inverse document frequency as Lucene has it: never negative, even for a word most tools have."""
    return math.log(1 + (count - documents + 0.5) / (documents + 0.5))


def tokens(text: str) -> list[str]:
    """The search terms of `text`: words split at case changes and separators, folded, stemmed."""
    terms: list[str] = []
    for word in _WORD.findall(unicodedata.normalize("NFKC", text)):
        if _has_cjk(word):
            terms += _cjk_terms(word)
            continue
        parts = (_CAMEL.findall(word) if word.isascii() else None) or [word]
        for part in parts:
            folded = part.lower()
            if folded not in _STOP_WORDS:
                terms.append(stem(folded))
    return terms


def stem(word: str) -> str:
    """A light English stem: plural, verb and superlative endings off, so that the forms of a word meet."""
    if len(word) <= 3 or word.isdigit():
        return word
    if word.endswith("est") and len(word) >= 7:
        word = word[:-3]
    if word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith(("sses", "xes", "ches", "shes")):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    for suffix in ("ing", "ed"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    if word.endswith("e") and len(word) > 4:
        word = word[:-1]
    return word


def _fields(tool: SearchableTool) -> Iterable[tuple[str, str]]:
    yield "name", tool.name
    yield "title", tool.title
    yield "description", tool.description
    yield "server", tool.server
    for words in tool.arguments:
        yield "arguments", words


def _argument_words(schema: dict[str, Any], depth: int = 0) -> Iterable[str]:
    """The names of a schema's properties (nested ones too, a few levels down) and their descriptions."""
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(properties, dict) or depth > 2:
        return
    for name, prop in properties.items():
        yield str(name)
        if isinstance(prop, dict):
            if isinstance(prop.get("description"), str):
                yield prop["description"]
            yield from _argument_words(prop, depth + 1)
            if isinstance(prop.get("items"), dict):
                yield from _argument_words(prop["items"], depth + 1)


def _has_cjk(word: str) -> bool:
    return _CJK.search(word) is not None


def _is_cjk(char: str) -> bool:
    return _CJK.match(char) is not None


def _cjk_terms(word: str) -> list[str]:
    """A run of CJK text as its characters and the pairs they make; other scripts inside it as words."""
    terms: list[str] = []
    run: list[str] = []
    other: list[str] = []

    def close_run() -> None:
        terms.extend(run)
        terms.extend(a + b for a, b in zip(run, run[1:], strict=False))
        run.clear()

    def close_other() -> None:
        if other:
            terms.extend(tokens("".join(other)))
            other.clear()

    for char in word:
        if _is_cjk(char):
            close_other()
            run.append(char)
        else:
            close_run()
            other.append(char)
    close_run()
    close_other()
    return terms


_RELATED: dict[str, frozenset[str]] = {
    stem(word): group
    for group in (frozenset(stem(word) for word in line.split()) for line in _RELATED_GROUPS)
    for word in group
}
