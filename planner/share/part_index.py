"""An index over one catalog category so that matching an imported row costs the few parts that can match, not all.

`match_part` on a pasted list asks three questions per row: is the text a part's id or exact name, is it a
fragment found in exactly one part, and which parts score best (`catalog.match.rank`). Asked of every part,
each row of a list cost seconds on a 100 000-part catalog. The index answers the same questions with the same
answers: exact names by dictionary, fragments by searching one joined text for the rarest word, and scoring
only parts whose plain numbers all appear in the row (`coverage` gives every other part zero).
"""

from __future__ import annotations

import bisect
import re
from collections import OrderedDict
from typing import TYPE_CHECKING, Optional, Sequence

from planner.catalog.match import PartLike, normalise

if TYPE_CHECKING:
    from planner.catalog.load import Catalog

_SEP = "\x00"  # between parts in the joined text; a fragment that spans it is checked against each part again


def _digit_tokens(part: PartLike) -> frozenset[str]:
    """The plain numbers of brand + name outside parentheses: a query missing one scores zero (`coverage`)."""
    main = re.sub(r"\([^)]*\)", " ", f"{part.brand} {part.name}")
    return frozenset(t for t in normalise(main) if t.isdigit())


class PartIndex:
    """Exact names, fragments and scoring candidates of one pool of parts, in the pool's order."""

    def __init__(self, parts: Sequence[PartLike]) -> None:
        self.parts = list(parts)
        self.exact: dict[str, PartLike] = {}
        texts = []
        self.by_number: dict[str, list[int]] = {}
        self.no_number: list[int] = []
        self.numbers: list[frozenset[str]] = []
        for i, p in enumerate(self.parts):
            name = " ".join(p.name.lower().split())
            brand = " ".join(p.brand.lower().split())
            bare = name[len(brand):].strip() if brand and name.startswith(brand + " ") else name
            for key in (p.id.lower(), name, bare, f"{brand} {name}"):
                self.exact.setdefault(key, p)  # the first part wins, as catalog.match.exact's scan does
            texts.append(f"{p.id} {p.brand} {p.name}".lower())
            numbers = _digit_tokens(p)
            self.numbers.append(numbers)
            if numbers:
                self.by_number.setdefault(min(numbers), []).append(i)
            else:
                self.no_number.append(i)
        self.texts = texts
        self.starts = []
        pos = 0
        for t in texts:
            self.starts.append(pos)
            pos += len(t) + 1
        self.blob = _SEP.join(texts)

    def find_exact(self, query: str) -> Optional[PartLike]:
        """catalog.match.exact: the part whose id, name or brand + name is the query (case and spacing ignored)."""
        return self.exact.get(" ".join(query.lower().split()))

    def containing(self, words: Sequence[str]) -> list[PartLike]:
        """The parts whose `id brand name` holds every word (as catalog.match.resolve's fragment step), in order.
        Only the rarest word's occurrences are visited."""
        if not words:
            return []
        rarest = min(words, key=self.blob.count)
        hits: list[int] = []
        at = self.blob.find(rarest)
        while at >= 0:
            i = bisect.bisect_right(self.starts, at) - 1
            if not hits or hits[-1] != i:
                hits.append(i)
            at = self.blob.find(rarest, self.starts[i + 1] if i + 1 < len(self.starts) else len(self.blob))
        return [self.parts[i] for i in hits if all(w in self.texts[i] for w in words)]

    def candidates(self, query: str) -> list[PartLike]:
        """Parts that can score above zero for the query: those whose plain numbers are all in it (and those
        without any), in the pool's order; `rank` over these equals `rank` over the pool."""
        tokens = set(normalise(query))
        picked = list(self.no_number)
        for t in tokens:
            for i in self.by_number.get(t, ()):
                if self.numbers[i] <= tokens:
                    picked.append(i)
        return [self.parts[i] for i in sorted(set(picked))]


_CACHE: "OrderedDict[tuple[int, Optional[str]], tuple[Catalog, PartIndex, int]]" = OrderedDict()
_CACHE_SIZE = 16


def index_for(catalog: "Catalog", category: Optional[str]) -> PartIndex:
    """The index of a catalog's category (None: every part), built once per catalog object and reused."""
    key = (id(catalog), category)
    hit = _CACHE.get(key)
    if hit is not None and hit[0] is catalog and hit[2] == len(catalog.parts):
        _CACHE.move_to_end(key)
        return hit[1]
    index = PartIndex(list(catalog.parts.values()) if category is None else catalog.by_category(category))
    _CACHE[key] = (catalog, index, len(catalog.parts))
    while len(_CACHE) > _CACHE_SIZE:
        _CACHE.popitem(last=False)
    return index
