"""List pages that stay fast on tables of millions of rows.

Django's admin counts every list twice with COUNT(*) (the filtered list and the whole
table) and offers date drill-downs and facets that scan the table. Here:

- CappedCountPaginator counts at most a few pages beyond the one shown, with COUNT over a
  LIMIT subquery; past that the list says "more than N".
- FastListMixin uses it, never counts the whole table, and turns facets off.
- DayRangeFilter filters by Asia/Kolkata calendar days (from, to) instead of date_hierarchy,
  whose year list is a SELECT DISTINCT over the whole table.
"""
from __future__ import annotations

from datetime import date, timedelta

from django.contrib import admin
from django.contrib.admin.options import IncorrectLookupParameters, ShowFacets
from django.contrib.admin.views.main import PAGE_VAR
from django.core.paginator import Paginator
from django.utils.functional import cached_property

from gateway.console.kit.days import day_bounds, today

# Pages counted beyond the current one; a list shows at most this many page links ahead.
PAGES_AHEAD = 10


class AtLeast(int):
    """A count that was capped: compares as the number counted, reads as 'more than N'."""

    def __str__(self) -> str:
        return f"more than {int(self) - 1}"


class CappedCountPaginator(Paginator):
    def __init__(self, object_list, per_page, *, cap: int, **kwargs):
        super().__init__(object_list, per_page, orphans=0, allow_empty_first_page=True)
        self.cap = cap

    @cached_property
    def count(self) -> int:
        # SELECT COUNT(*) FROM (SELECT ... LIMIT cap): reads at most `cap` rows of the index.
        counted = self.object_list[: self.cap].count()
        return AtLeast(counted) if counted >= self.cap else counted


class FastListMixin:
    """For the ModelAdmin of a table that grows without bound."""

    show_full_result_count = False
    show_facets = ShowFacets.NEVER
    list_per_page = 50
    list_max_show_all = 200

    def get_paginator(self, request, queryset, per_page, orphans=0, allow_empty_first_page=True):
        try:
            page = max(1, int(request.GET.get(PAGE_VAR, 1)))
        except ValueError:
            page = 1
        # Above list_max_show_all, so that "show all" is never offered on a capped count.
        cap = max((page + PAGES_AHEAD) * per_page, self.list_max_show_all) + 1
        return CappedCountPaginator(queryset, per_page, cap=cap)


class DayRangeFilter(admin.FieldListFilter):
    """`(<datetime field>, DayRangeFilter)` in list_filter: quick choices (today, yesterday,
    the last 7 and 30 days) and a from/to form. Days are Asia/Kolkata calendar days; both
    ends are included."""

    template = "admin/console/day_range_filter.html"

    def __init__(self, field, request, params, model, model_admin, field_path):
        self.param_from = f"{field_path}_from"
        self.param_to = f"{field_path}_to"
        super().__init__(field, request, params, model, model_admin, field_path)
        self.title = f"{getattr(field, 'verbose_name', field_path)} (IST day)"
        self.day_from = self._day(self.param_from)
        self.day_to = self._day(self.param_to)

    def _day(self, param: str) -> date | None:
        value = self.used_parameters.get(param)
        if not value:
            return None
        value = value[-1] if isinstance(value, list) else value
        try:
            return date.fromisoformat(value)
        except ValueError:
            raise IncorrectLookupParameters(f"{param} must be a date, YYYY-MM-DD") from None

    def expected_parameters(self):
        return [self.param_from, self.param_to]

    def queryset(self, request, queryset):
        if self.day_from:
            queryset = queryset.filter(**{f"{self.field_path}__gte": day_bounds(self.day_from)[0]})
        if self.day_to:
            queryset = queryset.filter(**{f"{self.field_path}__lt": day_bounds(self.day_to)[1]})
        return queryset

    def choices(self, changelist):
        # The template gets no changelist: the from/to form's context travels on the filter.
        self.form = self.form_context(changelist)
        now = today()
        quick = [
            ("Any day", None, None),
            ("Today", now, now),
            ("Yesterday", now - timedelta(days=1), now - timedelta(days=1)),
            ("Last 7 days", now - timedelta(days=6), now),
            ("Last 30 days", now - timedelta(days=29), now),
        ]
        for label, first, last in quick:
            if first is None:
                query = changelist.get_query_string(remove=[self.param_from, self.param_to])
            else:
                query = changelist.get_query_string({self.param_from: first.isoformat(),
                                                     self.param_to: last.isoformat()})
            yield {"display": label, "query_string": query,
                   "selected": (self.day_from, self.day_to) == (first, last)}

    def form_context(self, changelist) -> dict:
        """What the from/to form needs: its fields and every other parameter of the page."""
        keep = {key: value for key, value in changelist.params.items()
                if key not in (self.param_from, self.param_to, PAGE_VAR)}
        return {"param_from": self.param_from, "param_to": self.param_to,
                "value_from": self.day_from.isoformat() if self.day_from else "",
                "value_to": self.day_to.isoformat() if self.day_to else "",
                "hidden": sorted(keep.items())}
