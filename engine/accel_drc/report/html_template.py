"""The HTML report's jinja2 template: the environment (autoescape on for every template, the
``si`` and ``num`` filters), the inlined CSS and JavaScript assets (refused if they hold a
closing script or style tag), and the template compiled ahead (``_report_template.py``, used
only when its key — the template's text, jinja2's version and the environment's options — is
today's; :func:`write_template_module` regenerates it, ``python -m accel_drc.regenerate``)."""

from __future__ import annotations

import functools
import hashlib
import logging
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup

from .html_format import fmt_num, fmt_si

log = logging.getLogger(__name__)

TEMPLATES = Path(__file__).resolve().parent / "templates"


#: the environment's options that change the compiled template (part of :func:`template_key`)
_ENV_OPTIONS: dict[str, Any] = {"autoescape": True, "trim_blocks": True, "lstrip_blocks": True}


_TEMPLATE_NAME = "report.html.j2"


#: the template compiled ahead, shipped beside this module (:func:`write_template_module`)

TEMPLATE_MODULE = Path(__file__).resolve().parent / "_report_template.py"


@functools.cache
def template() -> jinja2.Template:
    """The compiled report template, once per process.

    Compiling it is a noticeable share of a report's time (the KiCad plugin does it on its loader thread
    while KiCad is still sending the board), so the package ships it compiled ahead
    (``_report_template.py``, Python that jinja2 generated from ``report.html.j2``); it is used
    only when its key (:func:`template_key`: the template's text, jinja2's version and the
    environment's options) is the current one, else the template is compiled here as before."""
    env = environment()
    try:
        from . import _report_template as ahead

        source = (TEMPLATES / _TEMPLATE_NAME).read_text(encoding="utf-8")
        if getattr(ahead, "KEY", None) == template_key(source):
            return env.template_class.from_module_dict(env, vars(ahead), env.make_globals(None))
    except Exception:  # a stale, missing or broken module: compile, as without it
        log.debug("the template compiled ahead is not usable; compiling it", exc_info=True)
    return env.get_template(_TEMPLATE_NAME)


def template_key(source: str) -> str:
    """What the compiled template depends on: its text, jinja2's version, the options."""
    what = f"{jinja2.__version__}\0{sorted(_ENV_OPTIONS.items())!r}\0{source}"
    return hashlib.sha256(what.encode("utf-8")).hexdigest()


def template_module_source() -> str:
    """The text of ``_report_template.py``: jinja2's Python for the template, with its key."""
    source = (TEMPLATES / _TEMPLATE_NAME).read_text(encoding="utf-8")
    code = environment().compile(source, _TEMPLATE_NAME, _TEMPLATE_NAME, raw=True, defer_init=True)
    return (
        '"""report.html.j2 compiled by jinja2 (generated: do not edit).\n\n'
        "Regenerate after changing the template, jinja2 or the environment's options:\n"
        "``python -m accel_drc.regenerate``\n"
        "(a stale copy is ignored: the report compiles the template itself).\n"
        '"""\n\n'
        f"KEY = {template_key(source)!r}\n\n{code}\n"
    )


def write_template_module() -> None:
    """Regenerate ``_report_template.py`` from the template (see :func:`template`)."""
    TEMPLATE_MODULE.write_text(template_module_source(), encoding="utf-8")


def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        # autoescape on for every template, whatever its extension: the report is user text;
        # rows from other modules (extras) may lack a key: show it as empty, never crash
        undefined=jinja2.Undefined,
        **_ENV_OPTIONS,
    )
    env.filters["si"] = fmt_si
    env.filters["num"] = fmt_num
    return env


def read_asset(name: str) -> Markup:
    """Inline CSS/JS asset.  It is our own file, but a ``</`` inside it would still end the
    element early, so refuse it rather than emit a broken page."""
    text = (TEMPLATES / name).read_text(encoding="utf-8")
    if "</script" in text.lower() or "</style" in text.lower():
        raise ValueError(f"{name} must not contain a closing script/style tag")
    return Markup(text)
