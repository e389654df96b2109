"""The HTML export as front ends ask for it: a build (plan file or shared JSON) with its verdicts, speed and sweep."""

from __future__ import annotations

from typing import Any, Optional


def build_html(data: Any, shared: Any, *, link: Optional[str] = None, token: Optional[str] = None,
               catalog: Any = None) -> str:
    """One self-contained page for `shared` (a SharedBuild read from `data`): a solved plan brings its own
    findings and speed; any other build is checked against the catalog (the prices every answer uses)."""
    from planner.plan_view import read_plan_view
    from planner.share.html_export import details_for, to_html

    view = read_plan_view(data)
    inputs = shared.inputs
    if view.gpu is not None:  # a solved plan: the solver's own verdicts
        speed = None if view.speed is None else view.speed.model_dump()
        details = details_for(speed=speed, gpus=view.gpu_count, inputs=inputs,
                              warnings=[f.to_json() for f in view.warnings],
                              unverified=[f.to_json() for f in view.unverified], link=link, token=token)
        return to_html(shared, details)
    from planner.service.catalogs import load_priced_catalog
    from planner.share.export import to_json_text
    from planner.share.importing import import_build

    cat = catalog if catalog is not None else load_priced_catalog()
    result = import_build(to_json_text(shared), cat, currency=shared.currency)
    rep = result.report
    if rep is None or result.unmatched:
        return to_html(shared, details_for(checked=False, link=link, token=token))
    js = rep.to_json()
    details = details_for(problems=js.get("problems", []), warnings=js.get("warnings", []),
                          unverified=js.get("unverified", []), gpus=view.gpu_count, inputs=inputs,
                          link=link, token=token)
    return to_html(shared, details)


EXPORT_FORMATS = ("md", "csv", "json", "html")


def export_build(build: Any, fmt: str, *, link: Optional[str] = None, token: Optional[str] = None,
                 details: Optional[dict[str, Any]] = None, source: Any = None, catalog: Any = None) -> str:
    """A shared build in one export format, the one use case behind `planner share` and the web UI's downloads:
    md (with the link, else the token), csv, json, or html (`details`: the verdicts and speed on show, as
    planner.share.html_export.details_for takes them; without them the page states the plan `source` brings, or
    checks the build against the catalog)."""
    from planner.share.export import to_csv, to_json_text, to_markdown

    if fmt == "md":
        return to_markdown(build, link=link, token=token)
    if fmt == "csv":
        return to_csv(build)
    if fmt == "json":
        return to_json_text(build)
    if fmt == "html":
        if details is not None:
            from planner.share.html_export import details_for, to_html

            return to_html(build, details_for(**details, link=link, token=token))
        import json

        data = source if source is not None else json.loads(to_json_text(build))
        return build_html(data, build, link=link, token=token, catalog=catalog)
    from planner.errors import InputError

    raise InputError(f"unknown export format {fmt!r}; use one of {', '.join(EXPORT_FORMATS)}")
