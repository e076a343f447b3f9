"""The content-bearing inline templates rendered as text; every other template is dropped.

Rendered (names case-insensitive, ``_`` = space; aliases in :data:`RENDERERS`):

- dates: ``birth date``, ``death date``, ``birth date and age`` (age at the revision date, so output is
  deterministic), ``death date and age``, ``birth year and age``, ``death year and age``, ``start date``,
  ``end date``, ``film date``, ``dts``, ``as of``, ``circa``, ``floruit``;
- quantities: ``convert``/``cvt`` (the input value and unit), ``frac``, ``US$``, ``nts``;
- language and wrapping: ``lang``, ``lang-xx``, ``langx``, ``transl``, ``nihongo``, ``script``, ``nowrap``,
  ``nobr``, ``small``, ``big``, ``em``, ``abbr``, ``sic``, ``not a typo``, ``visible anchor``, ``mvar``,
  ``math``, ``ill``, ``sortname``, ``sort``, ``flag``/``flagcountry`` (the name), ``marriage``, ``quote``;
- lists: ``hlist``, ``flatlist``, ``plainlist``, ``ubl``/``unbulleted list``;
- punctuation: ``ndash``, ``mdash``, ``snd``, ``spaced ndash``, ``·``/``middot``, ``bull``, ``!``, ``=``,
  ``'``, ``nbsp``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date

MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
NAMED_PARAM = re.compile(r"^\s*([^=\[\]{}|]{1,40}?)\s*=(.*)$", re.DOTALL)


class TemplateCall:
    """A parsed template: its normalised name, positional and named parameters (already rendered)."""

    __slots__ = ("args", "kwargs", "name")

    def __init__(self, name: str, params: list[str]) -> None:
        self.name = normalise_name(name)
        self.args: list[str] = []
        self.kwargs: dict[str, str] = {}
        for param in params:
            named = NAMED_PARAM.match(param)
            if named:
                self.kwargs[named.group(1).strip().lower()] = named.group(2).strip()
            else:
                self.args.append(param.strip())

    def arg(self, i: int, default: str = "") -> str:
        return self.args[i] if i < len(self.args) else default


def normalise_name(name: str) -> str:
    name = name.replace("_", " ").strip()
    if name.lower().startswith("template:"):
        name = name[9:]
    return " ".join(name.split()).lower()


def _int(value: str) -> int | None:
    value = value.strip()
    return int(value) if value.isdigit() else None


def _date_args(args: list[str]) -> tuple[int, int | None, int | None] | None:
    nums = [_int(a) for a in args[:3]]
    if not nums or nums[0] is None:
        return None
    month = nums[1] if len(nums) > 1 and nums[1] and 1 <= nums[1] <= 12 else None
    day = nums[2] if len(nums) > 2 and nums[2] and 1 <= nums[2] <= 31 and month else None
    return nums[0], month, day


def format_date(parts: tuple[int, int | None, int | None] | None, month_first: bool = False) -> str:
    if parts is None:
        return ""
    year, month, day = parts
    if month is None:
        return str(year)
    if day is None:
        return f"{MONTHS[month - 1]} {year}"
    return f"{MONTHS[month - 1]} {day}, {year}" if month_first else f"{day} {MONTHS[month - 1]} {year}"


def _age(born: tuple[int, int | None, int | None], at: tuple[int, int | None, int | None]) -> int:
    years = at[0] - born[0]
    if born[1] and at[1] and (at[1], at[2] or 1) < (born[1], born[2] or 1):
        years -= 1
    return years


def _month_first(call: TemplateCall) -> bool:
    return call.kwargs.get("mf", "").lower() in ("y", "yes") or "mf" in [a.lower() for a in call.args]


def _numeric_args(call: TemplateCall) -> list[str]:
    return [a for a in call.args if a.lower() not in ("df=y", "mf=y", "df", "mf", "y", "yes")]


def _date(call: TemplateCall, today: date | None) -> str:
    return format_date(_date_args(_numeric_args(call)), _month_first(call))


def _birth_date_and_age(call: TemplateCall, today: date | None) -> str:
    born = _date_args(_numeric_args(call))
    if born is None:
        return ""
    text = format_date(born, _month_first(call))
    return f"{text} (age {_age(born, (today.year, today.month, today.day))})" if today else text


def _death_date_and_age(call: TemplateCall, today: date | None) -> str:
    args = _numeric_args(call)
    died, born = _date_args(args[:3]), _date_args(args[3:6])
    if died is None:
        return ""
    text = format_date(died, _month_first(call))
    return f"{text} (aged {_age(born, died)})" if born else text


def _birth_year_and_age(call: TemplateCall, today: date | None) -> str:
    year = _int(call.arg(0))
    if not year:
        return ""
    return f"{year} (age {today.year - year - 1}–{today.year - year})" if today else str(year)


def _death_year_and_age(call: TemplateCall, today: date | None) -> str:
    died, born = _int(call.arg(0)), _int(call.arg(1))
    if not died:
        return ""
    return f"{died} (aged {died - born - 1}–{died - born})" if born else str(died)


def _convert(call: TemplateCall, today: date | None) -> str:
    args = call.args
    if len(args) >= 4 and args[1] in ("-", "–", "to", "and", "or", "by", "x", "×", "+/-", "±"):
        joiner = "–" if args[1] in ("-", "–") else f" {args[1]} "
        return f"{args[0]}{joiner}{args[2]} {args[3]}"
    return " ".join(a for a in args[:2] if a)


def _nihongo(call: TemplateCall, today: date | None) -> str:
    english, extra = call.arg(0), [a for a in call.args[1:3] if a]
    return f"{english} ({', '.join(extra)})" if english and extra else english or ", ".join(extra)


def _frac(call: TemplateCall, today: date | None) -> str:
    args = call.args
    if len(args) >= 3:
        return f"{args[0]} {args[1]}/{args[2]}"
    if len(args) == 2:
        return f"{args[0]}/{args[1]}"
    return f"1/{args[0]}" if args else ""


def _marriage(call: TemplateCall, today: date | None) -> str:
    name, years = call.arg(0), [a for a in call.args[1:3] if a]
    return f"{name} (m. {'–'.join(years)})" if years else name


def _list_items(call: TemplateCall, today: date | None) -> str:
    items: list[str] = []
    for arg in call.args:
        items.extend(line.lstrip("*#: ").strip() for line in arg.splitlines())
    return ", ".join(i for i in items if i)


def _flag(call: TemplateCall, today: date | None) -> str:
    return call.kwargs.get("name") or call.arg(0)


def _circa(call: TemplateCall, today: date | None) -> str:
    return f"c. {call.arg(0)}".strip()


def _floruit(call: TemplateCall, today: date | None) -> str:
    return f"fl. {call.arg(0)}".strip()


def _as_of(call: TemplateCall, today: date | None) -> str:
    return f"As of {format_date(_date_args(call.args))}"


def _arg(index: int) -> Callable[[TemplateCall, date | None], str]:
    return lambda call, today: call.arg(index)


def _last_arg(call: TemplateCall, today: date | None) -> str:
    return call.args[-1] if call.args else ""


def _constant(text: str) -> Callable[[TemplateCall, date | None], str]:
    return lambda call, today: text


RENDERERS: dict[str, Callable[[TemplateCall, date | None], str]] = {
    **dict.fromkeys(
        ["birth date", "death date", "start date", "end date", "film date", "dts", "date"], _date
    ),
    **dict.fromkeys(["birth date and age", "bda", "birth-date and age"], _birth_date_and_age),
    **dict.fromkeys(["death date and age", "dda"], _death_date_and_age),
    "birth year and age": _birth_year_and_age,
    "death year and age": _death_year_and_age,
    **dict.fromkeys(["circa", "c."], _circa),
    **dict.fromkeys(["floruit", "fl."], _floruit),
    "as of": _as_of,
    **dict.fromkeys(["convert", "cvt"], _convert),
    **dict.fromkeys(["frac", "fraction", "sfrac"], _frac),
    "us$": lambda call, today: f"US${call.arg(0)}",
    **dict.fromkeys(
        [
            "nts",
            "ntsh",
            "nowrap",
            "nobr",
            "small",
            "smaller",
            "big",
            "larger",
            "em",
            "strong",
            "nobold",
            "noitalic",
            "abbr",
            "sic",
            "not a typo",
            "proper name",
            "as written",
            "visible anchor",
            "vanchor",
            "mvar",
            "var",
            "math",
            "ill",
            "interlanguage link",
            "quote",
            "cquote",
            "blockquote",
            "quotation",
            "keypress",
            "code",
            "section link",
            "no wrap",
            "noflag",
            "lang-en",
            "chem2",
            "center",
            "centre",
            "nihongo2",
            "grapheme",
            "ipa",
            "ipablink",
            "ipa link",
            "sub",
            "sup",
        ],
        _arg(0),
    ),
    **dict.fromkeys(["angbr", "angle bracket"], lambda call, today: f"⟨{call.arg(0)}⟩"),
    **dict.fromkeys(["lang", "langx", "transl", "transliteration", "script", "resize", "sort"], _last_arg),
    "nihongo": _nihongo,
    "sortname": lambda call, today: " ".join(a for a in call.args[:2] if a),
    **dict.fromkeys(["flag", "flagcountry", "flagu", "flag country", "flagdeco"], _flag),
    "marriage": _marriage,
    **dict.fromkeys(
        [
            "hlist",
            "flatlist",
            "plainlist",
            "ubl",
            "unbulleted list",
            "plain list",
            "flat list",
            "bulleted list",
            "ordered list",
        ],
        _list_items,
    ),
    **dict.fromkeys(["ndash", "–", "en dash"], _constant("–")),
    **dict.fromkeys(["mdash", "—", "em dash"], _constant("—")),
    **dict.fromkeys(["snd", "spaced ndash", "spnd", "sndash"], _constant(" – ")),
    **dict.fromkeys(["·", "middot", "dot", "dot-sep", "•", "bull", "bullet"], _constant(" · ")),
    "!": _constant("|"),
    "=": _constant("="),
    "'": _constant("'"),
    **dict.fromkeys(["nbsp", "spaces", "sp"], _constant(" ")),
}


def render_template(call: TemplateCall, today: date | None) -> str | None:
    """The text of a known inline template, or None for a template to drop."""
    renderer = RENDERERS.get(call.name)
    if renderer is None and call.name.startswith("lang-"):
        renderer = _last_arg
    if renderer is None:
        return None
    return renderer(call, today)


def is_rendered(name: str) -> bool:
    """Whether a template of this (normalised) name renders as text."""
    return name in RENDERERS or name.startswith("lang-")
