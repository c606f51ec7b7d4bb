"""Django's template backend, less the reference cycle every page's render leaves behind.

``render(request, name, context)`` builds a ``RequestContext`` and pushes the view's dict
onto it as a ``ContextDict``, which points back at the context (django/template/context.py:
``ContextDict.context``). The context and the ``ContextDict`` form a cycle, so everything the
page rendered (its rows, stats, cells, model instances: 2,000-10,000 objects a page at
100,000 partitions) outlived the request until the cyclic collector found it, and that
collection, walking and freeing it, fell on a later request: 50-90 ms of wall time on the
2-core machine while the engine stepped, the p99 of the SPUs page, the overview and the
topic pages (issue 33, ``bench_pages.py --stepping``, "GC gen 2" lines). Emptying the
context's stack once the page is rendered breaks the cycle, so reference counting frees the
page's data at once.

Nothing reads the context after its render: the test client's copies (``response.context``)
are taken during it, with a stack of their own.
"""
from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from django.template import TemplateDoesNotExist
from django.template.backends import django as django_backend
from django.template.context import make_context
from django.utils.safestring import SafeString


class Template(django_backend.Template):
    def render(self, context: dict[str, Any] | None = None,
               request: HttpRequest | None = None) -> SafeString:
        made = make_context(context, request, autoescape=self.backend.engine.autoescape)
        try:
            return self.template.render(made)
        except TemplateDoesNotExist as exc:
            django_backend.reraise(exc, self.backend)
            raise  # reraise always raises; for the type checker
        finally:
            # The ContextDicts on the stack point back at ``made``: without them it is
            # no cycle, and the page's data goes with the last reference to it.
            made.dicts.clear()


class DjangoTemplates(django_backend.DjangoTemplates):
    """``BACKEND`` in settings.TEMPLATES: Django's engine, its templates as above."""

    def from_string(self, template_code: str) -> Template:
        return Template(self.engine.from_string(template_code), self)

    def get_template(self, template_name: str) -> Template:
        try:
            return Template(self.engine.get_template(template_name), self)
        except TemplateDoesNotExist as exc:
            django_backend.reraise(exc, self)
            raise
