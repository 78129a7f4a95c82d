"""Reading a real metrics page, as Prometheus would (its own text-format parser)."""

from __future__ import annotations

import urllib.request

from prometheus_client.parser import text_string_to_metric_families

#: A page's samples: (name, labels) -> value.
Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def scrape(url: str) -> Samples:
    """Every sample of the page at ``url``: (name, labels) -> value."""
    with urllib.request.urlopen(url, timeout=10) as page:
        assert page.headers["Content-Type"].startswith("text/plain; version=")
        text = page.read().decode()
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def total(samples: Samples, name: str, **labels: str) -> float:
    """The sum of ``name``'s samples whose labels include ``labels``."""
    wanted = set(labels.items())
    return sum(v for (found, have), v in samples.items() if found == name and wanted <= have)
