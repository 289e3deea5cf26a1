"""Entity names, and when two of them name one thing (the multi-hop walk's matching rules).

Names are normalised (lower case, words joined by "_"). Two names are the same entity when
they are equal, or one is an alias of the other: a leading or trailing run of at least two words
("Moscow State University" ~ "Lomonosov Moscow State University"), a company without its legal
form ("Apple" ~ "Apple Inc."), a full name's first and last word ("Neil Armstrong" ~ "Neil Alden
Armstrong"; two spelled-out middles differ), a given name's short form with the same surname
("Phil Jackson" ~ "Philip Douglas Jackson"), or a person's namesake ("The Porter Wagoner Show").
`lookup` turns names into the exact keys and LIKE patterns the store's entity lookup takes;
`Matcher` decides which of them a found entity is.
"""

from __future__ import annotations

from collections.abc import Iterable

JOINERS = frozenset("of and the de du da di van von der del la le & for on at in y".split())

# A company's legal form is not part of how texts name it: "Apple" ~ "Apple Inc.".
_LEGAL_FORMS = ("inc", "inc.", "corp", "corp.", "corporation", "ltd", "ltd.", "plc", "llc", "gmbh")


def aliases(name: str) -> set[str]:
    """The normalised name, its leading / trailing runs of at least two words, and the name
    without a company's legal form ("apple_inc." -> "apple")."""
    words = name.split("_")
    out = {name}
    for n in range(2, len(words)):
        out.add("_".join(words[:n]))
        out.add("_".join(words[-n:]))
    if len(words) > 1 and words[-1] in _LEGAL_FORMS:
        out.add("_".join(words[:-1]))
    if (short := _first_last(words)) is not None:
        out.add(short)  # "Neil Alden Armstrong" is "Neil Armstrong"
    return out


def _first_last(words: list[str]) -> str | None:
    """A full name's first and last word ("Philip K. Dick", "Philip Kindred Dick": "philip_dick")."""
    if 3 <= len(words) <= 4 and not JOINERS.intersection(words) and not words[-1][:1].isdigit():
        return f"{words[0]}_{words[-1]}"
    return None


# Short forms of first names that share no first three letters with the full one (Phil ~ Philip and
# Doug ~ Douglas match by their prefix).
_SHORT_FORMS = {
    "bill": "william", "billy": "william", "bob": "robert", "bobby": "robert",
    "dick": "richard", "rick": "richard", "jim": "james", "jimmy": "james",
    "jack": "john", "johnny": "john", "ted": "edward", "ed": "edward", "ned": "edward",
    "peggy": "margaret", "meg": "margaret", "betty": "elizabeth", "liz": "elizabeth",
    "beth": "elizabeth", "kate": "katherine", "tony": "anthony", "harry": "henry", "hank": "henry",
    "larry": "lawrence", "chuck": "charles", "charlie": "charles", "joe": "joseph", "tom": "thomas",
    "tommy": "thomas", "sandy": "alexander",
}


def _given(words: list[str]) -> str | None:
    """A person-shaped name's (two to four words, no joiners) first name in full, lower-case."""
    if 2 <= len(words) <= 4 and not JOINERS.intersection(words) and words[0].isalpha() \
            and words[-1].isalpha() and len(words[0]) >= 2:
        return _SHORT_FORMS.get(words[0], words[0])
    return None


def _same_given(a: str, b: str) -> bool:
    """Phil ~ Philip, Doug ~ Douglas, Bill ~ William: one first name starts the other (three to five
    letters), after short forms are spelled out; never a feminine form of a short one (Dan is not
    Danielle, Chris not Christine) nor a place's word (South Africa is not Southern Africa). Two
    names with the same first word are left to the first-and-last rule (Manchester United Football
    Club is not Manchester City Football Club)."""
    if a == b or a in _NOT_GIVEN or b in _NOT_GIVEN:
        return False
    short, full = sorted((_SHORT_FORMS.get(a, a), _SHORT_FORMS.get(b, b)), key=len)
    if short == full:
        return True  # Bill ~ William
    return 3 <= len(short) <= 5 and full.startswith(short) \
        and not (full.endswith(_FEMININE) and not short.endswith(_FEMININE))


_NOT_GIVEN = frozenset("north south east west northern southern eastern western new old great upper lower "
                       "central saint san santa fort port lake mount cape united royal national".split())
_FEMININE = ("a", "ine", "elle", "ette", "ie")
# A longer name that is its first two words' namesake: "The Porter Wagoner Show", "Ed Sullivan Theater".
_EPONYM_ENDINGS = frozenset("show award awards prize trophy medal memorial lecture foundation museum library "
                            "stadium arena theater theatre hall band orchestra quartet trio experience".split())


def _initialled(words: list[str]) -> bool:
    """A full name whose middle is initials only ("philip_k._dick"): it may stand for any middle
    name ("Philip Kindred Dick"), where two spelled-out middles differ ("Manchester United
    Football Club" is not "Manchester City Football Club")."""
    return all(len(w.rstrip(".")) == 1 for w in words[1:-1])


def _lookup_keys(name: str) -> set[str]:
    """Entity names to look up for `name`: its aliases, and for a short name the same name with a
    legal form ("apple" finds "apple_inc."; same_entity needs no such list: stripping suffices)."""
    out = aliases(name)
    if name.count("_") <= 1 and name.rsplit("_", 1)[-1] not in _LEGAL_FORMS:
        out.update(f"{name}_{form}" for form in _LEGAL_FORMS)
    return out


class Matcher:
    """same_entity against a fixed set of names, by index (the walk's inner loop): the names, in
    their given order, that a linked entity is the same entity as; a name in `surnames` also
    matches a full name ending in it, one in `person_surnames` a person-shaped full name (two to
    four words, no joiners: "Jack Tramiel" for "Tramiel", never "University of Toronto")."""

    def __init__(self, names: Iterable[str], surnames: Iterable[str] = (),
                 person_surnames: Iterable[str] = ()) -> None:
        self.order = {n: i for i, n in enumerate(dict.fromkeys(names))}
        self.by_alias: dict[str, set[str]] = {}
        self.by_given: dict[str, set[str]] = {}  # person-shaped names by given-name prefix and surname
        self.by_run: dict[str, set[str]] = {}  # a person's namesakes by the person's two words
        for name in self.order:
            keys = aliases(name)
            words = name.split("_")
            if (short := _first_last(words)) is not None:
                keys.add("\0" + short)  # full names by their first and last word
                if _initialled(words):
                    keys.add("\1" + short)  # ... whose middle is initials
            for key in keys:
                self.by_alias.setdefault(key, set()).add(name)
            if (given := _given(words)) is not None:
                self.by_given.setdefault(f"{given[:3]}_{words[-1]}", set()).add(name)
            if len(words) == 3 and words[-1] in _EPONYM_ENDINGS and not JOINERS.intersection(words):
                self.by_run.setdefault("_".join(words[:2]), set()).add(name)
        self.surnames = {n for n in surnames if n in self.order}
        self.person_surnames = {n for n in person_surnames if n in self.order}

    def __call__(self, other: str) -> list[str]:
        found = set(self.by_alias.get(other, ()))  # other is one of a name's aliases
        found.update(a for a in aliases(other) if a in self.order)  # a name is one of other's
        words = other.split("_")
        if (short := _first_last(words)) is not None:
            found.update(self.by_alias.get(("\0" if _initialled(words) else "\1") + short, ()))
            # ... or a namesake's first two words: "Porter Wayne Wagoner" ~ "Porter Wagoner Show"
            found.update(self.by_run.get(short, ()))
        if (given := _given(words)) is not None:  # "Phil Jackson" ~ "Philip Douglas Jackson"
            found.update(n for n in self.by_given.get(f"{given[:3]}_{words[-1]}", ())
                         if _same_given(words[0], n.split("_")[0]))
        if self.surnames and "_" in other:
            found.update(n for n in self.surnames if other.endswith("_" + n))
        if self.person_surnames and given is not None:
            found.update(n for n in self.person_surnames if other.endswith("_" + n))
        return sorted(found, key=self.order.__getitem__)


def same_entity(a: str, b: str) -> bool:
    """One name against another: exact, an alias either way, or full names whose first and last
    words agree where a middle is initials (the Matcher's rule, for one name)."""
    return bool(Matcher([a])(b))


def like_literal(text: str) -> str:
    """`text` matched literally by LIKE (default escape \\): a name's %, _ and \\ are no wildcards."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def like_words(pattern: str) -> list[str | None]:
    """The words of a lookup() pattern (split at its literal underscores), each unescaped, or
    None where the word holds a wildcard."""
    words: list[str | None] = []
    word, wild, chars = "", False, iter(pattern)
    for c in chars:
        if c == "\\":
            c = next(chars, "")
            if c == "_":
                words.append(None if wild else word)
                word, wild = "", False
                continue
            word += c
        elif c in "%_":
            wild = True
        else:
            word += c
    words.append(None if wild else word)
    return words


def lookup(names: Iterable[str], extra_patterns: Iterable[str] = (),
           surnames: Iterable[str] = ()) -> tuple[list[str], list[str]]:
    """(exact keys, LIKE patterns) that find entities with these names or their aliases (both
    directions), and full names ending in one of `surnames`. Names are matched literally in the
    patterns (like_literal: "100%_pure" finds "100%_pure_co", not "100x_pure_co")."""
    names = [n for n in names if n]
    keys = set()
    for name in names:
        keys |= _lookup_keys(name)
    grown = [n for n in list(names) + list(extra_patterns) if "_" in n]
    lit = like_literal
    patterns = {f"%\\_{lit(n)}" for n in grown} | {f"{lit(n)}\\_%" for n in grown}
    patterns |= {f"%\\_{lit(n)}" for n in surnames}
    # "Neil Armstrong" finds "Neil Alden Armstrong" (same_entity: a full name is its first and last word).
    for n in grown:
        words = n.split("_")
        if len(words) == 2 or (_first_last(words) is not None and _initialled(words)):
            patterns.add(f"{lit(words[0])}\\_%\\_{lit(words[-1])}")
        if len(words) == 3 and words[-1] in _EPONYM_ENDINGS and not JOINERS.intersection(words):
            patterns.add(f"{lit(words[0])}\\_%\\_{lit(words[1])}")  # "porter_wagoner_show" finds "porter_wayne_wagoner"
        if (given := _given(words)) is not None:  # "Phil Jackson" finds "Philip Douglas Jackson"
            patterns.add(f"{lit(given[:3])}%\\_{lit(words[-1])}")
            keys.update(f"{short}_{words[-1]}" for short, full in _SHORT_FORMS.items() if full == given)
    return sorted(keys), sorted(patterns)
