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
