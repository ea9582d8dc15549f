"""Catalogues of env ids: what a plugin's ``crax_register_catalogues`` hook returns.

Every env id ``crax.make`` builds comes from one catalogue in the registry
(:meth:`crax.plugins.manager.Registry.env_ids`, :meth:`~crax.plugins.manager.Registry.resolve`).
A catalogue lists its ids and says how to build each: the body class, the suite class and the
level ``crax.make`` composes (:data:`Task`). crax registers two, through the same hook as any
plugin (:mod:`crax.plugins.builtin`):

- :data:`PAPER` (``PointGoal1``): ``{Body}{Suite}{Level}`` over the registered bodies and suites,
  plugins' included;
- Safety-Gymnasium's own tasks (``SafetyPointGoal1-v0``): a fixed table,
  :mod:`crax.suites.safety_gym.catalogue`.

A plugin adds its own catalogue (a family of ids, a vision twin of a task, a split of it) by
returning a :class:`Catalogue` (often a :class:`TableCatalogue`) from ``crax_register_catalogues``.
Catalogues read the registry they are asked through (an argument, never an import), so this
module sits below :mod:`crax.plugins`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from crax.suites.base import Suite

Task = tuple[type, type[Suite], int]
"""How an id is built: (body class, suite class, level); ``crax.make`` composes ``suite(body(), level)``."""


def supports(suite: type[Suite], body: type) -> bool:
    """Whether ``suite`` accepts ``body`` (the body's kinds include everything the suite requires)."""
    return suite.requires <= body.kinds and (suite.default_body is None or suite.default_body == body.name)


class Catalogue:
    """A named set of env ids and how to build each.

    Attributes:
      name: the catalogue's registry name (unique among the installed plugins' catalogues).
      title: the heading ``crax list`` prints above its ids.
      form: a regular expression every id of the catalogue matches in full; an id of that form
        the catalogue does not list is explained by :meth:`lookup`'s error, not the generic one.
    """

    name: str
    title: str
    form: re.Pattern[str]

    def ids(self, registry: Any) -> list[str]:
        """Every id of the catalogue, in the order ``crax.env_ids()`` and ``crax list`` give them."""
        raise NotImplementedError

    def lookup(self, env_id: str, registry: Any) -> Task:
        """The :data:`Task` of ``env_id``; ValueError naming the valid choices where it is not one."""
        raise NotImplementedError

    def claims(self, env_id: object) -> bool:
        """Whether ``env_id`` has the catalogue's :attr:`form` (listed or not)."""
        return isinstance(env_id, str) and self.form.fullmatch(env_id) is not None


class TableCatalogue(Catalogue):
    """A catalogue of a fixed table: id -> :data:`Task`, built on first use by ``table()``.

    An id of the catalogue's form that the table lacks is a ValueError "``'<id>' is not <what>;
    <listed>: <every id><hint>``"."""

    def __init__(self, name: str, title: str, form: str, table: Callable[[], Mapping[str, Task]], *,
                 what: str | None = None, listed: str = "valid ids", hint: str = ""):
        self.name = name
        self.title = title
        self.form = re.compile(form)
        self._build = table
        self._table: dict[str, Task] | None = None
        self.what = what or f"an id of the catalogue {name!r}"
        self.listed = listed
        self.hint = hint

    def table(self) -> dict[str, Task]:
        if self._table is None:
            self._table = dict(self._build())
        return self._table

    def ids(self, registry: Any = None) -> list[str]:
        return list(self.table())

    def lookup(self, env_id: str, registry: Any = None) -> Task:
        found = self.table().get(env_id)
        if found is None:
            raise ValueError(f"{env_id!r} is not {self.what}; {self.listed}: {', '.join(self.table())}{self.hint}")
        return found


class PaperCatalogue(Catalogue):
    """The ids ``{Body}{Suite}{Level}`` (``PointGoal1``, ``SpiderLegs2``) of the registered bodies
    and suites, each suite on every body whose kinds it accepts (:func:`supports`); a suite with a
    ``default_body`` names no body (``SpiderLegs2``)."""

    name = "paper"
    title = "env ids"
    form = re.compile(r"([A-Za-z][A-Za-z0-9]*?)(\d+)")

    def ids(self, registry: Any) -> list[str]:
        out = []
        for suite in registry.suites.values():
            for body in registry.bodies.values():
                if supports(suite, body):
                    stem = suite.name if suite.default_body == body.name else body.name + suite.name
                    out.extend(f"{stem}{level}" for level in suite.levels)
        return out

    def lookup(self, env_id: str, registry: Any) -> Task:
        reg = registry
        match = self.form.fullmatch(env_id) if isinstance(env_id, str) else None
        if match is None:
            raise ValueError(f"env id {env_id!r} is not of the form {{Body}}{{Suite}}{{Level}}, e.g. PointGoal1; "
                             f"valid ids: {', '.join(reg.env_ids())}")
        stem, level = match.group(1), int(match.group(2))
        candidates = [s for s in reg.suites if stem.endswith(s)]
        broken = [s for s in reg.rejected("suites") if stem.endswith(s)]
        if broken and not candidates:
            reg.get("suites", max(broken, key=len))  # raises the suite's contract error
        if not candidates:
            raise ValueError(f"env id {env_id!r} names no known suite; valid suites: {', '.join(sorted(reg.suites))}")
        suite_name = max(candidates, key=len)
        suite = reg.suites[suite_name]
        named = stem[: -len(suite_name)]
        if named and suite.default_body is not None:
            raise ValueError(
                f"env id {env_id!r}: {suite_name} ids name no body (its body is {suite.default_body}); "
                f"valid ids: {', '.join(f'{suite_name}{lv}' for lv in suite.levels)}"
            )
        body_name = named or suite.default_body
        if body_name is None:
            raise ValueError(f"env id {env_id!r} names no body; valid bodies: {', '.join(sorted(reg.bodies))}")
        body = reg.get("bodies", body_name)
        if not supports(suite, body):
            valid = sorted(b for b, cls in reg.bodies.items() if supports(suite, cls))
            raise ValueError(f"body {body_name!r} does not support suite {suite_name!r}; bodies for {suite_name}: "
                             f"{', '.join(valid)}")
        if level not in suite.levels:
            raise ValueError(f"level {level} is not a level of {suite_name}; valid levels: "
                             f"{', '.join(map(str, suite.levels))}")
        return body, suite, level


PAPER = PaperCatalogue()
"""The paper's catalogue: ``{Body}{Suite}{Level}`` over the registry's bodies and suites."""
