"""The site's partial plotly.js bundle (templates/assets/plotly.min.js, built by tools/plotly-bundle): the
plotly.js version plotly.py ships, exactly the trace types the charts use, its licences beside it."""

from __future__ import annotations

import json
import re
from pathlib import Path

from bs4 import BeautifulSoup

from helpers import plotly_py_folder, whole_plotly_js
from sitegen.site.html.render import PLOTLY_ASSET, PLOTLY_LICENCE, asset_bytes, plotly_bundle, plotly_style_guards

ROOT = Path(__file__).resolve().parent.parent
BUNDLE_TOOL = ROOT / "tools" / "plotly-bundle"
REBUILD = (
    "rebuild it: set plotly.js to {want} in tools/plotly-bundle/package.json, then "
    "`cd tools/plotly-bundle && npm install && npm run build` (tools/plotly-bundle/README.md)"
)


def registered_traces(bundle: bytes) -> set[str]:
    """The trace types a minified plotly.js bundle registers (each trace module says `moduleType:"trace"`)."""
    return {name.decode() for name in re.findall(rb'moduleType:"trace",name:"([a-z0-9]+)"', bundle)}


def plotly_py_js_version() -> str:
    """The plotly.js version the installed plotly.py ships, read as plotly.offline.get_plotlyjs_version() does."""
    source = (plotly_py_folder() / "offline" / "_plotlyjs_version.py").read_text(encoding="utf-8")
    found = re.search(r"__plotlyjs_version__\s*=\s*['\"]([^'\"]+)['\"]", source)
    assert found, "no __plotlyjs_version__ in plotly/offline/_plotlyjs_version.py"
    return found.group(1)


def test_the_bundle_is_the_plotly_js_version_plotly_py_ships() -> None:
    want = plotly_py_js_version()
    version, bundle = plotly_bundle()
    assert version == want, f"templates/assets/{PLOTLY_ASSET} is plotly.js {version}, plotly.py ships {want}: " + REBUILD.format(want=want)
    # The banner is written by the build script; plotly.js's own version module says the same.
    assert f'.version="{version}"'.encode() in bundle, "the bundle's code is another plotly.js than its banner says"
    pinned = json.loads((BUNDLE_TOOL / "package.json").read_text(encoding="utf-8"))["devDependencies"]["plotly.js"]
    locked = json.loads((BUNDLE_TOOL / "package-lock.json").read_text(encoding="utf-8"))["packages"]["node_modules/plotly.js"]
    assert pinned == locked["version"] == version, f"package.json pins {pinned}, the lock file {locked['version']}: " + REBUILD.format(want=want)


def test_the_bundle_has_exactly_the_trace_types_the_charts_use(site: Path) -> None:
    used: set[str] = set()
    for name in ("index.html", "history.html"):
        page = BeautifulSoup((site / name).read_text(encoding="utf-8"), "html.parser")
        for script in page.select('script[type="application/json"][id^="chart-"]'):
            used |= {trace["type"] for trace in json.loads(script.string)["data"]}
    assert used == {"scatter", "bar"}
    _, bundle = plotly_bundle()
    assert registered_traces(bundle) == used, "the bundle's trace types differ from the charts': edit TRACES in tools/plotly-bundle/build.mjs and rebuild"
    script = (BUNDLE_TOOL / "build.mjs").read_text(encoding="utf-8")
    listed = re.search(r"const TRACES = \[([^\]]*)\];", script)
    assert listed and set(re.findall(r"'([a-z0-9]+)'", listed.group(1))) == used


def test_the_whole_plotly_js_registers_more_trace_types() -> None:
    """registered_traces tells a partial bundle from the whole: plotly.py's bundle has far more."""
    assert {"scatter", "bar", "pie", "heatmap", "scattergl"} <= registered_traces(whole_plotly_js())


def test_style_guards_are_found_in_the_whole_plotly_js() -> None:
    """plotly_style_guards finds the ids plotly.js checks before injecting its map stylesheet."""
    bundle = whole_plotly_js()
    guards = plotly_style_guards(bundle)
    assert guards, "the whole plotly.js injects its map stylesheet unless the page declares its id"
    for guard in guards:  # each names the <style> element the bundle would otherwise create
        assert f'e.id="{guard}"'.encode() in bundle or f'setAttribute("id","{guard}")'.encode() in bundle


def test_the_bundle_injects_no_stylesheet_so_pages_declare_no_style_guards(site: Path) -> None:
    """Only the map subplot brings a stylesheet (maplibre's), which plotly would inject unless a page declares
    its guard id; the partial bundle has no map, so there is nothing to guard (and nothing the CSP refuses)."""
    _, bundle = plotly_bundle()
    assert plotly_style_guards(bundle) == ()
    assert b".maplibregl-" not in bundle
    for name in ("index.html", "history.html"):
        assert 'name="sitegen-style-guard"' not in (site / name).read_text(encoding="utf-8")


def test_the_bundle_ships_with_its_licences(site: Path) -> None:
    version, bundle = plotly_bundle()
    licence = asset_bytes(PLOTLY_LICENCE).decode("utf-8")
    assert bundle.startswith(b"//# allFunctionsCalledOnLoad\n")  # V8's compile hint must be the first line
    assert f"\n/*! plotly.js (sitegen partial: scatter, bar - minified) v{version}\n".encode() in bundle[:200]
    assert b".LICENSE.txt file of the same name beside this file" in bundle[:400]
    assert "plotly.js@" + version + " (MIT)" in licence
    assert "Permission is hereby granted, free of charge" in licence  # the MIT licence's text, not only its name
    for package in ("@plotly/d3@", "d3-format@", "polybooljs@"):
        assert package in licence
    assert "maplibre-gl" not in licence  # none of its code is in the bundle
    assets = site / "assets"
    assert (assets / f"plotly-{version}.min.js").read_bytes() == bundle
    assert (assets / f"plotly-{version}.LICENSE.txt").read_bytes() == licence.encode("utf-8")
