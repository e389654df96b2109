"""A small CSS-selector to XPath translator (tag, #id, .class, [attr], [attr=v], [attr*=v], ' ', '>', ',')."""

from __future__ import annotations

import re
from functools import lru_cache

from lxml import etree

_TOKEN = re.compile(
    r"""\s*(?P<comb>>)\s*|(?P<ws>\s+)|(?P<tag>[a-zA-Z][\w-]*|\*)|\#(?P<id>[\w-]+)|\.(?P<cls>[\w-]+)|"""
    r"""\[(?P<attr>[\w:-]+)(?:(?P<op>[*^$~]?=)["']?(?P<val>[^\]"']*)["']?)?\]"""
)


def _lit(s: str) -> str:
    return f'"{s}"' if '"' not in s else f"'{s}'"


def _compound(parts: list[str], tag: str) -> str:
    return tag + "".join(f"[{p}]" for p in parts)


@lru_cache(maxsize=256)
def css_to_xpath(css: str) -> str:
    """Translate the supported subset of CSS to an XPath (ValueError on anything else)."""
    groups = []
    for group in css.split(","):
        group = group.strip()
        if not group:
            continue
        xpath = "descendant-or-self::"
        axis_next = ""
        tag, preds = "*", []
        pos = 0
        pending = False
        while pos < len(group):
            m = _TOKEN.match(group, pos)
            if not m or m.end() == pos:
                raise ValueError(f"unsupported CSS selector {css!r}")
            pos = m.end()
            if m.group("comb") or m.group("ws"):
                if pending:
                    xpath += axis_next + _compound(preds, tag)
                    axis_next = "/" if m.group("comb") else "//"
                    tag, preds, pending = "*", [], False
                elif m.group("comb"):
                    axis_next = "/"
                continue
            pending = True
            if m.group("tag"):
                tag = m.group("tag").lower()
            elif m.group("id"):
                preds.append(f"@id={_lit(m.group('id'))}")
            elif m.group("cls"):
                preds.append(f"contains(concat(' ',normalize-space(@class),' '),{_lit(' ' + m.group('cls') + ' ')})")
            elif m.group("attr"):
                a, op, v = m.group("attr"), m.group("op"), m.group("val")
                if not op:
                    preds.append(f"@{a}")
                elif op == "=":
                    preds.append(f"@{a}={_lit(v)}")
                elif op == "*=":
                    preds.append(f"contains(@{a},{_lit(v)})")
                elif op == "^=":
                    preds.append(f"starts-with(@{a},{_lit(v)})")
                elif op == "~=":
                    preds.append(f"contains(concat(' ',normalize-space(@{a}),' '),{_lit(' ' + v + ' ')})")
                else:
                    raise ValueError(f"unsupported CSS operator {op!r} in {css!r}")
        if pending:
            xpath += axis_next + _compound(preds, tag)
        groups.append(xpath)
    if not groups:
        raise ValueError(f"empty CSS selector {css!r}")
    return " | ".join(groups)


def select(root: etree._Element, css: str) -> list[etree._Element]:
    """Elements matching `css` in document order; an unsupported selector matches nothing."""
    try:
        return root.xpath(css_to_xpath(css))
    except (ValueError, etree.XPathError):
        return []
