"""Importing presidio, optionally without spaCy: a third of ``tracelake ingest``'s start-up.

``import presidio_analyzer`` imports spaCy (and with it thinc, numpy, weasel, requests) for its
NLP engines, and compiles four URL patterns of a few thousand alternatives each when its
predefined recognizers load. tracelake uses neither: its recognizers are pattern recognizers
(and the phone numbers' ``phonenumbers``) run without an ``AnalyzerEngine`` or an NLP engine
(:mod:`tracelake.scrub.analyzer`). Measured on a 2-core machine: 1.13-1.26 s for the import,
0.50 s without them (``python -X importtime``); ``ingest`` pays it once, on one core, before
its workers start.

The lean import serves a placeholder module for every ``spacy.*`` and ``thinc.*`` name (and
presidio's URL recognizer module and its country-specific recognizers but the Korean ones, the
only ones the scrubber runs: another 0.08 s; and tldextract's ``requests``, another 0.04 s)
while presidio is imported, then takes the placeholders out of ``sys.modules``: a later
``import spacy`` or ``import requests`` imports the real one. presidio's spaCy-based
engines are left holding placeholders, so the lean import is only for processes tracelake owns
(the ``tracelake`` command sets ``TRACELAKE_PRESIDIO_WITHOUT_SPACY=1``), never a runner's
process that embeds the sink and may use presidio or tldextract itself. It is not taken when
presidio, tldextract or spaCy is imported already, and it falls back to the plain import when anything in it fails.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import logging
import os
import sys
import types
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from tracelake.config import PRESIDIO_WITHOUT_SPACY

_TOPS = frozenset({"spacy", "thinc"})
# tldextract's HTTP client, for the public-suffix list that is never fetched here (the
# analyzer sets TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS="", so tldextract reads its bundled
# snapshot and only creates, then closes, a session it gives no URL): ~0.04 s of start-up.
_NETWORK = frozenset({"requests", "requests_file"})
_MODULES = frozenset({"presidio_analyzer.predefined_recognizers.generic.url_recognizer"})
_COUNTRIES = "presidio_analyzer.predefined_recognizers.country_specific."
_KEPT_COUNTRIES = frozenset({"korea"})
# What holds placeholders after a lean import: imported afresh after a failed one.
_LEAN_USERS = ("presidio_analyzer", "tldextract")
# What the scrubber imports from presidio (tracelake.scrub.analyzer).
_NEEDED = ("presidio_analyzer", "presidio_analyzer.predefined_recognizers")

log = logging.getLogger(__name__)


class _AbsentType(type):
    """The class of :class:`Absent`: any attribute is Absent, a call is Absent, and a call on
    one function (a decorator: ``@Language.factory(...)``) returns that function unchanged."""

    def __getattr__(cls, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return cls

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        if len(args) == 1 and not kwargs and callable(args[0]):
            return args[0]
        return cls


class Absent(metaclass=_AbsentType):
    """Whatever presidio takes from a placeholder module: a name, a base class, a decorator."""


class Placeholder(types.ModuleType):
    """A module of the lean import: every attribute is :class:`Absent`."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return Absent


def _stands_in(name: str) -> bool:
    """Whether the lean import serves a placeholder for the module *name*."""
    top = name.partition(".")[0]
    if top in _TOPS or top in _NETWORK or name in _MODULES:
        return True
    country = name.removeprefix(_COUNTRIES)
    return country != name and country.partition(".")[0] not in _KEPT_COUNTRIES


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: types.ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if _stands_in(fullname):
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        return Placeholder(spec.name)

    def exec_module(self, module: types.ModuleType) -> None:
        module.__path__ = []  # a package: its submodules are placeholders too


def lean_requested(env: Mapping[str, str] = os.environ) -> bool:
    return env.get(PRESIDIO_WITHOUT_SPACY, "").strip().lower() in ("1", "true", "yes")


def import_presidio() -> str:
    """Import what the scrubber uses of presidio: lean when ``PRESIDIO_WITHOUT_SPACY`` asks for
    it and nothing has imported presidio or spaCy yet. Returns ``"lean"`` or ``"plain"``."""
    taken = ("presidio_analyzer", "tldextract", *_TOPS)
    if lean_requested() and not any(name in sys.modules for name in taken):
        try:
            _import_lean()
            return "lean"
        except Exception as exc:  # noqa: BLE001 - any failure: the plain import below
            _forget(lambda name: name.partition(".")[0] in _LEAN_USERS)
            log.debug("presidio without spaCy failed (%r); importing it with spaCy", exc)
    for name in _NEEDED:
        importlib.import_module(name)
    return "plain"


def _import_lean() -> None:
    finder = _Finder()
    sys.meta_path.insert(0, finder)
    try:
        for name in _NEEDED:
            importlib.import_module(name)
    finally:
        sys.meta_path.remove(finder)
        # a later import of spaCy or requests imports the real one (one imported before
        # this import was never replaced: only placeholders are taken out)
        _forget(lambda name: isinstance(sys.modules[name], Placeholder))


def _forget(which: Callable[[str], bool]) -> None:
    for name in [n for n in sys.modules if which(n)]:
        del sys.modules[name]
